/**
 * One sync across real processes, traced: the importer and two refsync-api instances run from
 * their main.ts with tracing on, exporting OTLP/HTTP JSON to a loopback receiver (a stand-in for
 * a collector), and the importer downloads from a loopback upstream. The run, its upstream
 * downloads, its event and each refsync-api instance's cache invalidation must be one trace.
 */
import { createHash } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import { DATASETS, type Dataset } from '@nhp/refsync-contracts';
import { sampleDataPath } from '@nhp/refsync-sample-data';
import {
  sensitiveAttributes,
  startAppProcess,
  startOtlpReceiver,
  useTestInfra,
  waitFor,
  type AppProcess,
  type OtlpReceiver,
  type RecordedSpan,
} from '@nhp/shared-testing';

const infra = useTestInfra();
const ADMIN_TOKEN = 'tracing-test-admin-token';
const API_KEY = 'tracing-test-api-key';
const SERVER = 2;
const CLIENT = 3;
const PRODUCER = 4;
const CONSUMER = 5;

let receiver: OtlpReceiver;
let upstream: Server;
let upstreamUrl: string;
/** The headers of every upstream download, as the upstream received them. */
const downloads: IncomingHttpHeaders[] = [];
const processes: AppProcess[] = [];

const otelEnv = (service: string) => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
  OTEL_BSP_SCHEDULE_DELAY: '100',
  OTEL_RESOURCE_ATTRIBUTES: `service.instance.id=${service}`,
});

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  const bodies = Object.fromEntries(
    await Promise.all(
      DATASETS.map(async (d: Dataset) => [d, await readFile(sampleDataPath('v1', d))] as const),
    ),
  ) as Record<Dataset, Buffer>;
  upstream = createServer((req, res) => {
    downloads.push(req.headers);
    const dataset = DATASETS.find((d) => req.url === `/${d}.json`);
    if (!dataset) return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'application/json' }).end(bodies[dataset]);
  });
  await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
  upstreamUrl = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
}, 30_000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  await new Promise((resolve) => upstream.close(resolve));
  await receiver.stop();
}, 60_000);

function startApi(instance: string): Promise<AppProcess> {
  return startAppProcess({
    name: instance,
    entry: 'apps/refsync-api/src/main.ts',
    portVariable: 'REFSYNC_API_PORT',
    healthPath: '/readyz',
    env: {
      REFSYNC_API_HOST: '127.0.0.1',
      MONGO_URL: infra.get().mongoUri,
      NATS_URL: infra.get().natsUrl,
      LOG_LEVEL: 'info',
      REFSYNC_API_KEYS: `tracing-test:${createHash('sha256').update(API_KEY).digest('hex')}`,
      ...otelEnv(instance),
    },
  });
}

const inTrace = (traceId: string) => receiver.spans().filter((s) => s.traceId === traceId);

describe('a traced sync across the services', () => {
  it('when the importer commits a run, then the run, its downloads, its event and every refsync-api instance invalidating its cache are one trace, and no span holds a credential', async () => {
    const apis = [await startApi('refsync-api-1'), await startApi('refsync-api-2')];
    processes.push(...apis);
    // Both instances listen for the event before the importer's first run commits it.
    await Promise.all(apis.map((api) => api.waitForLog('nats connected')));

    const importer = await startAppProcess({
      name: 'refsync-importer',
      entry: 'apps/refsync-importer/src/main.ts',
      portVariable: 'REFSYNC_IMPORTER_PORT',
      healthPath: '/readyz',
      env: {
        REFSYNC_IMPORTER_HOST: '127.0.0.1',
        MONGO_URL: infra.get().mongoUri,
        NATS_URL: infra.get().natsUrl,
        LOG_LEVEL: 'info',
        REFSYNC_SOURCE_TREATMENT_GROUP: `${upstreamUrl}/treatmentGroup.json`,
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: `${upstreamUrl}/reimbursementGroup.json`,
        REFSYNC_SCHEDULE: '0 0 1 1 *',
        REFSYNC_PUBLISH_INTERVAL_MS: '250',
        REFSYNC_IMPORTER_ADMIN_TOKEN: ADMIN_TOKEN,
        ...otelEnv('refsync-importer'),
      },
    });
    processes.push(importer);
    // The worker's first run (nothing committed yet) commits version 1.
    const finished = await importer.waitForLog((l) => l['msg'] === 'run finished: committed');
    const runId = finished['runId'] as string;

    let run: RecordedSpan | undefined;
    let invalidations: RecordedSpan[] = [];
    await waitFor(
      'the run and both instances’ invalidation spans',
      () => {
        run = receiver
          .spans()
          .find(
            (s) => s.name === 'refsync-importer run' && s.attributes['refsync.run_id'] === runId,
          );
        invalidations = run
          ? inTrace(run.traceId).filter((s) => s.kind === CONSUMER && s.service === 'refsync-api')
          : [];
        return invalidations.length >= 2;
      },
      { timeoutMs: 30_000 },
    );

    const runSpan = run as RecordedSpan;
    const trace = inTrace(runSpan.traceId);
    // Each instance processed the event as a child of the run, and read the new version then.
    expect(invalidations.map((s) => s.parentSpanId)).toEqual([runSpan.spanId, runSpan.spanId]);
    expect(invalidations[0]?.name).toBe('process refsync.events.sync-completed');
    for (const invalidation of invalidations) {
      expect(
        trace.some(
          (s) =>
            s.parentSpanId === invalidation.spanId &&
            s.kind === CLIENT &&
            s.attributes['db.system.name'] === 'mongodb',
        ),
      ).toBe(true);
    }
    // The downloads are the run's CLIENT spans; the upstream saw their context and the run id.
    const fetches = trace.filter((s) => s.kind === CLIENT && s.name === 'GET');
    expect(fetches).toHaveLength(2);
    const runDownloads = downloads.filter((d) => d['x-request-id'] === runId);
    expect(runDownloads).toHaveLength(2);
    expect(runDownloads.map((d) => (d['traceparent'] as string).split('-')[2]).sort()).toEqual(
      fetches.map((s) => s.spanId).sort(),
    );
    // The publish ran in the outbox relay's loop: its own trace, linked to the run.
    const publish = receiver
      .spans()
      .find((s) => s.kind === PRODUCER && s.links.some((l) => l.spanId === runSpan.spanId));
    expect(publish?.name).toBe('publish refsync.events.sync-completed');

    // A request to refsync-api is traced too, by its route template.
    const res = await fetch(`${apis[0]?.url}/api/v1/treatmentGroup`, {
      headers: { 'x-api-key': API_KEY },
    });
    expect(res.status).toBe(200);
    await waitFor(
      'the request span',
      () =>
        receiver
          .spans()
          .some(
            (s) => s.kind === SERVER && s.attributes['http.route'] === '/api/v1/treatmentGroup',
          ),
      { timeoutMs: 10_000 },
    );

    expect(sensitiveAttributes(receiver.spans(), [ADMIN_TOKEN, API_KEY])).toEqual([]);
  }, 180_000);
});
