import { createDatasetReads } from '../src/dataset-reads';
import { DATASET_ROUTES, type DatasetRoute } from '../src/datasets';
import type { DatasetReader } from '../src/ports';
import type { Selection } from '../src/responses/response-store';

const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined };
const KEY = 'k-123';
const route = DATASET_ROUTES.find((r) => r.path === '/api/v1/treatmentGroup') as DatasetRoute;
const altRoute = DATASET_ROUTES.find((r) => r.path === '/api/v1/treatment-group') as DatasetRoute;

/** A storage port with one empty dataset at version 4. */
const reader: DatasetReader = {
  currentVersion: async () => 4,
  scanItems: async () => [],
};

interface TestRequest {
  headers: Record<string, string | undefined>;
}

async function setup(options: { versionRead?: boolean } = {}) {
  const reads = createDatasetReads<TestRequest>({
    reader,
    versionConflicts: { is: () => false, exhausted: (err) => err as Error },
    // The key check is a port (refsync-api's is hashed and remembered per connection).
    authenticate: (r) => (r.headers['x-api-key'] === KEY ? 'acme' : undefined),
    logger,
    cacheMaxBytes: 1024 * 1024,
  });
  if (options.versionRead ?? true) await reads.versions.refresh('start');
  return { requests: reads, responses: reads.responses };
}

function req(headers: Record<string, string> = {}): TestRequest {
  return { headers: { 'x-api-key': KEY, ...headers } };
}

describe('resolve: one decision for both paths', () => {
  it('when the key is missing or wrong, then it is refused with 401 before anything else is looked at', async () => {
    const { requests } = await setup();
    for (const headers of [{ 'x-api-key': 'wrong' }, { 'x-api-key': '' }]) {
      const r = requests.resolve(req(headers), route, `${route.path}?sinceVersion=x`, false, null);
      expect(r.outcome).toBe('refused');
      expect(r.error).toMatchObject({ status: 401, code: 'UNAUTHORIZED' });
      expect(r.error?.headers['WWW-Authenticate']).toContain('ApiKey');
    }
  });

  it('when negotiation has not seen a header value, then it is left to Express', async () => {
    const { requests } = await setup();
    expect(requests.resolve(req(), route, route.path, undefined, 'gzip').outcome).toBe(
      'unnegotiated',
    );
    expect(requests.resolve(req(), route, route.path, true, undefined).outcome).toBe(
      'unnegotiated',
    );
  });

  it('when JSON or every coding is refused, then 406 with its own code', async () => {
    const { requests } = await setup();
    expect(requests.resolve(req(), route, route.path, false, 'gzip').error).toMatchObject({
      status: 406,
      code: 'NOT_ACCEPTABLE',
    });
    expect(requests.resolve(req(), route, route.path, true, null).error).toMatchObject({
      status: 406,
      code: 'NO_ACCEPTABLE_ENCODING',
    });
  });

  it.each([
    [route, `${route.path}?sinceVersion=1.5`, 'query.sinceVersion'],
    [route, `${route.path}?sinceVersion=1&sinceVersion=2`, 'query.sinceVersion'],
    [altRoute, `${altRoute.path}?since-version=`, 'query.since-version'],
  ])('when the version parameter is bad (%#), then 400 names it', async (r, url, path) => {
    const { requests } = await setup();
    const resolved = requests.resolve(req(), r, url, true, 'identity');
    expect(resolved.outcome).toBe('refused');
    expect(resolved.client).toBe('acme');
    expect(resolved.error).toMatchObject({ status: 400, code: 'INVALID_SINCE_VERSION' });
    expect(resolved.error?.details).toEqual([{ path, message: expect.any(String) }]);
  });

  it("when each spelling gets the other spelling's parameter, then it is ignored as unknown", async () => {
    const { requests } = await setup();
    const r = requests.resolve(req(), altRoute, `${altRoute.path}?sinceVersion=oops`, true, 'br');
    expect(r.outcome).toBe('miss');
    expect(r.selection).toEqual({
      dataset: 'treatmentGroup',
      spelling: 'alternative',
      since: undefined,
    });
  });

  it('when If-None-Match holds the ETag at the version in memory, then not modified; otherwise a miss, then cached once stored', async () => {
    const { requests, responses } = await setup();
    const first = requests.resolve(req(), route, `${route.path}?sinceVersion=-7`, true, 'gzip');
    expect(first.outcome).toBe('miss');
    expect(first.selection?.since).toBe(0); // negative behaves as 0
    expect(first.version).toBe(4);
    const etag = first.etag as string;

    const revalidated = requests.resolve(
      req({ 'if-none-match': `W/${etag}` }),
      route,
      `${route.path}?sinceVersion=-7`,
      true,
      'gzip',
    );
    expect(revalidated).toMatchObject({ outcome: 'not-modified', etag, response: undefined });

    await responses.obtain(first.selection as Selection, 4, 'gzip');
    const cached = requests.resolve(req(), route, `${route.path}?sinceVersion=-7`, true, 'gzip');
    expect(cached.outcome).toBe('cached');
    expect(cached.response?.etag).toBe(etag);
  });

  it('when no version has been read yet, then it is a miss without an ETag', async () => {
    const { requests } = await setup({ versionRead: false });
    const r = requests.resolve(req({ 'if-none-match': '*' }), route, route.path, true, 'br');
    expect(r).toMatchObject({ outcome: 'miss', version: undefined, etag: undefined });
  });
});
