import request from 'supertest';
import { put, startHarness, tg, TEST_KEY, type Harness } from './support/harness';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
  await harness.commit({ treatmentGroup: [put(tg('TG-1', 'Insulin'))] });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

/** The value of one sample of the Prometheus text format, e.g. `name{a="b"}`; undefined if absent. */
function sample(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('GET /metrics', () => {
  it('when requests were answered by either path, then they are counted by route and status, with cache hits, misses and bytes', async () => {
    const app = harness.app();
    await app.warmUp();
    const path = '/api/v1/treatmentGroup';
    const first = await request(app).get(path).set('X-API-KEY', TEST_KEY).expect(200); // miss
    await request(app).get(path).set('X-API-KEY', TEST_KEY).expect(200); // fast path, cached
    await request(app)
      .get(path)
      .set('X-API-KEY', TEST_KEY)
      .set('If-None-Match', first.headers['etag'] as string)
      .expect(304);
    await request(app).get(path).set('X-API-KEY', 'wrong').expect(401);
    await request(app).get('/nowhere').expect(404);

    const res = await request(app).get('/metrics').expect(200);
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    const text = res.text;
    expect(sample(text, `refsync_api_requests_total{route="${path}",status="200"}`)).toBe(2);
    expect(sample(text, `refsync_api_requests_total{route="${path}",status="304"}`)).toBe(1);
    expect(sample(text, `refsync_api_requests_total{route="${path}",status="401"}`)).toBe(1);
    // Unknown paths share one label, so clients cannot grow the series without bound.
    expect(sample(text, 'refsync_api_requests_total{route="other",status="404"}')).toBe(1);
    expect(text).not.toContain('/nowhere');
    expect(sample(text, 'refsync_api_cache_hits_total')).toBe(1);
    expect(sample(text, 'refsync_api_cache_misses_total')).toBe(1);
    expect(sample(text, 'refsync_api_cache_bytes')).toBeGreaterThan(first.text.length);
    // supertest asks for gzip: the gzip body and the identity body it was compressed from.
    expect(sample(text, 'refsync_api_cache_entries')).toBe(2);
    expect(sample(text, 'refsync_api_data_version')).toBe(1);
    expect(sample(text, 'refsync_api_data_version_lag')).toBe(0);

    // A second scrape counts only what happened since: counters never double.
    await request(app).get(path).set('X-API-KEY', TEST_KEY).expect(200);
    const again = (await request(app).get('/metrics').expect(200)).text;
    expect(sample(again, `refsync_api_requests_total{route="${path}",status="200"}`)).toBe(3);
    expect(sample(again, 'refsync_api_cache_hits_total')).toBe(2);
    expect(sample(again, 'refsync_api_requests_total{route="/metrics",status="200"}')).toBe(1);
  });

  it('when storage has a version the service has not read yet, then the version lag says how many', async () => {
    const app = harness.app();
    await app.warmUp();
    const served = app.versions.current() as number;
    await harness.commit({ treatmentGroup: [put(tg('TG-2', 'Metformin'))] }); // no event
    const text = (await request(app).get('/metrics').expect(200)).text;
    expect(sample(text, 'refsync_api_data_version')).toBe(served);
    expect(sample(text, 'refsync_api_data_version_lag')).toBe(1);
  });
});
