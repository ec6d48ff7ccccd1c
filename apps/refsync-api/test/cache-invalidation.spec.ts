import request from 'supertest';
import { eventually, put, rg, startHarness, tg, TEST_KEY, type Harness } from './support/harness';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
  await harness.commit({
    treatmentGroup: [put(tg('TG-1', 'one'))],
    reimbursementGroup: [put(rg('R_1', 'one'))],
  });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

const full = (app: ReturnType<Harness['app']>) =>
  request(app).get('/api/v1/treatmentGroup').set('X-API-KEY', TEST_KEY).expect(200);

describe('response cache invalidation', () => {
  it('when the sync-completed event arrives over NATS, then the next response is current and stale entries are dropped', async () => {
    const app = harness.app({ versionCheckIntervalMs: 3_600_000 });
    const before = (await full(app)).body;
    const next = await harness.commit({ treatmentGroup: [put(tg('TG-event', 'via event'))] });

    // No event yet and no periodic check within the test: the cached version is still served.
    expect((await full(app)).body).toEqual(before);

    await harness.publishSyncCompleted(next);
    await eventually(() => app.versions.current() === next, 'the event was handled');
    const after = (await full(app)).body;
    expect(after.currentVersion).toBe(next);
    expect(after.items.map((i: { data: { id: string } }) => i.data.id)).toContain('TG-event');
    expect(app.responses.stats().versions).toEqual([next]); // entries of the old version are gone
  });

  it('when events are lost, then the periodic check makes the next response current', async () => {
    // No NATS at all: the only way to learn about the commit is the periodic check.
    const app = harness.app({ nats: undefined, versionCheckIntervalMs: 200 });
    await full(app);
    const next = await harness.commit({ treatmentGroup: [put(tg('TG-periodic', 'via check'))] });
    await eventually(
      async () => (await full(app)).body.currentVersion === next,
      'the periodic check saw the commit',
    );
    expect((await full(app)).body.items.map((i: { data: { id: string } }) => i.data.id)).toContain(
      'TG-periodic',
    );
  });

  it('when an event was missed but a request misses the cache, then it is computed at the stored version', async () => {
    const app = harness.app({ nats: undefined, versionCheckIntervalMs: 3_600_000 });
    const old = (await full(app)).body.currentVersion as number;
    const next = await harness.commit({ treatmentGroup: [put(tg('TG-miss', 'via miss'))] });
    const res = await request(app)
      .get(`/api/v1/treatmentGroup?sinceVersion=${old}`)
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    expect(res.body.currentVersion).toBe(next);
    expect(res.body.items.map((i: { data: { id: string } }) => i.data.id)).toEqual(['TG-miss']);
    expect((await full(app)).body.currentVersion).toBe(next); // the version moved for every key
  });

  it('when a sync changes only the other dataset, then this one reports the new version with no items (R6 and R7)', async () => {
    const app = harness.app();
    const before = (await full(app)).body.currentVersion as number;
    const next = await harness.commit(
      { reimbursementGroup: [put(rg('R_2', 'only reimbursement'))] },
      { publishEvent: true },
    );
    await eventually(() => app.versions.current() === next, 'the event was handled');
    const tgDiff = await request(app)
      .get(`/api/v1/treatmentGroup?sinceVersion=${before}`)
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    expect(tgDiff.body).toEqual({ currentVersion: next, items: [] });
    const rgDiff = await request(app)
      .get(`/api/v1/reimbursementGroup?sinceVersion=${before}`)
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    expect(rgDiff.body.items.map((i: { data: { id: string } }) => i.data.id)).toEqual(['R_2']);
  });
});
