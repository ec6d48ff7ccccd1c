import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { MirrorChanges } from '@nhp/refsync-client';
import { loadMirrorFile } from '../src/mirror-file';
import { formatChanges, runMirror } from '../src/run-mirror';

/** Serves version 1 with one treatment group and no reimbursement groups. */
const fetchVersion1 = (async (input: string | URL | Request) => {
  const url = String(input);
  const items = url.includes('treatmentGroup')
    ? [
        {
          data: { id: 'BG-1', name: 'Diabetes' },
          version: 1,
          lastChanged: '2026-11-22T02:00:03.125Z',
          isDeleted: false,
        },
      ]
    : [];
  return new Response(JSON.stringify({ currentVersion: 1, items }), {
    status: 200,
    headers: { etag: '"e1"', 'content-type': 'application/json' },
  });
}) as typeof fetch;

describe('refsync-mirror', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'refsync-mirror-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('when a run completes, then the file holds both datasets with their versions and items', async () => {
    const file = join(dir, 'mirror.json');
    const changes = await runMirror({
      url: 'http://svc.test/',
      apiKey: 'k',
      file,
      spelling: 'primary',
      fetch: fetchVersion1,
    });
    expect(changes.map((c) => [c.dataset, c.added])).toEqual([
      ['treatmentGroup', ['BG-1']],
      ['reimbursementGroup', []],
    ]);
    const saved = await loadMirrorFile(file);
    expect(saved?.baseUrl).toBe('http://svc.test');
    expect(saved?.datasets.treatmentGroup?.currentVersion).toBe(1);
    expect(saved?.datasets.treatmentGroup?.items).toEqual({
      'BG-1': { id: 'BG-1', name: 'Diabetes' },
    });
  });

  it('when the file mirrors another service, then the run refuses unless reset', async () => {
    const file = join(dir, 'mirror.json');
    await runMirror({
      url: 'http://one.test',
      apiKey: 'k',
      file,
      spelling: 'primary',
      fetch: fetchVersion1,
    });
    await expect(
      runMirror({
        url: 'http://two.test',
        apiKey: 'k',
        file,
        spelling: 'primary',
        fetch: fetchVersion1,
      }),
    ).rejects.toThrow(/mirrors http:\/\/one\.test/);
    await expect(
      runMirror({
        url: 'http://two.test',
        apiKey: 'k',
        file,
        spelling: 'primary',
        fetch: fetchVersion1,
        reset: true,
      }),
    ).resolves.toHaveLength(2);
  });

  it('when the file is not a mirror file, then loading names the problem', async () => {
    const file = join(dir, 'other.json');
    await writeFile(file, JSON.stringify({ hello: 'world' }));
    await expect(loadMirrorFile(file)).rejects.toThrow(/not a refsync-mirror\/1 file/);
    expect(await readFile(file, 'utf8')).toContain('hello');
  });

  it('when changes are formatted, then counts and ids are listed per dataset', () => {
    const changes: MirrorChanges[] = [
      {
        dataset: 'treatmentGroup',
        fromVersion: 3,
        currentVersion: 4,
        notModified: false,
        fullResync: false,
        added: ['a'],
        updated: ['b'],
        removed: ['c', 'd'],
      },
      {
        dataset: 'reimbursementGroup',
        fromVersion: 4,
        currentVersion: 4,
        notModified: true,
        fullResync: false,
        added: [],
        updated: [],
        removed: [],
      },
    ];
    expect(formatChanges(changes)).toBe(
      [
        'treatmentGroup: version 3 -> version 4: 1 added, 1 updated, 2 removed',
        '  + a',
        '  ~ b',
        '  - c, d',
        'reimbursementGroup: version 4, not modified (304)',
      ].join('\n'),
    );
  });
});
