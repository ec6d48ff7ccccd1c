import type { Server } from 'node:http';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DATASETS, type Dataset } from '@nhp/refsync-contracts';
import {
  createRefsyncClient,
  REFSYNC_API_ERROR_STATUS,
  RefsyncMirror,
  type MirrorChanges,
  type Spelling,
} from '@nhp/refsync-client';
import { formatChanges, runMirror } from '@nhp/refsync-mirror';
import { AppError } from '@nhp/shared-errors';
import { readSampleData } from '@nhp/refsync-sample-data';
import type { RefsyncApp } from '../src/app';
import { del, put, startHarness, TEST_KEY, type Changes, type Harness } from './support/harness';
import { closeQuietly, listenOnFreePort } from './support/raw-http';
import type { AddressInfo } from 'node:net';

type Item = { id: string; name?: string };
type Snapshot = Record<Dataset, Map<string, Item>>;

async function sample(version: 'v1' | 'v2'): Promise<Snapshot> {
  const snapshot = {} as Snapshot;
  for (const dataset of DATASETS) {
    const items = (await readSampleData(version, dataset)) as Array<{ id: string }>;
    snapshot[dataset] = new Map(items.map((i) => [i.id, i]));
  }
  return snapshot;
}

/** The change set that turns one upstream snapshot into the next (what the importer computes). */
function changeSet(from: Snapshot | undefined, to: Snapshot): Changes {
  const changes: Changes = {};
  for (const dataset of DATASETS) {
    const list = [];
    const before = from?.[dataset] ?? new Map<string, { id: string }>();
    for (const [id, data] of to[dataset]) {
      if (JSON.stringify(before.get(id)) !== JSON.stringify(data)) list.push(put(data));
    }
    for (const id of before.keys()) if (!to[dataset].has(id)) list.push(del(id));
    changes[dataset] = list;
  }
  return changes;
}

const sorted = (snapshot: Snapshot, dataset: Dataset) =>
  [...snapshot[dataset].values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));

let harness: Harness;
let app: RefsyncApp;
let server: Server;
let baseUrl: string;
const snapshots: Snapshot[] = [];

beforeAll(async () => {
  harness = await startHarness();
  app = harness.app();
  server = await listenOnFreePort(app);
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  snapshots.push(await sample('v1'), await sample('v2'));
  // v3: items removed in v2 come back (changed), and a few more are removed.
  const v2 = snapshots[1] as Snapshot;
  const v1 = snapshots[0] as Snapshot;
  const v3 = {
    treatmentGroup: new Map(v2.treatmentGroup),
    reimbursementGroup: new Map(v2.reimbursementGroup),
  } as Snapshot;
  for (const dataset of DATASETS) {
    for (const [id, data] of v1[dataset]) {
      if (!v2[dataset].has(id))
        v3[dataset].set(
          id,
          dataset === 'treatmentGroup' ? { ...data, name: `${data.name ?? ''} (igjen)` } : data,
        );
    }
    for (const id of [...v2[dataset].keys()].slice(0, 3)) v3[dataset].delete(id);
  }
  snapshots.push(v3);
}, 60_000);

afterAll(async () => {
  await closeQuietly(server);
  await harness?.stop();
});

async function publish(index: number): Promise<number> {
  const version = await harness.commit(
    changeSet(snapshots[index - 1], snapshots[index] as Snapshot),
    { publishEvent: true },
  );
  await app.versions.refresh('event');
  return version;
}

function expectChanges(changes: MirrorChanges, from: Snapshot | undefined, to: Snapshot): void {
  const dataset = changes.dataset;
  const before = from?.[dataset] ?? new Map();
  const after = to[dataset];
  const added = [...after.keys()].filter((id) => !before.has(id));
  const removed = [...before.keys()].filter((id) => !after.has(id));
  const updated = [...after.keys()].filter(
    (id) => before.has(id) && JSON.stringify(before.get(id)) !== JSON.stringify(after.get(id)),
  );
  expect(new Set(changes.added)).toEqual(new Set(added));
  expect(new Set(changes.updated)).toEqual(new Set(updated));
  expect(new Set(changes.removed)).toEqual(new Set(removed));
}

describe('client SDK against the real service', () => {
  it('when versions add, change, delete and bring back items, then mirrors in both spellings equal upstream after every version', async () => {
    const mirrors = (['primary', 'alternative'] as Spelling[]).map(
      (spelling) => new RefsyncMirror(createRefsyncClient({ baseUrl, apiKey: TEST_KEY, spelling })),
    );
    for (let index = 0; index < snapshots.length; index++) {
      const version = await publish(index);
      for (const mirror of mirrors) {
        const changes = await mirror.syncAll();
        for (const c of changes) {
          expect(c.currentVersion).toBe(version);
          expectChanges(c, snapshots[index - 1], snapshots[index] as Snapshot);
          expect(mirror.items(c.dataset)).toEqual(sorted(snapshots[index] as Snapshot, c.dataset));
        }
      }
    }
    expect(mirrors[0]?.items('reimbursementGroup').length).toBeGreaterThanOrEqual(300);
  });

  it('when nothing changed, then the next sync is an empty diff and the one after is revalidated with a 304', async () => {
    const mirror = new RefsyncMirror(createRefsyncClient({ baseUrl, apiKey: TEST_KEY }));
    await mirror.sync('treatmentGroup');
    const empty = await mirror.sync('treatmentGroup');
    expect(empty).toMatchObject({ notModified: false, added: [], updated: [], removed: [] });
    const revalidated = await mirror.sync('treatmentGroup');
    expect(revalidated).toMatchObject({ notModified: true, added: [], updated: [], removed: [] });
  });

  it('when the key is wrong, then the client rejects with the problem details', async () => {
    const client = createRefsyncClient({ baseUrl, apiKey: 'wrong' });
    const err = (await client.fetchDataset('treatmentGroup').catch((e: unknown) => e)) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe(REFSYNC_API_ERROR_STATUS);
    expect(err.details).toMatchObject({ status: 401, problem: { code: 'UNAUTHORIZED' } });
  });
});

describe('refsync-mirror tool against the real service', () => {
  it('when it runs twice around a commit, then the file follows and each run reports its changes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'refsync-mirror-e2e-'));
    try {
      const file = join(dir, 'mirror.json');
      const first = await runMirror({
        url: baseUrl,
        apiKey: TEST_KEY,
        file,
        spelling: 'alternative',
      });
      expect(first.every((c) => c.fullResync)).toBe(true);
      const version = first[0]?.currentVersion as number;

      const next = await harness.commit(
        {
          treatmentGroup: [put({ id: 'TG-mirror', name: 'Speilet' } as never)],
          reimbursementGroup: [],
        },
        { publishEvent: true },
      );
      await app.versions.refresh('event');
      const second = await runMirror({
        url: baseUrl,
        apiKey: TEST_KEY,
        file,
        spelling: 'alternative',
      });
      expect(formatChanges(second)).toContain(
        `treatmentGroup: version ${version} -> version ${next}: 1 added, 0 updated, 0 removed\n  + TG-mirror`,
      );
      const saved = JSON.parse(await readFile(file, 'utf8'));
      expect(saved.datasets.treatmentGroup.items['TG-mirror']).toEqual({
        id: 'TG-mirror',
        name: 'Speilet',
      });
      expect(saved.datasets.treatmentGroup.currentVersion).toBe(next);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
