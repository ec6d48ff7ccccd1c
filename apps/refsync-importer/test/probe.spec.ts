import request from 'supertest';
import { mongoPing } from '@nhp/shared-persistence';
import { natsIsConnected } from '@nhp/shared-messaging';
import { useTestInfra } from '@nhp/shared-testing';
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

  it('when /metrics is scraped, then it serves runs by outcome, items by kind, duration, the committed version and pending events', async () => {
    await ctx.importer.run({ trigger: 'cli' });
    const res = await request(app).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/text\/plain/);
    const version = (await ctx.writeRepo.readState()).version;
    expect(res.text).toMatch(/refsync_importer_runs_total\{outcome="committed"\} [1-9]/);
    expect(res.text).toMatch(
      /refsync_importer_items_total\{dataset="treatmentGroup",kind="added"\} [1-9]/,
    );
    expect(res.text).toMatch(
      /refsync_importer_run_duration_seconds_count\{outcome="committed"\} [1-9]/,
    );
    expect(res.text).toContain(`refsync_importer_last_committed_version ${version}`);
    expect(res.text).toMatch(/refsync_importer_pending_events \d+/);
  });

  it('when an unknown path is requested, then it is a problem-details 404', async () => {
    const res = await request(app).get('/nope').expect(404);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  });
});
