/**
 * A token that carries `pid` acts for that citizen: on every operation that names a citizen (set,
 * status, for-party, proofs, inclusions) `innbyggerFnr` must be `pid` or a citizen whom `pid`
 * represents (an imported relationship from `pid` of type foreldre, verge or fullmakt). Anyone
 * else is refused as a missing scope: 401 EPVK-100403 (these operations declare no 403), and
 * nothing is written. The active-citizens walk is refused to such a token altogether. Scopes and
 * grants still apply.
 */
import { INCLUSIONS_COLLECTION, SETTINGS_COLLECTION } from '@nhp/privacy-data-access';
import type { Definition, RepresentationRelationship } from '@nhp/privacy-domain';
import { fnrBornOn } from '@nhp/privacy-testing';
import { closeServer, listen, serverPort } from '@nhp/shared-http';
import request from 'supertest';
import { PATHS } from './settings-fixtures';
import { TEMPLATES, TEST_CLIENT, usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness();

const born = (date: string) => fnrBornOn(new Date(`${date}T00:00:00Z`));
const PARENT = born('1980-03-01');
const CHILD = born('2014-05-01');
const WARD = born('1990-07-01');
const PRINCIPAL = born('1950-02-01');
/** Gave PARENT a power of attorney the other way round: PARENT may not act for them. */
const GIVER = born('1955-04-01');
/** Names PARENT as their child: a relationship of someone else, not one PARENT holds. */
const OWN_PARENT = born('1950-09-01');
const STRANGER = born('1985-11-01');
const INCLUSION_PATH = '/v1/settinnbyggersinkludering';

function relationship(annenFnr: string, type: string): RepresentationRelationship {
  return {
    annenFnr,
    eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    fornavn: 'Kari',
    mellomnavn: null,
    etternavn: 'Nordmann',
    representasjonsforholdType: type,
    annenAdresse: false,
  };
}

let definition: Definition;

beforeAll(async () => {
  definition = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
  await h.get().grant(TEST_CLIENT, definition.partKode);
  await h.get().context.representation.replaceRelationships(
    new Map([
      [
        PARENT,
        [
          relationship(CHILD, 'foreldre'),
          relationship(WARD, 'Verge'),
          relationship(PRINCIPAL, 'fullmakt'),
          relationship(GIVER, 'fullmaktsgiver'),
        ],
      ],
      [OWN_PARENT, [relationship(PARENT, 'foreldre')]],
    ]),
    { importId: 'test', at: new Date(), actorId: 'test' },
  );
});

/** PARENT's token with both scopes (client TEST_CLIENT, which holds the party's grant). */
async function parent(options: { scopes?: string[] } = {}) {
  return h.get().bearer(await h.get().token({ pid: PARENT, ...options }));
}

async function system() {
  return h.get().bearer(await h.get().token());
}

const post = (path: string, auth: string, body: object) =>
  request(h.get().app).post(path).set('Authorization', auth).send(body);

const setBody = (fnr: string, aktiv = true) => ({
  innbyggerFnr: fnr,
  definisjonGuid: definition.definisjonGuid,
  partKode: definition.partKode,
  typePi: 'reservasjon',
  aktiv,
});

const inclusionBody = (fnr: string) => ({
  innbyggerFnr: fnr,
  partKode: definition.partKode,
  personvernInnstillingDefinisjonId: definition.definisjonGuid,
  inkluderingType: 'Inkludert',
});

function expectRefused(res: request.Response): void {
  expect(res.status).toBe(401);
  expect(res.body).toEqual({
    code: 'EPVK-100403',
    message: expect.any(String),
    errorCategory: 'ClientValidationError',
  });
  expect(res.headers['www-authenticate']).toContain('error="insufficient_scope"');
  // The refusal names no identity number.
  expect(res.text).not.toMatch(/\d{11}/);
}

/** The stored state of a citizen's setting and inclusion (what a refused write must leave alone). */
async function storedOf(fnr: string) {
  const { connection } = h.get();
  // The journal's relay empties a document's pending audit records after its write: let it finish.
  await h.get().journalIdle();
  const setting = await connection
    .collection(SETTINGS_COLLECTION)
    .findOne({ innbyggerFnr: fnr, definisjonGuid: definition.definisjonGuid });
  const inclusions = await connection
    .collection(INCLUSIONS_COLLECTION)
    .find({ innbyggerFnr: fnr })
    .toArray();
  return { setting, inclusions };
}

/** The operations that name a citizen, each as PARENT's token sends it for `fnr`. */
const READS: Array<[string, (fnr: string) => [string, object]]> = [
  [
    'status',
    (fnr) => [
      PATHS.status,
      {
        innbyggerFnr: fnr,
        definisjonGuid: definition.definisjonGuid,
        partKode: definition.partKode,
      },
    ],
  ],
  ['for-party', (fnr) => [PATHS.forPart, { innbyggerFnr: fnr, partKode: definition.partKode }]],
  [
    'proofs',
    (fnr) => [
      PATHS.proofs,
      {
        innbyggerFnr: fnr,
        definisjonGuid: definition.definisjonGuid,
        partKode: definition.partKode,
      },
    ],
  ],
];

describe("a citizen's token on the operations that name a citizen", () => {
  it.each([
    ['the citizen', () => PARENT],
    ['a child (foreldre)', () => CHILD],
    ['a ward (verge, in another letter case)', () => WARD],
    ['a principal (fullmakt)', () => PRINCIPAL],
  ])('when the token sets the setting of %s, then endret and it is stored', async (_who, fnr) => {
    const res = await post(PATHS.set, await parent(), setBody(fnr()));
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ returKode: 'ok', instansEndret: 'endret' });
    expect((await storedOf(fnr())).setting).toMatchObject({ aktiv: true, sekvensnummer: 1 });
  });

  it.each([
    ['a stranger', STRANGER],
    ['someone who gave the citizen a power of attorney (fullmaktsgiver)', GIVER],
    [
      "the citizen's own parent (a relationship held by the parent, not by the citizen)",
      OWN_PARENT,
    ],
  ])(
    'when the token sets the setting of %s, then 401 EPVK-100403 and nothing changes',
    async (_who, fnr) => {
      // An existing setting the refused request would change.
      await post(PATHS.set, await system(), setBody(fnr, true));
      const before = await storedOf(fnr);
      const res = await post(PATHS.set, await parent(), setBody(fnr, false));
      expectRefused(res);
      expect(await storedOf(fnr)).toEqual(before);
    },
  );

  it.each(READS)(
    'when the token reads %s of the citizen or of a represented child, then 200; of a stranger, then 401 EPVK-100403',
    async (_operation, requestFor) => {
      await post(PATHS.set, await system(), setBody(STRANGER));
      const auth = await parent();
      for (const fnr of [PARENT, CHILD]) {
        const [path, body] = requestFor(fnr);
        const res = await post(path, auth, body);
        expect(res.status).toBe(200);
        expect(JSON.stringify(res.body)).not.toContain(STRANGER);
      }
      const [path, body] = requestFor(STRANGER);
      expectRefused(await post(path, auth, body));
      // A system token with the same scopes and grant may read the stranger.
      expect((await post(path, await system(), body)).status).toBe(200);
    },
  );

  it('when the token includes the citizen or a represented child, then 200; a stranger, then 401 EPVK-100403 and no inclusion is written', async () => {
    const auth = await parent();
    for (const fnr of [PARENT, CHILD]) {
      const res = await post(INCLUSION_PATH, auth, inclusionBody(fnr));
      expect(res.status).toBe(200);
      expect((await storedOf(fnr)).inclusions).toHaveLength(1);
    }
    const before = await storedOf(STRANGER);
    expectRefused(await post(INCLUSION_PATH, auth, inclusionBody(STRANGER)));
    expect(await storedOf(STRANGER)).toEqual(before);
    expect(before.inclusions).toHaveLength(0);
  });

  it('when the token walks the active citizens of a definition, then 401 EPVK-100403; a system token walks them', async () => {
    await post(PATHS.set, await system(), setBody(STRANGER));
    const path = `${PATHS.active}?definisjonGuid=${definition.definisjonGuid}&partKode=${definition.partKode}`;
    expectRefused(
      await request(h.get().app)
        .get(path)
        .set('Authorization', await parent()),
    );
    const walked = await request(h.get().app)
      .get(path)
      .set('Authorization', await system());
    expect(walked.status).toBe(200);
    expect(walked.body.personvernInnstillinger.length).toBeGreaterThan(0);
  });

  it('when the token acts for the citizen but lacks the scope or the grant, then those still refuse it', async () => {
    const readOnly = await parent({ scopes: ['read'] });
    const noScope = await post(PATHS.set, readOnly, setBody(PARENT, false));
    expect(noScope.status).toBe(401);
    expect(noScope.body.code).toBe('EPVK-100403');

    const ungranted = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
    const noGrant = await post(PATHS.set, await parent(), {
      ...setBody(PARENT),
      definisjonGuid: ungranted.definisjonGuid,
      partKode: ungranted.partKode,
    });
    expect(noGrant.status).toBe(400);
    expect(noGrant.body.code).toBe('EPVK-101500');
  });

  it('when a DPoP-bound citizen token names a stranger, then the refusal challenges the DPoP scheme', async () => {
    const server = await listen(h.get().app, 0, '127.0.0.1');
    try {
      const url = `http://127.0.0.1:${serverPort(server)}${PATHS.status}`;
      const key = await h.get().issuer.newDpopKey();
      const token = await h.get().token({ pid: PARENT, dpopKey: key });
      const proof = await h
        .get()
        .issuer.dpopProof({ key, method: 'POST', url, accessToken: token });
      const body = {
        innbyggerFnr: STRANGER,
        definisjonGuid: definition.definisjonGuid,
        partKode: definition.partKode,
      };
      const res = await request(url)
        .post('')
        .set('Authorization', `DPoP ${token}`)
        .set('DPoP', proof)
        .send(body);
      expectRefused(res);
      expect(res.headers['www-authenticate']).toMatch(/^Bearer, DPoP error="insufficient_scope"/);
    } finally {
      await closeServer(server, 1000);
    }
  });
});
