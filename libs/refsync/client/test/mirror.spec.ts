import type { Dataset } from '@nhp/refsync-contracts';
import { createRefsyncClient, type Spelling } from '../src/lib/client';
import { AppError } from '@nhp/shared-errors';
import { REFSYNC_API_ERROR_STATUS, REFSYNC_API_PROTOCOL } from '../src/lib/errors';
import { RefsyncMirror } from '../src/lib/mirror';

/**
 * A stand-in for the service behind `fetch`, with just enough of R1-R4 to drive the mirror
 * logic here; the SDK is tested against the real refsync-api in apps/refsync-api/test.
 */
class FakeService {
  version = 0;
  readonly items = new Map<
    string,
    { data: { id: string; name: string }; version: number; isDeleted: boolean }
  >();
  requests: Array<{ url: string; headers: Record<string, string> }> = [];
  overrideBody: unknown;
  overrideStatus: number | undefined;

  commit(
    change: (put: (id: string, name: string) => void, del: (id: string) => void) => void,
  ): void {
    const next = this.version + 1;
    change(
      (id, name) => this.items.set(id, { data: { id, name }, version: next, isDeleted: false }),
      (id) => {
        const item = this.items.get(id);
        if (item) this.items.set(id, { ...item, version: next, isDeleted: true });
      },
    );
    this.version = next;
  }

  readonly fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = new URL(String(input));
    const headers = init?.headers as Record<string, string>;
    this.requests.push({ url: url.pathname + url.search, headers });
    if (this.overrideStatus) {
      return new Response(JSON.stringify(this.overrideBody), {
        status: this.overrideStatus,
        headers: { 'content-type': 'application/problem+json' },
      });
    }
    if (headers['X-API-KEY'] !== 'k') return new Response(null, { status: 401 });
    const alt = url.pathname.endsWith('treatment-group');
    const raw = url.searchParams.get(alt ? 'since-version' : 'sinceVersion');
    const since = raw === null ? undefined : Math.max(0, Number(raw));
    const etag = `"${this.version}-${raw ?? 'all'}-${alt}"`;
    if (headers['If-None-Match'] === etag)
      return new Response(null, { status: 304, headers: { etag } });
    const selected = [...this.items.values()]
      .filter((i) => (since === undefined ? !i.isDeleted : i.version > since))
      .sort((a, b) => a.version - b.version || a.data.id.localeCompare(b.data.id));
    const body =
      this.overrideBody ??
      (alt
        ? {
            currentVersion: this.version,
            entries: selected.map((i) => ({ data: i.data, isDeleted: i.isDeleted })),
          }
        : {
            currentVersion: this.version,
            items: selected.map((i) => ({
              data: i.data,
              version: i.version,
              lastChanged: '2026-11-22T02:00:03.125Z',
              isDeleted: i.isDeleted,
            })),
          });
    return new Response(JSON.stringify(body), {
      status: 200,
      headers: { etag, 'content-type': 'application/json' },
    });
  };
}

const dataset: Dataset = 'treatmentGroup';

function setup(spelling: Spelling = 'primary') {
  const service = new FakeService();
  const client = createRefsyncClient({
    baseUrl: 'http://refsync.test/',
    apiKey: 'k',
    spelling,
    fetch: service.fetch,
  });
  return { service, client, mirror: new RefsyncMirror(client) };
}

describe('RefsyncMirror', () => {
  it.each<Spelling>(['primary', 'alternative'])(
    'when versions add, change, delete and bring back items, then the %s-spelling copy follows and reports each change',
    async (spelling) => {
      const { service, mirror } = setup(spelling);
      service.commit((put) => {
        put('a', 'A');
        put('b', 'B');
      });
      const first = await mirror.sync(dataset);
      expect(first).toMatchObject({
        fromVersion: null,
        currentVersion: 1,
        added: ['a', 'b'],
        updated: [],
        removed: [],
        fullResync: true,
      });

      service.commit((put, del) => {
        put('b', 'B2');
        put('c', 'C');
        del('a');
      });
      service.commit((put) => put('d', 'D'));
      const second = await mirror.sync(dataset);
      expect(second).toMatchObject({
        fromVersion: 1,
        currentVersion: 3,
        added: ['c', 'd'],
        updated: ['b'],
        removed: ['a'],
      });

      service.commit((put) => put('a', 'A again'));
      const third = await mirror.sync(dataset);
      expect(third).toMatchObject({ added: ['a'], removed: [], currentVersion: 4 });
      expect(mirror.items(dataset)).toEqual([
        { id: 'a', name: 'A again' },
        { id: 'b', name: 'B2' },
        { id: 'c', name: 'C' },
        { id: 'd', name: 'D' },
      ]);
      const param = spelling === 'primary' ? 'sinceVersion' : 'since-version';
      expect(service.requests.map((r) => r.url.split('?')[1])).toEqual([
        undefined,
        `${param}=1`,
        `${param}=3`,
      ]);
    },
  );

  it('when the same request is repeated, then it is revalidated with its ETag and a 304 changes nothing', async () => {
    const { service, mirror } = setup();
    service.commit((put) => put('a', 'A'));
    await mirror.sync(dataset);
    const atCurrent = await mirror.sync(dataset);
    expect(atCurrent).toMatchObject({ notModified: false, added: [], currentVersion: 1 });
    const repeated = await mirror.sync(dataset);
    expect(repeated).toMatchObject({ notModified: true, added: [], updated: [], removed: [] });
    expect(service.requests[2]?.headers['If-None-Match']).toBe('"1-1-false"');
    expect(mirror.items(dataset)).toEqual([{ id: 'a', name: 'A' }]);
  });

  it('when a deleted item the copy never had arrives, then it is not reported as removed', async () => {
    const { service, mirror } = setup();
    service.commit((put) => put('a', 'A'));
    service.commit((_put, del) => del('a'));
    service.commit((put) => put('b', 'B'));
    expect(await mirror.sync(dataset)).toMatchObject({ added: ['b'], removed: [] });
  });

  it('when the service reports a lower version than stored, then the copy is rebuilt from the full list', async () => {
    const { service, client } = setup();
    service.commit((put) => put('x', 'X'));
    const mirror = new RefsyncMirror(client, {
      treatmentGroup: {
        currentVersion: 9,
        etag: null,
        etagSinceVersion: null,
        items: { a: { id: 'a', name: 'A' }, x: { id: 'x', name: 'old' } },
      },
    });
    const changes = await mirror.sync(dataset);
    expect(changes).toMatchObject({
      fullResync: true,
      currentVersion: 1,
      added: [],
      updated: ['x'],
      removed: ['a'],
    });
    expect(mirror.items(dataset)).toEqual([{ id: 'x', name: 'X' }]);
  });

  it('when a snapshot is restored into a new mirror, then it continues from the stored version', async () => {
    const { service, client, mirror } = setup();
    service.commit((put) => put('a', 'A'));
    await mirror.sync(dataset);
    const restored = new RefsyncMirror(client, JSON.parse(JSON.stringify(mirror.snapshot())));
    service.commit((put) => put('b', 'B'));
    expect(await restored.sync(dataset)).toMatchObject({ fromVersion: 1, added: ['b'] });
  });
});

describe('createRefsyncClient', () => {
  it('when the body breaks the contract, then a protocol error names the field', async () => {
    const { service, client } = setup();
    service.overrideBody = {
      currentVersion: 1,
      items: [{ data: { id: 'a' }, version: 1, lastChanged: 'x', isDeleted: false }],
    };
    await expect(client.fetchDataset(dataset)).rejects.toMatchObject({
      code: REFSYNC_API_PROTOCOL,
    });
    await expect(client.fetchDataset(dataset)).rejects.toThrow(/items\.0\.data\.name/);
  });

  it('when the service answers with problem details, then the error carries them', async () => {
    const { service, client } = setup();
    service.overrideStatus = 400;
    service.overrideBody = {
      type: 'about:blank',
      title: 'Bad Request',
      status: 400,
      detail: 'sinceVersion must not be empty',
      instance: '/api/v1/treatmentGroup',
      code: 'INVALID_SINCE_VERSION',
    };
    const err = (await client.fetchDataset(dataset).catch((e: unknown) => e)) as AppError;
    expect(err).toBeInstanceOf(AppError);
    expect(err.code).toBe(REFSYNC_API_ERROR_STATUS);
    expect(err.details).toMatchObject({ status: 400, problem: { code: 'INVALID_SINCE_VERSION' } });
    expect(err.category).toBe('internal');
  });

  it('when sinceVersion is not an integer, then the client refuses to send it', () => {
    const { client } = setup();
    expect(() => client.url(dataset, 1.5)).toThrow(RangeError);
    expect(client.url('reimbursementGroup', 7)).toBe(
      'http://refsync.test/api/v1/reimbursementGroup?sinceVersion=7',
    );
  });
});
