import request from 'supertest';
import { DATASET_ROUTES } from '@nhp/refsync-read';
import type { RefsyncApp } from '../src/app';
import { del, put, rg, startHarness, tg, TEST_KEY, type Harness } from './support/harness';

/** Every selection a reader can make: four paths, full list and two diffs. */
const READS = DATASET_ROUTES.flatMap((r) =>
  ['', `?${r.sinceParam}=0`, `?${r.sinceParam}=1`].map((q) => `${r.path}${q}`),
);

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

/** Reads everything from storage (cache dropped, version re-read), as raw bytes. */
async function readAll(app: RefsyncApp): Promise<Record<string, string>> {
  app.responses.clear();
  await app.versions.refresh('request');
  const bodies: Record<string, string> = {};
  for (const path of READS) {
    const res = await request(app)
      .get(path)
      .set('X-API-KEY', TEST_KEY)
      .set('Accept-Encoding', 'identity')
      .expect(200);
    bodies[path] = res.text;
  }
  return bodies;
}

describe('consistency without transactions', () => {
  it('when a change set is staged but not committed, then every read, interleaved with the staging, returns exactly version V', async () => {
    const app = harness.app();
    const v1 = await harness.commit({
      treatmentGroup: [put(tg('TG-a', 'A')), put(tg('TG-b', 'B')), put(tg('TG-c', 'C'))],
      reimbursementGroup: [put(rg('R_1', 'one')), put(rg('R_2', 'two'))],
    });
    const atV1 = await readAll(app);
    expect(JSON.parse(atV1['/api/v1/treatmentGroup'] as string).currentVersion).toBe(v1);

    await harness.writer.recover();
    const committedAt = new Date();
    await harness.writer.stageChanges(
      v1 + 1,
      'treatmentGroup',
      [put(tg('TG-a', 'A2')), del('TG-b'), put(tg('TG-d', 'D'))],
      committedAt,
    );
    expect(await readAll(app)).toEqual(atV1);

    // Reads racing a larger staging write.
    const many = Array.from({ length: 300 }, (_, i) =>
      put(rg(`R_x${String(i).padStart(3, '0')}`, `x${i}`)),
    );
    const staging = harness.writer.stageChanges(
      v1 + 1,
      'reimbursementGroup',
      [...many, del('R_2')],
      committedAt,
    );
    let rounds = 0;
    let done = false;
    void staging.finally(() => (done = true));
    while (!done || rounds === 0) {
      expect(await readAll(app)).toEqual(atV1);
      rounds++;
    }
    await staging;
    expect(await readAll(app)).toEqual(atV1);

    await harness.writer.commit({
      expectedVersion: v1,
      nextVersion: v1 + 1,
      committedAt,
      event: {
        id: `test-${v1 + 1}`,
        subject: 'refsync.events.sync-completed',
        payload: {},
        createdAt: committedAt,
        publishedAt: null,
      },
    });
    await app.versions.refresh('event');
    const diff = (
      await request(app)
        .get(`/api/v1/treatmentGroup?sinceVersion=${v1}`)
        .set('X-API-KEY', TEST_KEY)
        .expect(200)
    ).body;
    expect(diff.currentVersion).toBe(v1 + 1);
    expect(
      diff.items.map((i: { data: { id: string }; isDeleted: boolean }) => [i.data.id, i.isDeleted]),
    ).toEqual([
      ['TG-a', false],
      ['TG-b', true],
      ['TG-d', false],
    ]);
  });

  it('when a change set is abandoned (a crashed run), then readers never see it and the next run cleans it up', async () => {
    const app = harness.app();
    const base = await harness.commit({ treatmentGroup: [put(tg('TG-crash-1', 'kept'))] });
    const atBase = await readAll(app);

    // The crashed run: staged, never committed.
    const committedAt = new Date();
    await harness.writer.stageChanges(
      base + 1,
      'treatmentGroup',
      [del('TG-crash-1'), put(tg('TG-ghost', 'never committed'))],
      committedAt,
    );
    expect(await readAll(app)).toEqual(atBase);

    // The next run recovers first, then commits its own change set as the same version number.
    expect(await harness.writer.recover()).toEqual({ removed: 2, restored: 1 });
    const next = await harness.commit({ treatmentGroup: [put(tg('TG-real', 'committed'))] });
    expect(next).toBe(base + 1);
    await app.versions.refresh('request');

    const diff = await request(app)
      .get(`/api/v1/treatmentGroup?sinceVersion=${base}`)
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    expect(diff.body.items.map((i: { data: { id: string } }) => i.data.id)).toEqual(['TG-real']);
    const full = await request(app)
      .get('/api/v1/treatment-group')
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    const ids = full.body.entries.map((e: { data: { id: string } }) => e.data.id);
    expect(ids).toContain('TG-crash-1');
    expect(ids).not.toContain('TG-ghost');
  });
});
