import { PROOFS_COLLECTION, SETTINGS_COLLECTION } from '@nhp/privacy-data-access';
import fc from 'fast-check';
import { syntheticFnr } from '@nhp/privacy-testing';
import request from 'supertest';
import { TEMPLATES, TEST_CLIENT, usePrivacyHarness } from './support/harness';
import { PATHS } from './settings-fixtures';

const h = usePrivacyHarness();

/** Anything JSON can carry, including the wrong types for every field. */
const anyJson = fc.jsonValue({ maxDepth: 3 });

describe('settings operations under invalid bodies', () => {
  it('when the bodies are random or almost right, then the answer is always 400 with ErrorResponse, never 500, and nothing is written', async () => {
    const def = await h.get().seedDefinition({ template: TEMPLATES.tilgangsbegrensning });
    await h.get().grant(TEST_CLIENT, def.partKode);
    const auth = h.get().bearer(await h.get().token());
    const fnr = syntheticFnr(77);
    const valid = {
      innbyggerFnr: fnr,
      definisjonGuid: def.definisjonGuid,
      partKode: def.partKode,
      aktiv: true,
    };
    // One field of a valid body replaced by anything, or one unknown field added.
    const almost = fc.oneof(
      fc
        .record({
          key: fc.constantFrom(
            'innbyggerFnr',
            'definisjonGuid',
            'partKode',
            'aktiv',
            'typePi',
            'tidspunkt',
            'signertBevisMimeType',
            'signertBevisInnhold',
            'tbInnbyggerMetadata',
            'saInnbyggerMetadata',
          ),
          value: anyJson,
        })
        .filter(({ key, value }) => !(key === 'aktiv' && typeof value === 'boolean'))
        .filter(({ key, value }) => !(key.endsWith('InnbyggerMetadata') && value === null))
        // A plain object may be valid access-restriction metadata: this test is about invalid ones.
        .filter(
          ({ key, value }) =>
            !(key === 'tbInnbyggerMetadata' && typeof value === 'object' && !Array.isArray(value)),
        )
        // An empty or null proof field counts as no proof: a valid request.
        .filter(
          ({ key, value }) => !(key.startsWith('signertBevis') && (value === null || value === '')),
        )
        .filter(({ key, value }) => !(key === 'typePi' && value === null))
        .filter(({ key, value }) => !(key === 'tidspunkt' && value === null))
        .map(({ key, value }) => ({ ...valid, [key]: value })),
      fc
        .record({ key: fc.string({ minLength: 1 }), value: anyJson })
        .filter(({ key }) => !(key in valid) && !['__proto__', 'constructor'].includes(key))
        .map(({ key, value }) => ({ ...valid, [key]: value })),
      anyJson,
    );
    const paths = fc.constantFrom(PATHS.set, PATHS.status, PATHS.forPart, PATHS.proofs);

    await fc.assert(
      fc.asyncProperty(paths, almost, async (path, body) => {
        const res = await request(h.get().app)
          .post(path)
          .set('Authorization', auth)
          .set('Content-Type', 'application/json')
          .send(JSON.stringify(body));
        if (res.status === 200) {
          // Only a read may succeed on an almost-valid body (e.g. an extra-valid partKode value).
          expect(path).not.toBe(PATHS.set);
          return;
        }
        expect(res.status).toBe(400);
        expect(res.body).toEqual({
          code: expect.stringMatching(/^EPVK-10\d{4}$/),
          message: expect.any(String),
          errorCategory: expect.any(String),
        });
      }),
      { numRuns: 150 },
    );
    expect(await h.get().count(SETTINGS_COLLECTION)).toBe(0);
    expect(await h.get().count(PROOFS_COLLECTION)).toBe(0);
  }, 120_000);

  it('when the query of the active-citizens walk is random, then never 500', async () => {
    const def = await h.get().seedDefinition({ template: TEMPLATES.samtykke });
    await h.get().grant(TEST_CLIENT, def.partKode);
    const auth = h.get().bearer(await h.get().token());
    await fc.assert(
      fc.asyncProperty(
        fc.dictionary(
          fc.constantFrom('definisjonGuid', 'partKode', 'pagingReference', 'x'),
          fc.oneof(fc.string(), fc.integer().map(String), fc.constant(def.definisjonGuid)),
        ),
        async (query) => {
          const res = await request(h.get().app)
            .get(PATHS.active)
            .query(query)
            .set('Authorization', auth);
          expect([200, 400]).toContain(res.status);
        },
      ),
      { numRuns: 100 },
    );
  }, 120_000);
});
