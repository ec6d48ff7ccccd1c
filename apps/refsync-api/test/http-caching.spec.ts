import type { Server } from 'node:http';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import request from 'supertest';
import { del, put, rg, startHarness, TEST_KEY, type Harness } from './support/harness';
import { closeQuietly, listenOnFreePort, rawGet } from './support/raw-http';
import type { RefsyncApp } from '../src/app';

const PATH = '/api/v1/reimbursementGroup';

let harness: Harness;

beforeAll(async () => {
  harness = await startHarness();
  const groups = Array.from({ length: 40 }, (_, i) =>
    put(rg(`A10AE${String(i).padStart(2, '0')}_1`, `Diabetes ${i}`)),
  );
  await harness.commit({ reimbursementGroup: groups });
  await harness.commit({
    reimbursementGroup: [del('A10AE00_1'), put(rg('A10AE01_1', 'Diabetes, endret'))],
  });
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

describe('ETag and If-None-Match', () => {
  let app: ReturnType<Harness['app']>;
  beforeEach(() => {
    app = harness.app();
  });

  it('when a response is revalidated with its ETag, then 304 comes without a body and without touching the database', async () => {
    const first = await request(app).get(PATH).set('X-API-KEY', TEST_KEY).expect(200);
    const etag = first.headers['etag'] as string;
    expect(etag).toMatch(/^"[^"]+"$/); // strong
    expect(first.headers['cache-control']).toBe('no-cache');
    expect(first.headers['vary']).toBe('Accept-Encoding');

    const callsBefore = app.reader.calls();
    for (const header of [etag, `W/${etag}`, `"something-else", ${etag}`, '*']) {
      const res = await request(app)
        .get(PATH)
        .set('X-API-KEY', TEST_KEY)
        .set('If-None-Match', header)
        .expect(304);
      expect(res.headers['etag']).toBe(etag);
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['vary']).toBe('Accept-Encoding');
      expect(res.text ?? '').toBe('');
    }
    // A header value the fast path has not negotiated yet goes through Express: still no database.
    await request(app)
      .get(PATH)
      .set('X-API-KEY', TEST_KEY)
      .set('Accept-Encoding', 'gzip;q=0.9, deflate;q=0.1')
      .set('If-None-Match', etag)
      .expect(304);
    expect(app.reader.calls()).toBe(callsBefore);
  });

  it('when a cached response is served again, then the database is not read', async () => {
    await request(app).get(PATH).set('X-API-KEY', TEST_KEY).expect(200);
    const callsBefore = app.reader.calls();
    for (let i = 0; i < 5; i++) await request(app).get(PATH).set('X-API-KEY', TEST_KEY).expect(200);
    expect(app.reader.calls()).toBe(callsBefore);
  });

  it('when the ETag belongs to another sinceVersion, spelling or coding, then it does not match', async () => {
    const full = await request(app).get(PATH).set('X-API-KEY', TEST_KEY).expect(200);
    const etag = full.headers['etag'] as string;
    await request(app)
      .get(`${PATH}?sinceVersion=1`)
      .set('X-API-KEY', TEST_KEY)
      .set('If-None-Match', etag)
      .expect(200);
    await request(app)
      .get('/api/v1/reimbursement-group')
      .set('X-API-KEY', TEST_KEY)
      .set('If-None-Match', etag)
      .expect(200);
    const identity = await request(app)
      .get(PATH)
      .set('X-API-KEY', TEST_KEY)
      .set('Accept-Encoding', 'identity')
      .set('If-None-Match', etag)
      .expect(200);
    expect(identity.headers['etag']).not.toBe(etag);
  });

  it('when every sinceVersion at or above the current version is asked, then they share one ETag', async () => {
    const version = (await request(app).get(PATH).set('X-API-KEY', TEST_KEY).expect(200)).body
      .currentVersion as number;
    const at = await request(app)
      .get(`${PATH}?sinceVersion=${version}`)
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    const above = await request(app)
      .get(`${PATH}?sinceVersion=${version + 97}`)
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    expect(above.headers['etag']).toBe(at.headers['etag']);
    expect(above.body).toEqual({ currentVersion: version, items: [] });
  });

  it('when a new version is committed, then the ETag the client holds no longer matches and the diff arrives', async () => {
    const version = (await request(app).get(PATH).set('X-API-KEY', TEST_KEY).expect(200)).body
      .currentVersion as number;
    const held = await request(app)
      .get(`${PATH}?sinceVersion=${version}`)
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    const etag = held.headers['etag'] as string;
    await request(app)
      .get(`${PATH}?sinceVersion=${version}`)
      .set('X-API-KEY', TEST_KEY)
      .set('If-None-Match', etag)
      .expect(304);

    const next = await harness.commit({
      reimbursementGroup: [put(rg('B01AC06_1', 'Hjerteinfarkt'))],
    });
    await app.versions.refresh('event');
    const res = await request(app)
      .get(`${PATH}?sinceVersion=${version}`)
      .set('X-API-KEY', TEST_KEY)
      .set('If-None-Match', etag)
      .expect(200);
    expect(res.headers['etag']).not.toBe(etag);
    expect(res.body.currentVersion).toBe(next);
    expect(res.body.items.map((i: { data: { id: string } }) => i.data.id)).toEqual(['B01AC06_1']);
  });
});

describe('content codings', () => {
  let app: RefsyncApp;
  let server: Server;
  beforeAll(async () => {
    app = harness.app();
    server = await listenOnFreePort(app);
  });
  afterAll(async () => {
    await closeQuietly(server);
  });

  const identityBody = async () => {
    const res = await rawGet(server, PATH, { 'X-API-KEY': TEST_KEY });
    expect(res.status).toBe(200);
    expect(res.headers['content-encoding']).toBeUndefined();
    return res.body;
  };

  it.each([
    ['gzip', 'gzip', gunzipSync],
    ['br', 'br', brotliDecompressSync],
    ['gzip, deflate, br', 'gzip', gunzipSync],
    ['br;q=1.0, gzip;q=0.8', 'br', brotliDecompressSync],
    ['gzip;q=0.5, br;q=0.9, *;q=0.1', 'br', brotliDecompressSync],
    ['br;q=0, gzip', 'gzip', gunzipSync],
    ['*', 'br', brotliDecompressSync],
  ])(
    'when Accept-Encoding is %j, then the body is %s and decodes to the identity bytes',
    async (header, coding, decode) => {
      const expected = await identityBody();
      for (let i = 0; i < 2; i++) {
        // twice: negotiated by Express first, then answered by the fast path from the cache
        const res = await rawGet(server, PATH, {
          'X-API-KEY': TEST_KEY,
          'Accept-Encoding': header,
        });
        expect(res.status).toBe(200);
        expect(res.headers['content-encoding']).toBe(coding);
        expect(res.headers['vary']).toBe('Accept-Encoding');
        expect(Number(res.headers['content-length'])).toBe(res.body.length);
        expect(decode(res.body).equals(expected)).toBe(true);
      }
    },
  );

  it('when Accept-Encoding is identity or unknown codings only, then the body is not encoded', async () => {
    for (const header of ['identity', 'zstd;q=1, identity;q=0.5', '']) {
      const res = await rawGet(server, PATH, { 'X-API-KEY': TEST_KEY, 'Accept-Encoding': header });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
    }
  });

  it('when no offered coding is acceptable, then 406', async () => {
    const res = await rawGet(server, PATH, {
      'X-API-KEY': TEST_KEY,
      'Accept-Encoding': 'identity;q=0, *;q=0',
    });
    expect(res.status).toBe(406);
    expect(JSON.parse(res.body.toString('utf8'))).toMatchObject({ code: 'NO_ACCEPTABLE_ENCODING' });
  });

  it('when the request carries an X-Request-Id, then both paths echo it', async () => {
    const warm = await rawGet(server, PATH, { 'X-API-KEY': TEST_KEY, 'X-Request-Id': 'req-abc.1' });
    expect(warm.headers['x-request-id']).toBe('req-abc.1');
    const generated = await rawGet(server, PATH, { 'X-API-KEY': TEST_KEY });
    expect(generated.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});

describe('large identity bodies kept compressed', () => {
  let small: RefsyncApp;
  let compact: RefsyncApp;
  let servers: Server[];
  beforeAll(async () => {
    small = harness.app();
    compact = harness.app({ identityMaxBytes: 1024 }); // every list here is "large"
    servers = [await listenOnFreePort(small), await listenOnFreePort(compact)];
  });
  afterAll(async () => {
    for (const server of servers) await closeQuietly(server);
  });

  it('when an identity body above the limit is asked, then it is inflated on the way out, byte for byte and with its own length', async () => {
    const [plainServer, compactServer] = servers as [Server, Server];
    const expected = await rawGet(plainServer, `${PATH}?sinceVersion=0`, { 'X-API-KEY': TEST_KEY });
    expect(expected.body.length).toBeGreaterThan(1024);
    for (let i = 0; i < 2; i++) {
      // the first answer comes from Express (computed), the second from the fast path (cached)
      const res = await rawGet(compactServer, `${PATH}?sinceVersion=0`, { 'X-API-KEY': TEST_KEY });
      expect(res.status).toBe(200);
      expect(res.headers['content-encoding']).toBeUndefined();
      expect(res.headers['content-length']).toBe(String(expected.body.length));
      expect(res.headers['etag']).toBe(expected.headers['etag']);
      expect(res.body.equals(expected.body)).toBe(true);
    }
    for (const [coding, decode] of [
      ['gzip', gunzipSync],
      ['br', brotliDecompressSync],
    ] as const) {
      const res = await rawGet(compactServer, `${PATH}?sinceVersion=0`, {
        'X-API-KEY': TEST_KEY,
        'Accept-Encoding': coding,
      });
      expect(res.headers['content-encoding']).toBe(coding);
      expect(decode(res.body).equals(expected.body)).toBe(true);
    }
    const head = await request(compact)
      .head(`${PATH}?sinceVersion=0`)
      .set('X-API-KEY', TEST_KEY)
      .set('Accept-Encoding', 'identity')
      .expect(200);
    expect(head.headers['content-length']).toBe(String(expected.body.length));
  });
});
