/**
 * The final state of a citizen's setting never depends on the order in which set requests arrive:
 * it is the state of the latest request by tidspunkt (every accepted request counts, a repeat of
 * the state included), requests with the same tidspunkt ordered by their content (aktiv false
 * before true, then the canonical metadata as JSON text, then the proof's SHA-256, none first).
 * Checked through HTTP against the real app, one request at a time and all at once.
 */
import { createHash } from 'node:crypto';
import type { InnbyggerMetadata, InnbyggerMetadataInput } from '@nhp/privacy-contracts';
import { PROOFS_COLLECTION, SETTINGS_COLLECTION } from '@nhp/privacy-data-access';
import { normaliseMetadata, type Definition } from '@nhp/privacy-domain';
import { syntheticFnr } from '@nhp/privacy-testing';
import fc from 'fast-check';
import request from 'supertest';
import { PATHS, PROOF_BYTES } from './settings-fixtures';
import { TEMPLATES, TEST_CLIENT, usePrivacyHarness } from './support/harness';

const h = usePrivacyHarness();

let fnrSeq = 20_000;
const nextFnr = () => syntheticFnr(fnrSeq++);

const T0 = Date.parse('2026-01-01T00:00:00Z');

/** Citizen metadata as clients send it: absent, two spellings of "none", and two real differences. */
const METADATA_INPUTS: Array<InnbyggerMetadataInput | undefined> = [
  undefined,
  { tidsbegrensning: null },
  { tidsbegrensning: { perioder: [] } },
  { tidsbegrensning: { perioder: [{ fraDato: '2026-01-01T00:00:00Z' }] } },
  { tidsbegrensning: { perioder: [{ fraDato: '2026-01-01T01:00:00+01:00', tilDato: null }] } },
];
const PROOFS: Array<Buffer | undefined> = [
  undefined,
  PROOF_BYTES.png,
  Buffer.concat([PROOF_BYTES.png, Buffer.from('another proof')]),
];

interface SetCase {
  /** Seconds after T0. */
  second: number;
  aktiv: boolean;
  metadata: number;
  proof: number;
}

interface Canonical {
  tidspunkt: number;
  aktiv: boolean;
  metadata: InnbyggerMetadata;
  proofSha256: string | undefined;
}

function defined<T>(value: T | null | undefined): T {
  if (value === null || value === undefined) throw new Error('expected a value');
  return value;
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function canonical(c: SetCase): Canonical {
  const proof = PROOFS[c.proof];
  return {
    tidspunkt: T0 + c.second * 1000,
    aktiv: c.aktiv,
    metadata: normaliseMetadata('reservasjon', METADATA_INPUTS[c.metadata]),
    proofSha256: proof && sha256(proof),
  };
}

/** The documented order of requests: tidspunkt, then aktiv, metadata (canonical JSON), proof. */
function compare(a: Canonical, b: Canonical): number {
  if (a.tidspunkt !== b.tidspunkt) return a.tidspunkt - b.tidspunkt;
  if (a.aktiv !== b.aktiv) return a.aktiv ? 1 : -1;
  const [ma, mb] = [JSON.stringify(a.metadata), JSON.stringify(b.metadata)];
  if (ma !== mb) return ma < mb ? -1 : 1;
  const [pa, pb] = [a.proofSha256 ?? '', b.proofSha256 ?? ''];
  return pa === pb ? 0 : pa < pb ? -1 : 1;
}

function body(definition: Definition, fnr: string, c: SetCase): Record<string, unknown> {
  const metadata = METADATA_INPUTS[c.metadata];
  const proof = PROOFS[c.proof];
  return {
    innbyggerFnr: fnr,
    definisjonGuid: definition.definisjonGuid,
    partKode: definition.partKode,
    typePi: 'reservasjon',
    aktiv: c.aktiv,
    tidspunkt: new Date(T0 + c.second * 1000).toISOString(),
    ...(metadata === undefined ? {} : { reInnbyggerMetadata: metadata }),
    ...(proof === undefined
      ? {}
      : { signertBevisMimeType: 'image/png', signertBevisInnhold: proof.toString('base64') }),
  };
}

let definition: Definition;
let auth: string;

beforeAll(async () => {
  definition = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
  await h.get().grant(TEST_CLIENT, definition.partKode);
  auth = h.get().bearer(await h.get().token());
});

async function set(fnr: string, c: SetCase): Promise<string> {
  const res = await request(h.get().app)
    .post(PATHS.set)
    .set('Authorization', auth)
    .send(body(definition, fnr, c));
  expect(res.status).toBe(200);
  return res.body.instansEndret as string;
}

interface StoredEntry {
  applied: boolean;
  sekvensnummer: number;
}

/** The citizen's state as stored and as read, checked against the requests sent and their answers. */
async function expectFinalState(fnr: string, cases: SetCase[], answers: string[]): Promise<void> {
  const requests = cases.map(canonical);
  const latest = requests.reduce((best, r) => (compare(r, best) > 0 ? r : best));
  const doc = defined(
    await h
      .get()
      .connection.collection(SETTINGS_COLLECTION)
      .findOne({ innbyggerFnr: fnr, definisjonGuid: definition.definisjonGuid }),
  );
  expect({ aktiv: doc['aktiv'], metadata: doc['metadata'] }).toEqual({
    aktiv: latest.aktiv,
    metadata: latest.metadata,
  });
  if (latest.proofSha256) expect(doc['proofSha256']).toBe(latest.proofSha256);

  // Every endret answer made exactly one new sekvensnummer, consecutive from 1.
  const endret = answers.filter((a) => a === 'endret').length;
  expect(doc['sekvensnummer']).toBe(endret);
  const history = doc['history'] as StoredEntry[];
  expect(history.filter((e) => e.applied).map((e) => e.sekvensnummer)).toEqual(
    Array.from({ length: endret }, (_, i) => i + 1),
  );
  // Every distinct request is recorded once; an exact repeat of a recorded one writes nothing.
  const distinct = new Set(
    requests.map((r) => JSON.stringify([r.tidspunkt, r.aktiv, r.metadata, r.proofSha256])),
  );
  expect(history).toHaveLength(distinct.size);

  const status = await request(h.get().app).post(PATHS.status).set('Authorization', auth).send({
    innbyggerFnr: fnr,
    definisjonGuid: definition.definisjonGuid,
    partKode: definition.partKode,
  });
  expect(status.status).toBe(200);
  expect(status.body).toMatchObject({
    aktiv: latest.aktiv,
    sekvensnummer: endret,
    reMetadata: { reInnbyggerMetadata: latest.metadata },
  });
}

const caseArb: fc.Arbitrary<SetCase> = fc.record({
  // Few distinct times: ties and equal repeats are common.
  second: fc.integer({ min: 0, max: 4 }),
  aktiv: fc.boolean(),
  metadata: fc.integer({ min: 0, max: METADATA_INPUTS.length - 1 }),
  proof: fc.oneof(
    { weight: 3, arbitrary: fc.constant(0) },
    { weight: 1, arbitrary: fc.integer({ min: 1, max: PROOFS.length - 1 }) },
  ),
});

/** Requests (exact repeats included), in an arbitrary order. */
const shuffledCases = fc
  .array(caseArb, { minLength: 1, maxLength: 10 })
  .chain((unique) =>
    fc
      .subarray(unique, { maxLength: Math.min(4, unique.length) })
      .map((again) => [...unique, ...again]),
  )
  .chain((all) => fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }));

describe('property: the order requests arrive in does not decide the state', () => {
  it('when any set of requests is sent one at a time in any order, then the state is that of the latest request and sekvensnummer counts the changes', async () => {
    await fc.assert(
      fc.asyncProperty(shuffledCases, async (cases) => {
        const fnr = nextFnr();
        const answers: string[] = [];
        for (const c of cases) answers.push(await set(fnr, c));
        await expectFinalState(fnr, cases, answers);
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('when any set of requests is sent all at once, then the state is that of the latest request and sekvensnummer counts the changes', async () => {
    await fc.assert(
      fc.asyncProperty(shuffledCases, async (cases) => {
        const fnr = nextFnr();
        const answers = await Promise.all(cases.map((c) => set(fnr, c)));
        await expectFinalState(fnr, cases, answers);
      }),
      { numRuns: 40 },
    );
  }, 120_000);
});

describe('ordering examples', () => {
  it('when 40 sets one second apart with aktiv alternating in pairs are sent at once, then the state is the latest one', async () => {
    const fnr = nextFnr();
    const cases: SetCase[] = Array.from({ length: 40 }, (_, i) => ({
      second: i,
      aktiv: Math.floor(i / 2) % 2 === 0,
      metadata: 0,
      proof: 0,
    }));
    const answers = await Promise.all(cases.map((c) => set(fnr, c)));
    expect(cases.at(-1)?.aktiv).toBe(false);
    await expectFinalState(fnr, cases, answers);
  });

  it('when a change dated between a change and a later repeat of it arrives last, then ikkeEndret and the state stays', async () => {
    const fnr = nextFnr();
    const at = (minute: number, aktiv: boolean): SetCase => ({
      second: minute * 60,
      aktiv,
      metadata: 0,
      proof: 0,
    });
    const cases = [at(0, true), at(20, true), at(10, false)];
    const answers: string[] = [];
    for (const c of cases) answers.push(await set(fnr, c));
    expect(answers).toEqual(['endret', 'ikkeEndret', 'ikkeEndret']);
    await expectFinalState(fnr, cases, answers);
    const status = await request(h.get().app).post(PATHS.status).set('Authorization', auth).send({
      innbyggerFnr: fnr,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
    });
    // The client-visible times stay the change's.
    expect(status.body).toMatchObject({
      opprettetTidspunkt: '2026-01-01T00:00:00.000Z',
      sistEndretTidspunkt: '2026-01-01T00:00:00.000Z',
    });
  });

  it('when the current state and its proof come again dated later, then ikkeEndret, no sekvensnummer, and the proof is listed once', async () => {
    const fnr = nextFnr();
    const withProof = (second: number): SetCase => ({ second, aktiv: true, metadata: 0, proof: 1 });
    expect(await set(fnr, withProof(0))).toBe('endret');
    expect(await set(fnr, withProof(0))).toBe('ikkeEndret');
    expect(await set(fnr, withProof(30))).toBe('ikkeEndret');
    await expectFinalState(fnr, [withProof(0), withProof(0), withProof(30)], ['endret']);
    const listed = await request(h.get().app).post(PATHS.proofs).set('Authorization', auth).send({
      innbyggerFnr: fnr,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
    });
    expect(
      listed.body.opplastedeBevis.map((p: { sekvensnummer: number; historisk: boolean }) => [
        p.sekvensnummer,
        p.historisk,
      ]),
    ).toEqual([[1, false]]);
    // The confirming repeat refers to the stored bytes instead of storing them again.
    const doc = defined(
      await h.get().connection.collection(SETTINGS_COLLECTION).findOne({ innbyggerFnr: fnr }),
    );
    expect(await h.get().count(PROOFS_COLLECTION, { settingId: doc['_id'] })).toBe(1);
  });

  it('when two requests with the same tidspunkt differ only in aktiv, then aktiv true wins whichever comes first', async () => {
    for (const order of [
      [false, true],
      [true, false],
    ]) {
      const fnr = nextFnr();
      const cases = order.map((aktiv) => ({ second: 7, aktiv, metadata: 0, proof: 0 }));
      const answers: string[] = [];
      for (const c of cases) answers.push(await set(fnr, c));
      await expectFinalState(fnr, cases, answers);
    }
  });
});
