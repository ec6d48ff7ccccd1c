/**
 * The alert rules (tools/observability/alert-rules.yml) against what they rest on:
 * - every metric a rule names, and every label it matches on, is in the real /metrics of the app
 *   it belongs to: the three apps run here as processes (as an operator runs them) on the
 *   project's MongoDB-compatible server and a real nats-server, and are scraped;
 * - every alert has a severity, a summary and a runbook_url to a section of docs/runbook.md that
 *   says what it means, how to confirm it, what to do and how to tell it is over;
 * - every alert has a promtool case that makes it fire and one that keeps it quiet
 *   (alert-rules.test.yml, which .ci/run runs with `promtool test rules`).
 * The rules' PromQL is read with Prometheus's own grammar (@prometheus-io/lezer-promql), not
 * matched with regular expressions.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parser } from '@prometheus-io/lezer-promql';
import { trustedIssuer, type TrustedIssuer } from '@nhp/privacy-testing';
import {
  scrapeMetrics,
  startAppProcess,
  useTestInfra,
  type AppProcess,
  type Scrape,
} from '@nhp/shared-testing';
import { parse as parseYaml } from 'yaml';

const ROOT = resolve(__dirname, '../../..');
const read = (path: string) => readFileSync(resolve(ROOT, path), 'utf8');

interface Rule {
  alert?: string;
  record?: string;
  expr: string;
  for?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}
interface RuleTest {
  alert_rule_test?: Array<{
    alertname: string;
    exp_alerts?: Array<{ exp_labels?: Record<string, string> }>;
  }>;
}

const rules = (
  parseYaml(read('tools/observability/alert-rules.yml')) as { groups: Array<{ rules: Rule[] }> }
).groups.flatMap((group) => group.rules);
interface Dashboard {
  uid: string;
  title: string;
  annotations: { list: Array<{ name: string; expr?: string; datasource?: { uid: string } }> };
  panels: Array<{
    id: number;
    type: string;
    title: string;
    gridPos: { x: number; y: number; w: number; h: number };
    datasource?: { uid: string };
    targets?: Array<{ expr?: string; datasource?: { uid: string } }>;
  }>;
}
const DASHBOARDS_DIR = 'tools/observability/grafana/dashboards';
const dashboards = (['privacy-api', 'refsync-api', 'refsync-importer'] as const).map(
  (job) => [job, JSON.parse(read(`${DASHBOARDS_DIR}/${job}.json`)) as Dashboard] as const,
);
/** Every PromQL query of a dashboard, its Grafana variables given a value. */
const queriesOf = (dashboard: Dashboard): string[] =>
  [
    ...dashboard.panels.flatMap((panel) => (panel.targets ?? []).map((target) => target.expr)),
    ...dashboard.annotations.list.map((annotation) => annotation.expr),
  ]
    .filter((expr): expr is string => typeof expr === 'string')
    .map((expr) => expr.replace(/\$__(rate_interval|interval|range)/g, '5m'));

const alerts = rules.filter((rule): rule is Rule & { alert: string } => Boolean(rule.alert));
const ruleTests = (
  parseYaml(read('tools/observability/alert-rules.test.yml')) as {
    tests: RuleTest[];
  }
).tests.flatMap((test) => test.alert_rule_test ?? []);

/** Series Prometheus makes itself (for every target, for every alert); no app exports them. */
const PROMETHEUS_SERIES = new Set(['up', 'ALERTS']);
/** Labels Prometheus puts on every scraped series (the target's); no app exports them. */
const TARGET_LABELS = new Set(['job', 'instance']);
/** The app each metric prefix belongs to (the apps' naming scheme, README "Metrics"). */
const APPS = {
  privacy_api_: 'privacy-api',
  refsync_api_: 'refsync-api',
  refsync_importer_: 'refsync-importer',
} as const;
type AppName = (typeof APPS)[keyof typeof APPS];

interface Selector {
  metric: string;
  labels: string[];
}

/** The vector selectors of a PromQL expression: each metric name and the labels matched on it. */
function selectorsOf(expr: string): Selector[] {
  const selectors: Selector[] = [];
  const errors: string[] = [];
  let current: Selector | undefined;
  parser.parse(expr).iterate({
    enter(node) {
      if (node.type.isError) errors.push(`at ${node.from}: "${expr.slice(node.from, node.to)}"`);
      const text = expr.slice(node.from, node.to);
      if (node.name === 'VectorSelector') current = { metric: '', labels: [] };
      else if (current && node.name === 'Identifier') current.metric = text;
      else if (current && node.name === 'LabelName') current.labels.push(text);
    },
    leave(node) {
      if (node.name === 'VectorSelector' && current) {
        selectors.push(current);
        current = undefined;
      }
    },
  });
  if (errors.length > 0) throw new Error(`PromQL does not parse: ${errors.join('; ')}\n${expr}`);
  return selectors;
}

/** What a rule names that the scrapes do not have, in words (empty when everything is there). */
function missingFrom(scrapes: ReadonlyMap<AppName, Scrape>, expr: string): string[] {
  const missing: string[] = [];
  for (const { metric, labels } of selectorsOf(expr)) {
    if (PROMETHEUS_SERIES.has(metric)) continue;
    const prefix = (Object.keys(APPS) as Array<keyof typeof APPS>).find((p) =>
      metric.startsWith(p),
    );
    // An app's own metric must be in its scrape; a shared one (process_*, nodejs_*) in every one.
    const owners = prefix ? [APPS[prefix]] : [...scrapes.keys()];
    for (const app of owners) {
      const scrape = scrapes.get(app);
      if (!scrape?.family(metric)) {
        missing.push(`${metric} is not in ${app}'s /metrics`);
        continue;
      }
      const present = new Set(scrape.labelSets(metric).flatMap((set) => Object.keys(set)));
      for (const label of labels) {
        if (!TARGET_LABELS.has(label) && !present.has(label)) {
          missing.push(`${metric} of ${app} has no label "${label}"`);
        }
      }
    }
  }
  return missing;
}

/** GitHub's anchor of a heading (lowercase, spaces to dashes, punctuation dropped). */
const anchorOf = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9 -]/g, '')
    .replace(/ /g, '-');

describe('alert rules: runbook, severities and promtool cases', () => {
  const runbook = read('docs/runbook.md');
  const sections = new Map(
    runbook
      .split(/^## /m)
      .slice(1)
      .map((section) => [anchorOf(section.split('\n')[0] ?? ''), section] as const),
  );

  it('when the rules are read, then there are alerts for every app', () => {
    const jobs = new Set(
      alerts.flatMap((alert) =>
        selectorsOf(alert.expr).map(
          ({ metric }) =>
            Object.entries(APPS).find(([prefix]) => metric.startsWith(prefix))?.[1] ?? metric,
        ),
      ),
    );
    expect([...jobs]).toEqual(expect.arrayContaining(['up', ...Object.values(APPS)]));
  });

  it.each(alerts.map((alert) => [alert.alert, alert] as const))(
    'when alert %s is read, then it has a severity, a summary and a runbook section that says what it means, how to confirm, what to do and how to tell it is over',
    (_name, alert) => {
      expect(['critical', 'warning']).toContain(alert.labels?.['severity']);
      expect(alert.annotations?.['summary']?.length ?? 0).toBeGreaterThan(20);
      const url = alert.annotations?.['runbook_url'] ?? '';
      const anchor = /^docs\/runbook\.md#([a-z0-9-]+)$/.exec(url)?.[1];
      expect(anchor).toBe(anchorOf(alert.alert));
      const section = sections.get(anchor as string);
      expect(section).toBeDefined();
      for (const part of [
        '**What it means.**',
        '**How to confirm.**',
        '**What to do.**',
        '**How to tell it is over.**',
      ]) {
        expect(section).toContain(part);
      }
    },
  );

  it('when the runbook is read, then each of its sections belongs to an alert', () => {
    const anchors = new Set(alerts.map((alert) => anchorOf(alert.alert)));
    expect([...sections.keys()].filter((anchor) => !anchors.has(anchor))).toEqual([]);
  });

  it.each(alerts.map((alert) => [alert.alert] as const))(
    'when the promtool cases are read, then %s has one that fires it (keeping its job label, for the dashboards) and one that keeps it quiet',
    (name) => {
      const cases = ruleTests.filter((test) => test.alertname === name);
      const firing = cases.filter((test) => (test.exp_alerts ?? []).length > 0);
      expect(firing.length).toBeGreaterThan(0);
      expect(cases.some((test) => (test.exp_alerts ?? []).length === 0)).toBe(true);
      for (const test of firing) {
        for (const expected of test.exp_alerts ?? []) {
          expect(expected.exp_labels?.['job']).toBeDefined();
        }
      }
    },
  );
});

describe('Grafana dashboards', () => {
  const datasources = read('tools/observability/grafana/provisioning/datasources/datasources.yaml');

  it.each(dashboards)(
    'when the %s dashboard is read, then it is provisionable (its uid, unique panel ids within the 24-column grid, provisioned data sources) and shows its alerts as a panel and as annotations',
    (job, dashboard) => {
      expect(dashboard.uid).toBe(`nhp-${job}`);
      const ids = dashboard.panels.map((panel) => panel.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const panel of dashboard.panels) {
        expect(panel.gridPos.x + panel.gridPos.w).toBeLessThanOrEqual(24);
        for (const uid of [
          panel.datasource?.uid,
          ...(panel.targets ?? []).map((t) => t.datasource?.uid),
        ]) {
          if (uid) expect(datasources).toContain(`uid: ${uid}`);
        }
      }
      const alertQuery = `ALERTS{job="${job}"}`;
      expect(
        dashboard.panels.some((panel) =>
          panel.targets?.some((target) => target.expr === alertQuery),
        ),
      ).toBe(true);
      expect(dashboard.annotations.list).toContainEqual(
        expect.objectContaining({
          name: 'Alerts',
          expr: `ALERTS{job="${job}", alertstate="firing"}`,
        }),
      );
    },
  );
});

describe('alert rules against the apps’ real /metrics', () => {
  const infra = useTestInfra();
  const processes: AppProcess[] = [];
  const scrapes = new Map<AppName, Scrape>();
  let issuer: TrustedIssuer | undefined;

  beforeAll(async () => {
    const { mongoUri, natsUrl } = infra.get();
    issuer = await trustedIssuer();
    const shared = { MONGO_URL: mongoUri, NATS_URL: natsUrl };
    const sample = (file: string) =>
      pathToFileURL(resolve(ROOT, 'tools/refsync-sample-data/data/v1', file)).href;
    const started = await Promise.allSettled([
      startAppProcess({
        name: 'privacy-api',
        entry: 'apps/privacy-api/src/main.ts',
        portVariable: 'PRIVACY_API_PORT',
        env: {
          ...shared,
          PRIVACY_API_HOST: '127.0.0.1',
          ...issuer.env,
        },
        startTimeoutMs: 120_000,
      }),
      startAppProcess({
        name: 'refsync-api',
        entry: 'apps/refsync-api/src/main.ts',
        portVariable: 'REFSYNC_API_PORT',
        healthPath: '/readyz',
        env: { ...shared, REFSYNC_API_HOST: '127.0.0.1' },
        startTimeoutMs: 120_000,
      }),
      startAppProcess({
        name: 'refsync-importer',
        entry: 'apps/refsync-importer/src/main.ts',
        portVariable: 'REFSYNC_IMPORTER_PORT',
        healthPath: '/readyz',
        env: {
          ...shared,
          REFSYNC_IMPORTER_HOST: '127.0.0.1',
          REFSYNC_SOURCE_TREATMENT_GROUP: sample('treatment-groups.json'),
          REFSYNC_SOURCE_REIMBURSEMENT_GROUP: sample('reimbursement-groups.json'),
          REFSYNC_SCHEDULE: '0 0 1 1 *',
          LOG_LEVEL: 'info',
        },
        startTimeoutMs: 120_000,
      }),
    ]);
    for (const result of started) if (result.status === 'fulfilled') processes.push(result.value);
    const failed = started.find((result) => result.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;

    // The worker's first run (nothing committed yet), so the run histogram has its series.
    const importer = processes.find((app) => app.name === 'refsync-importer');
    await importer?.waitForLog((line) => line['msg'] === 'run finished: committed');

    for (const app of processes) {
      // A request first, so the request series exist; the second scrape also counts the first.
      await fetch(`${app.url}/health`);
      await scrapeMetrics(app.url);
      scrapes.set(app.name as AppName, await scrapeMetrics(app.url));
    }
  }, 180_000);

  afterAll(async () => {
    await Promise.all(processes.map((app) => app.stop()));
    await issuer?.dispose();
  }, 60_000);

  it('when a rule names a metric or a label no app exports, then the check names it', () => {
    expect(
      missingFrom(
        scrapes,
        'privacy_api_no_such_total > 0 or refsync_importer_ready{no_such_label="x"} == 0',
      ),
    ).toEqual([
      "privacy_api_no_such_total is not in privacy-api's /metrics",
      'refsync_importer_ready of refsync-importer has no label "no_such_label"',
    ]);
  });

  it.each(dashboards)(
    'when the %s dashboard is read, then every metric and label its queries name is in the real /metrics of its app',
    (_job, dashboard) => {
      expect(scrapes.size).toBe(3);
      expect(queriesOf(dashboard).flatMap((query) => missingFrom(scrapes, query))).toEqual([]);
    },
  );

  it.each(rules.map((rule) => [rule.alert ?? rule.record, rule] as const))(
    'when rule %s is read, then every metric and label it names is in the real /metrics of its app',
    (_name, rule) => {
      expect(scrapes.size).toBe(3);
      expect(missingFrom(scrapes, rule.expr)).toEqual([]);
    },
  );
});
