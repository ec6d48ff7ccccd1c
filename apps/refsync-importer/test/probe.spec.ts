import { readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { gzipSync } from 'node:zlib';
import request from 'supertest';
import { closeServer, listen, serverPort } from '@nhp/shared-http';
import { mongoPing } from '@nhp/shared-persistence';
import { natsIsConnected } from '@nhp/shared-messaging';
import { asyncApiProblems, Scrape, useTestInfra } from '@nhp/shared-testing';
import { SYNC_COMPLETED_EVENT_TYPE } from '@nhp/refsync-contracts';
import type { ImporterContext } from '../src/context';
import { createProbeApp } from '../src/probe-app';
import {
  eventually,
  quietLogger,
  rg,
  startContext,
  testConfig,
  tg,
  upstreamDir,
  writeUpstream,
} from './helpers';

const infra = useTestInfra();
const TOKEN = 'a-test-admin-token-0123456789';

describe('probe server', () => {
  let files: Awaited<ReturnType<typeof upstreamDir>>;
  let ctx: ImporterContext;
  let app: ReturnType<typeof createProbeApp>['app'];
  let gate: { open(): void; wait: Promise<void> } | undefined;

  beforeAll(async () => {
    files = await upstreamDir();
    ctx = await startContext(
      testConfig(infra.get(), {
        REFSYNC_SOURCE_TREATMENT_GROUP: await writeUpstream(files.dir, 'tg.json', [
          tg('T1'),
          tg('T2'),
        ]),
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: await writeUpstream(files.dir, 'rg.json', [rg('R1')]),
      }),
      // Lets a test hold a run between staging and committing, to see 409 while it is in progress.
      { afterStaged: async () => gate?.wait },
    );
    await ctx.natsReady;
    app = createProbeApp({
      logger: quietLogger(),
      importer: ctx.importer,
      leases: ctx.leases,
      runs: ctx.runs,
      instance: ctx.instance,
      metrics: ctx.metrics,
      adminToken: TOKEN,
      checks: { mongodb: () => mongoPing(ctx.conn), nats: () => natsIsConnected(ctx.nats()) },
    }).app;
  });
  afterAll(async () => {
    gate?.open();
    await ctx.importer.idle();
    await ctx.close();
    await files.cleanup();
  });

  it('when the dependencies are up, then /health, /livez and /readyz answer 200', async () => {
    await request(app).get('/health').expect(200);
    await request(app).get('/livez').expect(200);
    const ready = await request(app).get('/readyz').expect(200);
    expect(JSON.stringify(ready.body)).toMatch(/mongodb/);
  });

  it('when /asyncapi.json is asked without a token, then the AsyncAPI 3 document of its events is served, the one written to docs/asyncapi', async () => {
    const written = JSON.parse(
      readFileSync(resolve(__dirname, '../../../docs/asyncapi/refsync-importer.json'), 'utf8'),
    ) as unknown;
    const res = await request(app).get('/asyncapi.json').expect(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.body).toEqual(written);
    expect(await asyncApiProblems(written)).toEqual([]);
  });

  it('when POST /sync has no or a wrong bearer token, then it answers 401 as problem details and starts nothing', async () => {
    const missing = await request(app).post('/sync').expect(401);
    expect(missing.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(missing.headers['www-authenticate']).toMatch(/^Bearer/);
    await request(app).post('/sync').set('Authorization', 'Bearer wrong').expect(401);
    await request(app).post('/sync').set('Authorization', `Basic ${TOKEN}`).expect(401);
    expect(ctx.importer.activeRunId).toBeUndefined();
  });

  it('when POST /sync has the token, then a run starts (202 with its id), a second request gets 409 until it ends, and ?wait=true answers 200 with the report', async () => {
    let open!: () => void;
    const wait = new Promise<void>((resolve) => (open = resolve));
    gate = { open, wait };
    await writeUpstream(files.dir, 'tg.json', [tg('T1'), tg('T2'), tg(`T${Date.now()}`)]);

    const started = await request(app)
      .post('/sync')
      .set('Authorization', `Bearer ${TOKEN}`)
      .expect(202);
    expect(started.body).toEqual({ runId: expect.any(String), status: 'started' });
    await eventually(() => ctx.importer.activeRunId === started.body.runId, 'the run to be active');
    const busy = await request(app)
      .post('/sync')
      .set('Authorization', `Bearer ${TOKEN}`)
      .expect(409);
    expect(busy.body).toMatchObject({ status: 409, title: expect.any(String) });
    expect(JSON.stringify(busy.body)).toContain(started.body.runId);

    gate.open();
    gate = undefined;
    await ctx.importer.idle();
    expect((await ctx.runs.get(started.body.runId))?.outcome).toBe('committed');
    expect(started.headers['location']).toBe(`/sync/${started.body.runId}`);
    const record = await request(app)
      .get(started.headers['location'])
      .set('Authorization', `Bearer ${TOKEN}`)
      .expect(200);
    expect(record.body).toMatchObject({
      runId: started.body.runId,
      outcome: 'committed',
      trigger: 'http',
    });
    await request(app).get(started.headers['location']).expect(401);
    await request(app).get('/sync/no-such-run').set('Authorization', `Bearer ${TOKEN}`).expect(404);

    const waited = await request(app)
      .post('/sync?wait=true')
      .set('Authorization', `Bearer ${TOKEN}`)
      .expect(200);
    expect(waited.body).toMatchObject({
      runId: expect.any(String),
      outcome: 'unchanged',
      trigger: 'http',
    });
  });

  it('when another instance holds the lease, then POST /sync answers 409 without starting a run', async () => {
    const other = await ctx.leases.acquire('someone-else', 60_000);
    expect(other.acquired).toBe(true);
    try {
      const res = await request(app)
        .post('/sync')
        .set('Authorization', `Bearer ${TOKEN}`)
        .expect(409);
      expect(res.body.detail).toMatch(/another importer instance/);
      expect(ctx.importer.activeRunId).toBeUndefined();
    } finally {
      await ctx.leases.release('someone-else');
    }
  });

  it('when a sync commits and its event is published, then /metrics counts the run, its items, the event and the requests by route, with an empty outbox and both connections up', async () => {
    const before = new Scrape((await request(app).get('/metrics').expect(200)).text);
    const committedBefore = before.value('refsync_importer_runs_total', { outcome: 'committed' });
    const publishedBefore = before.value('refsync_importer_events_published_total', {
      type: SYNC_COMPLETED_EVENT_TYPE,
    });
    // One item more than upstream has now (whatever earlier tests left there): a committed run.
    const current = JSON.parse(await readFile(join(files.dir, 'tg.json'), 'utf8')) as unknown[];
    await writeUpstream(files.dir, 'tg.json', [...current, tg(`M${Date.now()}`)]);
    await ctx.importer.run({ trigger: 'cli' });
    const version = (await ctx.writeRepo.readState()).version;
    // What the worker's publisher loop does after a commit (earlier tests' events go out too).
    const published = await ctx.publisher.publishPending();
    expect(published).toMatchObject({ pending: 0, duplicates: 0 });
    expect(published.published).toBeGreaterThanOrEqual(1);
    await request(app).post('/sync').expect(401);
    await request(app).get('/nope/01010012345').expect(404);

    const res = await request(app).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    const metrics = new Scrape(res.text);
    expect(metrics.value('refsync_importer_runs_total', { outcome: 'committed' })).toBe(
      (committedBefore ?? 0) + 1,
    );
    expect(
      metrics.value('refsync_importer_items_total', { dataset: 'treatmentGroup', kind: 'added' }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metrics.histogram('refsync_importer_run_duration_seconds', { outcome: 'committed' })?.count,
    ).toBe((committedBefore ?? 0) + 1);
    expect(metrics.value('refsync_importer_last_committed_version')).toBe(version);
    expect(
      metrics.value('refsync_importer_events_published_total', { type: SYNC_COMPLETED_EVENT_TYPE }),
    ).toBe((publishedBefore ?? 0) + published.published);
    expect(metrics.value('refsync_importer_outbox_pending_events')).toBe(0);
    expect(metrics.value('refsync_importer_outbox_oldest_pending_age_seconds')).toBe(0);
    expect(metrics.value('refsync_importer_nats_connected')).toBe(1);
    expect(metrics.value('refsync_importer_mongodb_connected')).toBe(1);
    expect(metrics.value('refsync_importer_ready')).toBe(1);
    // The run just committed: the last success is its end, and the lease it took is released.
    const lastRun = (await ctx.runs.recent(1))[0];
    expect(metrics.value('refsync_importer_last_success_timestamp_seconds')).toBe(
      (lastRun?.endedAt?.getTime() ?? 0) / 1000,
    );
    expect(metrics.value('refsync_importer_lease_overdue_seconds')).toBe(0);
    expect(metrics.value('refsync_importer_aborted_runs_total', { reason: 'mass_deletion' })).toBe(
      0,
    );
    // The old name is gone (README: renamed metrics).
    expect(metrics.family('refsync_importer_pending_events')).toBeUndefined();
    expect(
      metrics.value('refsync_importer_http_requests_total', {
        method: 'POST',
        route: '/sync',
        status_class: '4xx',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metrics.value('refsync_importer_http_requests_total', {
        route: '/metrics',
        status_class: '2xx',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(
      metrics.value('refsync_importer_http_requests_total', {
        route: 'unmatched',
        status_class: '4xx',
      }),
    ).toBeGreaterThanOrEqual(1);
    expect(metrics.text).not.toContain('01010012345');
  });

  it('when an unknown path is requested, then it is a problem-details 404', async () => {
    const res = await request(app).get('/nope').expect(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  });

  /** Sends bytes as they are (superagent would serialize a Buffer under a JSON type as JSON). */
  function withBytes(req: request.Test, bytes: Buffer): request.Test {
    const body = bytes as unknown as string;
    return req.serialize(() => body).send(body);
  }

  it.each(['gzip', 'br', 'deflate'])(
    'when POST /sync carries a body that says Content-Encoding: %s but is not, then 400 problem details with the request id, and no run starts',
    async (encoding) => {
      const res = await withBytes(
        request(app)
          .post('/sync')
          .set('Authorization', `Bearer ${TOKEN}`)
          .set('Content-Type', 'application/json')
          .set('Content-Encoding', encoding)
          .set('X-Request-Id', 'sync-enc'),
        Buffer.from('{}'),
      );
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
      expect(res.headers['x-request-id']).toBe('sync-enc');
      expect(JSON.parse(res.text)).toMatchObject({
        status: 400,
        code: 'MALFORMED_CONTENT_ENCODING',
        instance: '/sync',
      });
      expect(ctx.importer.activeRunId).toBeUndefined();
    },
  );

  it('when POST /sync carries a body in an encoding the importer does not decode, or JSON that is not text, then 415 / 400 problem details and no run starts', async () => {
    const compress = await withBytes(
      request(app)
        .post('/sync')
        .set('Authorization', `Bearer ${TOKEN}`)
        .set('Content-Type', 'application/json')
        .set('Content-Encoding', 'compress'),
      gzipSync(Buffer.from('{}')),
    );
    expect(compress.status).toBe(415);
    expect(JSON.parse(compress.text)).toMatchObject({ code: 'UNSUPPORTED_CONTENT_ENCODING' });
    const notText = await request(app)
      .post('/sync')
      .set('Authorization', `Bearer ${TOKEN}`)
      .set('Content-Type', 'application/json')
      .send('{"note":"\\udc00"}');
    expect(notText.status).toBe(400);
    expect(JSON.parse(notText.text)).toMatchObject({ code: 'MALFORMED_JSON' });
    expect(ctx.importer.activeRunId).toBeUndefined();
  });

  it('when POST /sync carries an Expect the importer cannot meet, or has no Host, then 417 / 400 problem details with a request id, and no run starts', async () => {
    const server = await listen(app, 0, '127.0.0.1');
    const exchange = (head: string) =>
      new Promise<{ head: string; body: string }>((resolve, reject) => {
        const socket = connect(serverPort(server), '127.0.0.1', () => socket.write(head));
        let text = '';
        socket.setEncoding('utf8');
        socket.on('data', (chunk: string) => (text += chunk));
        socket.on('close', () => {
          const split = text.indexOf('\r\n\r\n');
          resolve({ head: text.slice(0, split), body: text.slice(split + 4) });
        });
        socket.on('error', reject);
      });
    try {
      const expectation = await exchange(
        `POST /sync HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${TOKEN}\r\n` +
          'Expect: 102-processing\r\nX-Request-Id: sync-expect\r\nContent-Length: 0\r\n\r\n',
      );
      expect(expectation.head).toMatch(/^HTTP\/1\.1 417 /);
      expect(expectation.head).toMatch(/\r\nX-Request-Id: sync-expect\r\n/i);
      expect(JSON.parse(expectation.body)).toMatchObject({
        status: 417,
        code: 'EXPECTATION_FAILED',
        instance: '/sync',
      });
      const hostless = await exchange(
        `POST /sync HTTP/1.1\r\nAuthorization: Bearer ${TOKEN}\r\nContent-Length: 0\r\n\r\n`,
      );
      expect(hostless.head).toMatch(/^HTTP\/1\.1 400 /);
      expect(hostless.head.toLowerCase()).toMatch(/\r\nx-request-id: [0-9a-f-]{36}\r\n/);
      expect(JSON.parse(hostless.body)).toMatchObject({ status: 400, code: 'MISSING_HOST' });
      expect(ctx.importer.activeRunId).toBeUndefined();
    } finally {
      await closeServer(server, 0);
    }
  });
});
