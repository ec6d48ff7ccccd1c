import type { Server } from 'node:http';
import { SETTING_CHANGED_EVENT_TYPE } from '@nhp/privacy-contracts';
import type { Definition } from '@nhp/privacy-domain';
import { syntheticFnr } from '@nhp/privacy-testing';
import { closeServer, listen, serverPort } from '@nhp/shared-http';
import { Scrape, scrapeMetrics } from '@nhp/shared-testing';
import { createPrivacyApp, type PrivacyApp } from '../src/app';
import { createPrivacyContext } from '../src/context';
import { createPrivacyApiMetrics } from '../src/metrics';
import { PATHS } from './settings-fixtures';
import { TEST_CLIENT, TEMPLATES, usePrivacyHarness } from './support/harness';

/**
 * privacy-api's /metrics after a scripted scenario through a real server (fast path in front of
 * Express, as main.ts serves it), parsed as Prometheus parses it: every counter is asserted.
 */
const metrics = createPrivacyApiMetrics({ defaultMetrics: false });
const h = usePrivacyHarness({ metrics });

let app: PrivacyApp;
let server: Server;
let origin: string;

beforeAll(async () => {
  const { context, health, auth } = h.get();
  app = createPrivacyApp({ context, health, auth, metrics });
  server = await listen(app, 0, '127.0.0.1', { errorsFrom: app.express });
  origin = `http://127.0.0.1:${serverPort(server)}`;
});

afterAll(async () => {
  await closeServer(server, 1000);
});

let fnrSeq = 8100;
const nextFnr = () => syntheticFnr(fnrSeq++);

async function post(
  path: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${origin}${path}`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
  return { status: res.status, body: await res.json() };
}

async function seeded(): Promise<Definition> {
  // Replicated: its changes are published as events.
  const definition = await h.get().seedDefinition({
    template: TEMPLATES.reservasjon,
    replikering: true,
  });
  await h.get().grant(TEST_CLIENT, definition.partKode);
  return definition;
}

const bearer = async (options?: Parameters<ReturnType<typeof h.get>['token']>[0]) => ({
  Authorization: `Bearer ${await h.get().token(options)}`,
});
const statusBody = (def: Definition, fnr: string) => ({
  innbyggerFnr: fnr,
  definisjonGuid: def.definisjonGuid,
  partKode: def.partKode,
});
const setBody = (def: Definition, fnr: string) => ({
  ...statusBody(def, fnr),
  typePi: def.typePi,
  aktiv: true,
});

describe('GET /metrics', () => {
  it('when citizens are checked, set and refused, then requests, status checks by path, writes by outcome, refusals by reason, pages and events are counted', async () => {
    const def = await seeded();
    const fnr = nextFnr();
    const writer = await bearer();

    // Writes: a change, its exact repeat, and one refused for want of the write scope.
    expect((await post(PATHS.set, setBody(def, fnr), writer)).body).toMatchObject({
      instansEndret: 'endret',
    });
    expect((await post(PATHS.set, setBody(def, fnr), writer)).body).toMatchObject({
      instansEndret: 'ikkeEndret',
    });
    expect(
      (await post(PATHS.set, setBody(def, fnr), await bearer({ scopes: ['read'] }))).status,
    ).toBe(401);

    // Status checks: two by the fast path, one by Express (the debug header is Express's).
    expect((await post(PATHS.status, statusBody(def, fnr), writer)).status).toBe(200);
    expect((await post(PATHS.status, statusBody(def, nextFnr()), writer)).status).toBe(200);
    const viaExpress = await post(PATHS.status, statusBody(def, fnr), {
      ...writer,
      'X-hn-isdebug': 'true',
    });
    expect(viaExpress.status).toBe(200);

    // Refusals, one per reason the token check can give, and a definition without a grant
    // (which the fast path hands to Express: counted once).
    const ungranted = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
    expect((await post(PATHS.status, statusBody(ungranted, fnr), writer)).status).toBe(400);
    expect((await post(PATHS.status, statusBody(def, fnr))).status).toBe(401);
    expect(
      (await post(PATHS.status, statusBody(def, fnr), await bearer({ expiresInSec: -120 }))).status,
    ).toBe(401);
    expect(
      (await post(PATHS.status, statusBody(def, fnr), await bearer({ audience: 'someone-else' })))
        .status,
    ).toBe(401);
    const token = await h.get().token();
    const forged = `${token.slice(0, -6)}${token.endsWith('AAAAAA') ? 'BBBBBB' : 'AAAAAA'}`;
    expect(
      (await post(PATHS.status, statusBody(def, fnr), { Authorization: `Bearer ${forged}` }))
        .status,
    ).toBe(401);
    const key = await h.get().issuer.newDpopKey();
    const bound = await h.get().token({ dpopKey: key });
    const proof = await h.get().issuer.dpopProof({
      key,
      method: 'POST',
      url: `${origin}${PATHS.status}`,
      accessToken: bound,
    });
    const dpop = { Authorization: `DPoP ${bound}`, DPoP: proof };
    expect((await post(PATHS.status, statusBody(def, fnr), dpop)).status).toBe(200);
    expect((await post(PATHS.status, statusBody(def, fnr), dpop)).status).toBe(401);

    // One page of active citizens; a path no route serves, carrying an identity number.
    const page = await fetch(
      `${origin}${PATHS.active}?definisjonGuid=${def.definisjonGuid}&partKode=${def.partKode}`,
      { headers: writer },
    );
    expect(page.status).toBe(200);
    expect((await fetch(`${origin}/innbyggere/${fnr}`, { headers: writer })).status).toBe(404);
    await h.get().journalIdle();

    const scrape = await scrapeMetrics(origin);
    // Status checks by path (the DPoP one went the fast path too), so the share is a ratio.
    expect(scrape.value('privacy_api_status_checks_total', { path: 'fast' })).toBe(3);
    expect(scrape.value('privacy_api_status_checks_total', { path: 'express' })).toBe(1);
    expect(scrape.value('privacy_api_setting_writes_total', { outcome: 'endret' })).toBe(1);
    expect(scrape.value('privacy_api_setting_writes_total', { outcome: 'ikkeEndret' })).toBe(1);
    expect(scrape.value('privacy_api_setting_writes_total', { outcome: 'refused' })).toBe(1);
    expect(scrape.value('privacy_api_active_citizens_pages_total')).toBe(1);
    const refusals = (reason: string) =>
      scrape.value('privacy_api_auth_refusals_total', { reason });
    expect(refusals('scope')).toBe(1);
    expect(refusals('grant')).toBe(1);
    expect(refusals('missing')).toBe(1);
    expect(refusals('expired')).toBe(1);
    expect(refusals('audience')).toBe(1);
    expect(refusals('signature')).toBe(1);
    expect(refusals('replay')).toBe(1);
    expect(refusals('issuer')).toBe(0);
    expect(scrape.sum('privacy_api_auth_refusals_total')).toBe(7);

    // Requests by route template: fast path and Express answers of the status route together.
    const requests = (labels: Record<string, string>) =>
      scrape.value('privacy_api_http_requests_total', { method: 'POST', ...labels });
    expect(requests({ route: PATHS.status, status_class: '2xx' })).toBe(4);
    expect(requests({ route: PATHS.status, status_class: '4xx' })).toBe(6);
    expect(requests({ route: PATHS.set, status_class: '2xx' })).toBe(2);
    expect(
      scrape.histogram('privacy_api_http_request_duration_seconds', {
        method: 'POST',
        route: PATHS.status,
        status_class: '2xx',
      })?.count,
    ).toBe(4);
    expect(
      scrape.value('privacy_api_http_requests_total', { route: 'unmatched', status_class: '4xx' }),
    ).toBe(1);
    // No identity number, token or URL in any label.
    expect(scrape.text).not.toContain(fnr);
    expect(scrape.text).not.toContain('/innbyggere/');
    expect(scrape.text).not.toContain(token.slice(0, 20));

    // The change was published; the journal is empty; both connections are up.
    expect(
      scrape.value('privacy_api_events_published_total', { type: SETTING_CHANGED_EVENT_TYPE }),
    ).toBe(1);
    expect(
      scrape.value('privacy_api_events_publish_failed_total', { type: SETTING_CHANGED_EVENT_TYPE }),
    ).toBe(0);
    expect(scrape.value('privacy_api_outbox_pending_events')).toBe(0);
    expect(scrape.value('privacy_api_outbox_oldest_pending_age_seconds')).toBe(0);
    expect(scrape.value('privacy_api_mongodb_connected')).toBe(1);
    expect(scrape.value('privacy_api_nats_connected')).toBe(1);
  });

  it('when an instance writes without NATS, then its publish failures are counted and the journal backlog shows the pending event and its age', async () => {
    const { connection, context: shared } = h.get();
    // A second instance on the same database, whose NATS is down.
    const isolated = createPrivacyApiMetrics({ defaultMetrics: false });
    const offline = createPrivacyContext({
      logger: shared.logger,
      connection,
      nats: () => undefined,
      cacheTtlMs: 0,
      events: isolated.events,
    });
    isolated.watch({
      mongodb: () => true,
      nats: () => false,
      backlog: () => offline.journal.backlog(),
    });
    const def = await seeded();
    // The seeding's own journal entries (party, definition, grant) relayed by the shared
    // instance first: their pointers are the backlog until then.
    await shared.journal.idle();
    const offlineApp = createPrivacyApp({
      context: offline,
      health: h.get().health,
      auth: h.get().auth,
      metrics: isolated,
    });
    const offlineServer = await listen(offlineApp, 0, '127.0.0.1');
    try {
      const base = `http://127.0.0.1:${serverPort(offlineServer)}`;
      const res = await fetch(`${base}${PATHS.set}`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', ...(await bearer()) },
        body: JSON.stringify(setBody(def, nextFnr())),
      });
      expect(res.status).toBe(200);
      await offline.journal.idle();

      const scrape = new Scrape(await (await fetch(`${base}/metrics`)).text());
      expect(
        scrape.value('privacy_api_events_publish_failed_total', {
          type: SETTING_CHANGED_EVENT_TYPE,
        }),
      ).toBe(1);
      expect(
        scrape.value('privacy_api_events_published_total', { type: SETTING_CHANGED_EVENT_TYPE }),
      ).toBe(0);
      expect(scrape.value('privacy_api_outbox_pending_events')).toBe(1);
      expect(scrape.value('privacy_api_outbox_oldest_pending_age_seconds')).toBeGreaterThanOrEqual(
        0,
      );
      expect(scrape.value('privacy_api_nats_connected')).toBe(0);
    } finally {
      await closeServer(offlineServer, 1000);
      // The other instance relays what this one could not (a sweep, as its loop would).
      await shared.journal.sweep();
      await offline.journal.stop();
    }
  });
});
