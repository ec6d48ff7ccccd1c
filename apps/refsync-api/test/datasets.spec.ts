import {
  altEnvelopeSchemas,
  envelopeSchemas,
  problemDetailsSchema,
  type Dataset,
} from '@nhp/refsync-contracts';
import request from 'supertest';
import { DATASET_ROUTES, type DatasetRoute } from '@nhp/refsync-read';
import type { RefsyncApp } from '../src/app';
import { del, put, rg, startHarness, tg, TEST_KEY, type Harness } from './support/harness';

/**
 * One history for both datasets, so every rule is checked on both and in both spellings:
 *   v1: x1..x4 and x6 added
 *   v2: x2 changed, x3 deleted, x5 added
 *   v3: x3 reappears (changed), x4 deleted, x1 changed
 */
const data: Record<Dataset, (n: number, rev: string) => { id: string }> = {
  treatmentGroup: (n, rev) => tg(`TG-${n}`, `Behandling ${n} ${rev}`),
  reimbursementGroup: (n, rev) => rg(`A10AE0${n}_1`, `Diabetes type 2 (${n} ${rev})`),
};
const idOf: Record<Dataset, (n: number) => string> = {
  treatmentGroup: (n) => `TG-${n}`,
  reimbursementGroup: (n) => `A10AE0${n}_1`,
};

interface Expected {
  n: number;
  version: number;
  rev: string;
  isDeleted: boolean;
}
const x = (n: number, version: number, rev: string, isDeleted = false): Expected => ({
  n,
  version,
  rev,
  isDeleted,
});

// Ordered by version, then id.
const FULL_LIST = [x(6, 1, 'v1'), x(2, 2, 'v2'), x(5, 2, 'v2'), x(1, 3, 'v3'), x(3, 3, 'v3')];
const SINCE_0 = [
  x(6, 1, 'v1'),
  x(2, 2, 'v2'),
  x(5, 2, 'v2'),
  x(1, 3, 'v3'),
  x(3, 3, 'v3'),
  x(4, 3, 'v1', true),
];
const SINCE_1 = [x(2, 2, 'v2'), x(5, 2, 'v2'), x(1, 3, 'v3'), x(3, 3, 'v3'), x(4, 3, 'v1', true)];
const SINCE_2 = [x(1, 3, 'v3'), x(3, 3, 'v3'), x(4, 3, 'v1', true)];

let harness: Harness;
let app: RefsyncApp;
let committedAt: Record<number, string>;

beforeAll(async () => {
  harness = await startHarness();
  const versions = [
    (ds: Dataset) => [1, 2, 3, 4, 6].map((n) => put(data[ds](n, 'v1'))),
    (ds: Dataset) => [put(data[ds](2, 'v2')), del(idOf[ds](3)), put(data[ds](5, 'v2'))],
    (ds: Dataset) => [put(data[ds](3, 'v3')), del(idOf[ds](4)), put(data[ds](1, 'v3'))],
  ];
  for (const changes of versions) {
    await harness.commit({
      treatmentGroup: changes('treatmentGroup'),
      reimbursementGroup: changes('reimbursementGroup'),
    });
  }
  committedAt = {};
  await harness
    .app()
    .reader.scanItems('treatmentGroup', { atVersion: 3, sinceVersion: 0 }, ({ item }) => {
      committedAt[item.version] = item.lastChanged.toISOString();
    });
  app = harness.app();
}, 60_000);

afterAll(async () => {
  await harness?.stop();
});

function get(route: DatasetRoute, query = '') {
  return request(app).get(`${route.path}${query}`).set('X-API-KEY', TEST_KEY);
}

function expectedBody(route: DatasetRoute, expected: Expected[]) {
  const dataset = route.dataset;
  if (route.spelling === 'alternative') {
    return {
      currentVersion: 3,
      entries: expected.map((e) => ({ data: data[dataset](e.n, e.rev), isDeleted: e.isDeleted })),
    };
  }
  return {
    currentVersion: 3,
    items: expected.map((e) => ({
      data: data[dataset](e.n, e.rev),
      version: e.version,
      lastChanged: committedAt[e.version],
      isDeleted: e.isDeleted,
    })),
  };
}

describe.each(DATASET_ROUTES.map((r) => [`${r.path} (${r.spelling})`, r] as const))(
  '%s',
  (_name, route) => {
    const param = route.sinceParam;
    const schema =
      route.spelling === 'primary'
        ? envelopeSchemas[route.dataset]
        : altEnvelopeSchemas[route.dataset];

    it('when sinceVersion is omitted, then all non-deleted items are listed with isDeleted false (R1)', async () => {
      const res = await get(route)
        .expect(200)
        .expect('Content-Type', 'application/json; charset=utf-8');
      expect(schema.safeParse(res.body).success).toBe(true);
      expect(res.body).toEqual(expectedBody(route, FULL_LIST));
    });

    it('when sinceVersion is N, then items above N are listed, deleted ones included (R2)', async () => {
      const res = await get(route, `?${param}=2`).expect(200);
      expect(res.body).toEqual(expectedBody(route, SINCE_2));
    });

    it.each(['0', '-1', '-9223372036854775808'])(
      'when sinceVersion is %s, then every item is listed, tombstones with their last data (R3)',
      async (since) => {
        const res = await get(route, `?${param}=${since}`).expect(200);
        expect(res.body).toEqual(expectedBody(route, SINCE_0));
      },
    );

    it.each(['4', '1000', '9223372036854775807'])(
      'when sinceVersion is %s, above the current version, then items are empty and currentVersion is current (R4)',
      async (since) => {
        const res = await get(route, `?${param}=${since}`).expect(200);
        expect(res.body).toEqual(expectedBody(route, []));
      },
    );

    it('when several synchronisations happened since N, then all accumulated changes come once each, in their latest state (R5)', async () => {
      const res = await get(route, `?${param}=1`).expect(200);
      expect(res.body).toEqual(expectedBody(route, SINCE_1));
    });

    it('when nothing changed since N, then items are empty and currentVersion is returned (R6)', async () => {
      const res = await get(route, `?${param}=3`).expect(200);
      expect(res.body).toEqual(expectedBody(route, []));
    });

    it('when the same request is computed twice, then the bytes are identical', async () => {
      const first = await get(route, `?${param}=0`).set('Accept-Encoding', 'identity').expect(200);
      app.responses.clear();
      const second = await get(route, `?${param}=0`).set('Accept-Encoding', 'identity').expect(200);
      expect(second.text).toBe(first.text);
      expect(second.headers['etag']).toBe(first.headers['etag']);
    });

    it.each([
      ['empty', ''],
      ['not a number', 'abc'],
      ['a decimal', '1.5'],
      ['an exponent', '1e3'],
      ['a plus sign', '%2B1'],
      ['surrounded by spaces', '%201%20'],
      ['hexadecimal', '0x10'],
      ['above the 64-bit range', '9223372036854775808'],
      ['below the 64-bit range', '-9223372036854775809'],
    ])(
      'when sinceVersion is %s, then 400 problem details name the parameter',
      async (_case, value) => {
        const res = await get(route, `?${param}=${value}`)
          .expect(400)
          .expect('Content-Type', /application\/problem\+json/);
        const problem = problemDetailsSchema.parse(JSON.parse(res.text));
        expect(problem).toMatchObject({
          status: 400,
          title: 'Bad Request',
          instance: route.path,
          code: 'INVALID_SINCE_VERSION',
        });
        expect(problem.detail).toContain(param);
      },
    );

    it('when sinceVersion is given twice, then 400', async () => {
      const res = await get(route, `?${param}=1&${param}=2`).expect(400);
      expect(JSON.parse(res.text)).toMatchObject({
        code: 'INVALID_SINCE_VERSION',
        detail: `${param} must be given at most once`,
      });
    });

    it("when the other spelling's parameter or an unknown one is given, then it is ignored", async () => {
      const other = param === 'sinceVersion' ? 'since-version' : 'sinceVersion';
      const res = await get(route, `?${other}=abc&${other}=2&foo=bar`).expect(200);
      expect(res.body).toEqual(expectedBody(route, FULL_LIST));
    });

    it('when the request is HEAD, then the headers come without a body', async () => {
      const getRes = await get(route).set('Accept-Encoding', 'identity').expect(200);
      const res = await request(app)
        .head(route.path)
        .set('X-API-KEY', TEST_KEY)
        .set('Accept-Encoding', 'identity')
        .expect(200);
      expect(res.headers['etag']).toBe(getRes.headers['etag']);
      expect(res.headers['content-length']).toBe(getRes.headers['content-length']);
      expect(res.text ?? '').toBe('');
    });

    it.each(['post', 'put', 'patch', 'delete'] as const)(
      'when the method is %s, then 405 with Allow',
      async (method) => {
        const res = await request(app)[method](route.path).set('X-API-KEY', TEST_KEY).expect(405);
        expect(res.headers['allow']).toBe('GET, HEAD');
        expect(JSON.parse(res.text)).toMatchObject({
          status: 405,
          code: 'METHOD_NOT_ALLOWED',
          instance: route.path,
        });
      },
    );

    it('when Accept excludes JSON, then 406 problem details', async () => {
      const res = await get(route).set('Accept', 'text/html').expect(406);
      expect(JSON.parse(res.text)).toMatchObject({ status: 406, code: 'NOT_ACCEPTABLE' });
      await get(route).set('Accept', 'application/*;q=0.5, text/html').expect(200);
    });
  },
);

describe('R7: one data version for both datasets', () => {
  it('when both endpoints are read, then they report the same currentVersion', async () => {
    const a = await request(app)
      .get('/api/v1/treatmentGroup?sinceVersion=3')
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    const b = await request(app)
      .get('/api/v1/reimbursement-group?since-version=3')
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    expect(a.body.currentVersion).toBe(3);
    expect(b.body.currentVersion).toBe(3);
  });
});

describe('unknown paths', () => {
  it.each(['/', '/api/v1/nothing', '/api/v2/treatmentGroup', '/api/v1/treatmentGroups'])(
    'when %s is requested, then 404 problem details',
    async (path) => {
      const res = await request(app)
        .get(path)
        .set('X-API-KEY', TEST_KEY)
        .expect(404)
        .expect('Content-Type', /application\/problem\+json/);
      expect(problemDetailsSchema.parse(JSON.parse(res.text))).toMatchObject({
        status: 404,
        code: 'NOT_FOUND',
        instance: path,
      });
    },
  );
});
