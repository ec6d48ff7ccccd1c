/**
 * Several privacy-api instances on one database and one NATS, as behind a load balancer: they
 * behave as one (a DPoP proof is accepted once across all of them).
 */
import { randomUUID } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import { connect } from '@nats-io/transport-node';
import { announceChanges, createGrantRepository, createJournal } from '@nhp/privacy-data-access';
import { createLogger } from '@nhp/shared-logger';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import {
  scrapeMetrics,
  startNatsServer,
  useTestInfra,
  withDatabase,
  type NatsServerProcess,
} from '@nhp/shared-testing';
import { runApp, trustedIssuer, type AppProcess, type TrustedIssuer } from './support/app-process';

const infra = useTestInfra();
const STATUS_PATH = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
const SET_PATH = '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2';
const silent = createLogger({ name: 'instances-test', level: 'silent' });
let mongoUrl: string;

/** Polls `check` (every 50 ms, up to 30 s) until it is true; false if it never is. */
async function eventually(check: () => Promise<boolean>): Promise<boolean> {
  for (let i = 0; i < 600; i++) {
    if (await check()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return false;
}
const STATUS_BODY = JSON.stringify({
  innbyggerFnr: '13116900216',
  definisjonGuid: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4eaa',
  partKode: 'helsenorge',
});

let trust: TrustedIssuer;
let nats: NatsServerProcess;
const apps: AppProcess[] = [];

beforeAll(async () => {
  trust = await trustedIssuer();
  nats = await startNatsServer();
  mongoUrl = withDatabase(infra.get().mongoUri, `${infra.get().dbName}_instances`);
  const env = {
    ...trust.env,
    MONGO_URL: mongoUrl,
    NATS_URL: nats.url,
    PRIVACY_DPOP_REPLAY_STORE: 'nats',
    // Cached definitions and grants outlive the test: only the announcement of a change can make
    // an instance see it (so the test shows the announcement works without timing anything).
    PRIVACY_CACHE_TTL_MS: '3600000',
  };
  // One after the other: the first creates the indexes and the built-in data.
  for (let i = 0; i < 2; i++) {
    const app = await runApp(env);
    apps.push(app);
    expect(await app.healthy()).toBe(true);
  }
}, 90_000);

afterAll(async () => {
  await Promise.all(apps.map((a) => a.stop()));
  await nats?.dispose();
  await trust?.dispose();
});

/** A DPoP-bound admin token and one proof, for a status check at `app`. */
async function dpopRequest(app: AppProcess) {
  const key = await trust.issuer.newDpopKey();
  const token = await trust.issuer.mint({ scopes: ['read', 'admin'], dpopKey: key });
  const proof = await trust.issuer.dpopProof({
    key,
    method: 'POST',
    url: `${app.url}${STATUS_PATH}`,
    accessToken: token,
  });
  return { token, proof };
}

function send(app: AppProcess, token: string, proof: string) {
  return fetch(`${app.url}${STATUS_PATH}`, {
    method: 'POST',
    headers: { authorization: `DPoP ${token}`, dpop: proof, 'content-type': 'application/json' },
    body: STATUS_BODY,
  });
}

/** The request a load balancer forwards: to `app`, with the Host the client addressed. */
function postWithHost(app: AppProcess, host: string, token: string, proof: string) {
  return new Promise<{ status: number; body: unknown }>((resolve, reject) => {
    const req = httpRequest(
      {
        host: '127.0.0.1',
        port: app.port,
        path: STATUS_PATH,
        method: 'POST',
        headers: {
          host,
          authorization: `DPoP ${token}`,
          dpop: proof,
          'content-type': 'application/json',
        },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => (text += c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
      },
    );
    req.on('error', reject);
    req.end(STATUS_BODY);
  });
}

describe('privacy-api instances behind one load balancer', () => {
  it('when a DPoP proof accepted by one instance is sent to another, then the other refuses it as a replay', async () => {
    const [a, b] = apps as [AppProcess, AppProcess];
    // Both instances answer the same origin behind a balancer; here each has its own port, so the
    // proof names the port of the instance it is first sent to, and the replay goes to the other
    // with the same htu: a balancer's Host header is the same for both.
    const { token, proof } = await dpopRequest(a);
    expect((await send(a, token, proof)).status).toBe(200);
    const replay = await postWithHost(b, `127.0.0.1:${a.port}`, token, proof);
    expect(replay.status).toBe(401);
    expect(replay.body).toMatchObject({
      code: 'EPVK-100401',
      message: expect.stringContaining('used before'),
    });
  });

  it('when each instance gets its own fresh proof, then both accept', async () => {
    for (const app of apps) {
      const { token, proof } = await dpopRequest(app);
      expect((await send(app, token, proof)).status).toBe(200);
    }
  });

  it('when a grant is revoked elsewhere or a definition is made inactive on one instance, then every instance applies it before its cache would expire', async () => {
    const [a, b] = apps as [AppProcess, AppProcess];
    const admin = `Bearer ${await trust.issuer.mint({ scopes: ['admin'] })}`;
    const partKode = `INST${Date.now().toString(36).toUpperCase()}`;
    const definisjonGuid = randomUUID();
    const post = (app: AppProcess, path: string, body: unknown, auth = admin, method = 'POST') =>
      fetch(`${app.url}${path}`, {
        method,
        headers: { authorization: auth, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
    expect((await post(a, '/part/v1', { partKode, navn: 'Instances' })).status).toBe(201);
    const created = await post(a, '/innstillingdefinisjon/v1', {
      definisjonMalGuid: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e02',
      definisjonGuid,
      partKode,
      navn: 'Reservasjon',
    });
    expect(created.status).toBe(201);

    // The admin tool's repository, announcing on the same NATS as it does.
    const nc = await connect({ servers: nats.url });
    const connection = await connectMongo({ uri: mongoUrl, logger: silent });
    try {
      const journal = createJournal({ connection, logger: silent });
      const grants = createGrantRepository({
        connection,
        journal,
        cacheTtlMs: 0,
        onChanged: announceChanges(() => nc, 'grant', silent),
      });
      const audit = { actor: { kind: 'admin' as const, id: 'test' } };
      await grants.set('reader', partKode, { read: true, write: false }, audit);
      const reader = `Bearer ${await trust.issuer.mint({ clientId: 'reader', scopes: ['read'] })}`;
      const status = { innbyggerFnr: '13116900216', definisjonGuid, partKode };
      // Both instances have the grant cached now (for an hour: PRIVACY_CACHE_TTL_MS above).
      for (const app of [a, b]) {
        expect((await post(app, STATUS_PATH, status, reader)).status).toBe(200);
      }
      await grants.revoke('reader', partKode, audit);
      for (const app of [a, b]) {
        const refused = await eventually(
          async () => (await post(app, STATUS_PATH, status, reader)).status === 400,
        );
        expect(refused).toBe(true);
      }
      await journal.idle();

      // A definition made inactive through one instance: the other refuses new settings at once.
      const writer = `Bearer ${await trust.issuer.mint({ scopes: ['write', 'admin'] })}`;
      const set = { ...status, aktiv: true };
      expect((await post(b, SET_PATH, set, writer)).status).toBe(200);
      expect(
        (
          await post(
            a,
            '/innstillingdefinisjon/v1',
            { definisjonGuid, status: 'inaktiv' },
            admin,
            'PATCH',
          )
        ).status,
      ).toBe(204);
      const inactive = await eventually(async () => {
        const res = await post(b, SET_PATH, { ...set, aktiv: false }, writer);
        return (
          res.status === 400 && ((await res.json()) as { code: string }).code === 'EPVK-101501'
        );
      });
      expect(inactive).toBe(true);
    } finally {
      await nc.close();
      await closeMongo(connection);
    }
  }, 60_000);

  it('when NATS is down, then DPoP requests are refused with EPVK-100503 instead of being accepted unchecked, and Bearer requests go on', async () => {
    const [a] = apps as [AppProcess];
    await nats.stop();
    try {
      const { token, proof } = await dpopRequest(a);
      const refused = await send(a, token, proof);
      expect(refused.status).toBe(500);
      expect(await refused.json()).toMatchObject({
        code: 'EPVK-100503',
        errorCategory: 'EndpointIsDown',
      });
      // Counted as an outage of the replay store (the alert rules read it), not as a refusal;
      // the instance stays ready (readiness depends on MongoDB only).
      const scrape = await scrapeMetrics(a.url);
      expect(
        scrape.value('privacy_api_auth_unavailable_total', { dependency: 'dpop_replay_store' }),
      ).toBe(1);
      expect(scrape.value('privacy_api_auth_unavailable_total', { dependency: 'jwks' })).toBe(0);
      expect(scrape.value('privacy_api_ready')).toBe(1);
      const bearer = await fetch(`${a.url}${STATUS_PATH}`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${await trust.issuer.mint({ scopes: ['read', 'admin'] })}`,
          'content-type': 'application/json',
        },
        body: STATUS_BODY,
      });
      expect(bearer.status).toBe(200);
    } finally {
      await nats.restart();
    }
    // Once NATS is back, DPoP works again without a restart.
    let ok = false;
    for (let i = 0; i < 100 && !ok; i++) {
      const { token, proof } = await dpopRequest(a);
      ok = (await send(a, token, proof)).status === 200;
      if (!ok) await new Promise((r) => setTimeout(r, 200));
    }
    expect(ok).toBe(true);
  }, 60_000);
});
