/**
 * Strings that are not text: a JSON escape of one half of a surrogate pair ("\ud800") parses to a
 * string that no UTF-8 can carry. encodeURIComponent throws on it (a partKode like that made the
 * grant lookup of hentinnbyggerspiforpart answer 500), and MongoDB's UTF-8 would store U+FFFD
 * instead of what was sent. Whatever string field of whatever body route carries one, the answer
 * is 400 EPVK-100400 and nothing is written. No field takes one as free text: it is not text.
 */
import { randomUUID } from 'node:crypto';
import {
  DEFINITIONS_COLLECTION,
  INCLUSIONS_COLLECTION,
  PARTS_COLLECTION,
  PROOFS_COLLECTION,
  SETTINGS_COLLECTION,
} from '@nhp/privacy-data-access';
import type { Definition } from '@nhp/privacy-domain';
import { fnrBornOn, syntheticFnr } from '@nhp/privacy-testing';
import fc from 'fast-check';
import request from 'supertest';
import { PATHS } from './settings-fixtures';
import { TEMPLATES, TEST_CLIENT, usePrivacyHarness } from './support/harness';
import { bodyRoutes } from './support/routes';

const h = usePrivacyHarness();

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Method = 'post' | 'put' | 'patch' | 'delete';
type Caller = 'admin' | 'system' | 'citizen';

interface BodyRoute {
  method: Method;
  path: string;
  caller: Caller;
  /** A body the route accepts (2xx), with every string field it knows filled in. */
  valid: () => Json;
}

let part: string;
let tb: Definition;
const fnr = syntheticFnr(4242);
/** A citizen aged 15, for the youth-app consent. */
const youth = fnrBornOn(new Date(Date.UTC(2011, 5, 1)), { synthetic: true });

const ROUTES: BodyRoute[] = [
  {
    method: 'post',
    path: '/part/v1',
    caller: 'admin',
    valid: () => ({
      partKode: `s-${randomUUID().slice(0, 8)}`,
      navn: 'Navn',
      kortNavn: 'Kort',
      beskrivelse: 'Beskrivelse',
      uri: 'https://part.example',
    }),
  },
  {
    method: 'put',
    path: '/part/v1',
    caller: 'admin',
    valid: () => ({ partKode: part, navn: 'Navn', kortNavn: 'K', beskrivelse: 'B', uri: 'u' }),
  },
  {
    method: 'post',
    path: '/innstillingdefinisjon/v1',
    caller: 'admin',
    valid: () => ({
      definisjonMalGuid: TEMPLATES.samtykke,
      definisjonGuid: randomUUID(),
      partKode: part,
      navn: 'Navn',
      beskrivelse: 'Beskrivelse',
      visning: 'Visning',
      fullstendigTekstInnhold: 'Tekst',
      relasjoner: [{ definisjonGuid: tb.definisjonGuid, relasjonType: 'type', beskrivelse: 'b' }],
    }),
  },
  {
    method: 'patch',
    path: '/innstillingdefinisjon/v1',
    caller: 'admin',
    valid: () => ({ definisjonGuid: tb.definisjonGuid, visning: 'Visning', status: 'aktiv' }),
  },
  {
    method: 'post',
    path: PATHS.set,
    caller: 'system',
    valid: () => ({
      innbyggerFnr: fnr,
      definisjonGuid: tb.definisjonGuid,
      definisjonNavn: 'Navn',
      partKode: part,
      typePi: 'tilgangsbegrensning',
      aktiv: true,
      tidspunkt: '2026-01-01T10:00:00Z',
      tbInnbyggerMetadata: {
        tidsbegrensning: {
          perioder: [{ fraDato: '2026-01-01T00:00:00Z', tilDato: '2026-12-31' }],
        },
        detaljertAngivelse: {
          navngittHelseperson: [{ nummer: '123', navn: 'Lege' }],
          helseforetak: [{ nummer: '456', navn: 'Sykehus' }],
        },
      },
    }),
  },
  {
    method: 'post',
    path: PATHS.status,
    caller: 'system',
    valid: () => ({
      innbyggerFnr: fnr,
      definisjonGuid: tb.definisjonGuid,
      definisjonNavn: 'Navn',
      partKode: part,
    }),
  },
  {
    method: 'post',
    path: PATHS.forPart,
    caller: 'system',
    valid: () => ({ innbyggerFnr: fnr, partKode: part }),
  },
  {
    method: 'post',
    path: PATHS.proofs,
    caller: 'system',
    valid: () => ({ innbyggerFnr: fnr, definisjonGuid: tb.definisjonGuid, partKode: part }),
  },
  {
    method: 'post',
    path: '/settinnbyggersinkludering/v1',
    caller: 'system',
    valid: () => ({
      innbyggerFnr: fnr,
      partKode: part,
      personvernInnstillingDefinisjonId: tb.definisjonGuid,
      inkluderingType: 'Inkludert',
      aktiv: true,
    }),
  },
  { method: 'post', path: '/ungdomsapp/v1', caller: 'citizen', valid: () => ({}) },
  { method: 'delete', path: '/ungdomsapp/v1', caller: 'citizen', valid: () => ({}) },
];

async function authorization(caller: Caller): Promise<string> {
  const { bearer, adminToken, token, citizenToken } = h.get();
  if (caller === 'admin') return bearer(await adminToken());
  if (caller === 'citizen') return bearer(await citizenToken(youth));
  return bearer(await token());
}

function send(route: BodyRoute, body: Json, auth: string) {
  return request(h.get().app)
    [route.method](route.path)
    .set('Authorization', auth)
    .set('Content-Type', 'application/json')
    .send(JSON.stringify(body));
}

/**
 * Every document the body routes write, as JSON: a refused request must leave it as it was. The
 * journal (audit entries on their way out) is left out: the relay empties it in the background.
 */
async function written(): Promise<string> {
  const collections = [
    PARTS_COLLECTION,
    DEFINITIONS_COLLECTION,
    SETTINGS_COLLECTION,
    PROOFS_COLLECTION,
    INCLUSIONS_COLLECTION,
  ];
  const documents = await Promise.all(
    collections.map((name) =>
      h
        .get()
        .connection.collection(name)
        .find({}, { projection: { journal: 0 } })
        .sort({ _id: 1 })
        .toArray(),
    ),
  );
  return JSON.stringify(documents);
}

type Path = Array<string | number>;

/** The path of every string in a JSON value. */
function stringPaths(value: Json, path: Path = []): Path[] {
  if (typeof value === 'string') return [path];
  if (Array.isArray(value)) return value.flatMap((item, i) => stringPaths(item, [...path, i]));
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).flatMap(([key, item]) => stringPaths(item, [...path, key]));
  }
  return [];
}

/** A copy of `value` with the string at `path` replaced by `change(it)`. */
function changedAt(value: Json, path: Path, change: (s: string) => string): Json {
  const [head, ...rest] = path;
  if (head === undefined) return typeof value === 'string' ? change(value) : value;
  if (Array.isArray(value)) {
    return value.map((item, i) => (i === head ? changedAt(item, rest, change) : item));
  }
  if (typeof value === 'object' && value !== null) {
    return { ...value, [head]: changedAt(value[head] as Json, rest, change) };
  }
  return value;
}

/** One half of a surrogate pair, alone (its neighbours are ASCII, so it cannot pair). */
const loneSurrogate = fc
  .integer({ min: 0xd800, max: 0xdfff })
  .map((code) => String.fromCharCode(code));

/** Where in a string the surrogate goes: replacing it, or at a position inside it. */
const placement = fc.oneof(
  fc.constant((_s: string, lone: string) => lone),
  fc.nat().map((n) => (s: string, lone: string) => {
    const at = n % (s.length + 1);
    return `${s.slice(0, at)}${lone}${s.slice(at)}`;
  }),
);

beforeAll(async () => {
  part = (await h.get().seedPart()).partKode;
  tb = await h.get().seedDefinition({ partKode: part, template: TEMPLATES.tilgangsbegrensning });
  await h.get().grant(TEST_CLIENT, part);
});

describe('unpaired surrogates in request bodies', () => {
  it('when the route list is compared with the router, then every body route of the app has a case here', () => {
    const served = new Set(
      bodyRoutes(h.get().app).map((r) => `${r.method} ${r.path.toLowerCase()}`),
    );
    const covered = new Set(ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path.toLowerCase()}`));
    // Each operation once (the second spelling of a path behaves as the first).
    const spellings: Record<string, string> = {
      'POST /v1/settinnbyggersinkludering': 'POST /settinnbyggersinkludering/v1',
      'POST /v1/ungdomsapp': 'POST /ungdomsapp/v1',
      'DELETE /v1/ungdomsapp': 'DELETE /ungdomsapp/v1',
    };
    for (const route of served) expect(covered).toContain(spellings[route] ?? route);
  });

  it.each(ROUTES.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
    'when %s gets its valid body, then it is accepted (so the refusals below are the surrogate’s)',
    async (_name, route) => {
      const res = await send(route, route.valid(), await authorization(route.caller));
      expect(res.status).toBeGreaterThanOrEqual(200);
      expect(res.status).toBeLessThan(300);
    },
  );

  it.each(ROUTES.map((route) => [`${route.method.toUpperCase()} ${route.path}`, route] as const))(
    'when any string field of %s, or a key, holds an unpaired surrogate, then 400 EPVK-100400, never 500, and nothing is written',
    async (_name, route) => {
      const auth = await authorization(route.caller);
      const paths = stringPaths(route.valid());
      const target = fc.oneof(
        ...(paths.length > 0
          ? [fc.constantFrom(...paths).map((path) => ({ kind: 'value' as const, path }))]
          : []),
        fc.constant({ kind: 'key' as const, path: [] as Path }),
      );
      await fc.assert(
        fc.asyncProperty(target, loneSurrogate, placement, async (where, lone, place) => {
          const valid = route.valid();
          const body =
            where.kind === 'value'
              ? changedAt(valid, where.path, (s) => place(s, lone))
              : { ...(valid as Record<string, Json>), [place('extra', lone)]: 'x' };
          const before = await written();
          const res = await send(route, body, auth);
          expect(res.status).toBe(400);
          expect(res.body).toEqual({
            code: 'EPVK-100400',
            message: expect.any(String),
            errorCategory: 'ClientValidationError',
          });
          expect(res.headers['x-request-id']).toEqual(expect.any(String));
          expect(await written()).toEqual(before);
        }),
        { numRuns: 25 },
      );
    },
    60_000,
  );

  it('when hentinnbyggerspiforpart gets partKode "\\ud800" as the JSON escape, then 400 EPVK-100400, not 500', async () => {
    const res = await request(h.get().app)
      .post(PATHS.forPart)
      .set('Authorization', h.get().bearer(await h.get().token({ scopes: ['read'] })))
      .set('Content-Type', 'application/json')
      .send('{"innbyggerFnr":"13116900216","partKode":"\\ud800"}');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'EPVK-100400',
      message: expect.any(String),
      errorCategory: 'ClientValidationError',
    });
  });
});

describe('partKode in the settings operations', () => {
  it.each(['a b', 'a.b', 'æøå', 'x'.repeat(65), ''])(
    'when a settings body names the partKode %j, which no party can have, then 400 EPVK-100400 naming partKode',
    async (partKode) => {
      const auth = h.get().bearer(await h.get().token());
      for (const [path, body] of [
        [PATHS.forPart, { innbyggerFnr: fnr, partKode }],
        [PATHS.status, { innbyggerFnr: fnr, definisjonGuid: tb.definisjonGuid, partKode }],
        [PATHS.proofs, { innbyggerFnr: fnr, definisjonGuid: tb.definisjonGuid, partKode }],
      ] as const) {
        const res = await request(h.get().app)
          .post(path)
          .set('Authorization', auth)
          .set('X-hn-isdebug', 'true')
          .send(body);
        expect(res.status).toBe(400);
        expect(res.body).toMatchObject({ code: 'EPVK-100400' });
        expect(res.body.message).toContain('body.partKode');
      }
      const query = await request(h.get().app)
        .get(PATHS.active)
        .query({ definisjonGuid: tb.definisjonGuid, partKode })
        .set('Authorization', auth);
      // An empty query value counts as absent there (the first page of every party's citizens).
      if (partKode !== '') expect(query.status).toBe(400);
    },
  );

  it('when a settings body names a well-formed partKode of no party, then the answer is unchanged (an empty list, or 101500)', async () => {
    const auth = h.get().bearer(await h.get().token());
    const forPart = await request(h.get().app)
      .post(PATHS.forPart)
      .set('Authorization', auth)
      .send({ innbyggerFnr: fnr, partKode: 'no-such-part' });
    expect(forPart.status).toBe(200);
    expect(forPart.body).toEqual({ personvernInnstillinger: [] });
    const status = await request(h.get().app)
      .post(PATHS.status)
      .set('Authorization', auth)
      .send({ innbyggerFnr: fnr, definisjonGuid: tb.definisjonGuid, partKode: 'no-such-part' });
    expect(status.status).toBe(400);
    expect(status.body).toMatchObject({ code: 'EPVK-101500' });
  });
});

describe('unpaired surrogates in the access token', () => {
  it('when a token’s client_id holds an unpaired surrogate, then 401 EPVK-100401, not 500', async () => {
    const token = await h.get().token({ clientId: 'client-\ud800', scopes: ['read'] });
    const res = await request(h.get().app)
      .post(PATHS.forPart)
      .set('Authorization', h.get().bearer(token))
      .send({ innbyggerFnr: fnr, partKode: part });
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'EPVK-100401' });
  });
});
