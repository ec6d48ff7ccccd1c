/**
 * The order in which set requests arrive never decides a setting's final state: the state is that
 * of the latest request by tidspunkt, every accepted request counted (a repeat of the state too),
 * and requests with the same tidspunkt are ordered by their content (see decideSet).
 *
 * `applySequentially` is a model of what the settings use case stores for each decision: the
 * state at the top, one history entry per recorded request.
 */
import type { InnbyggerMetadata } from '@nhp/privacy-contracts';
import fc from 'fast-check';
import {
  decideSet,
  normaliseMetadata,
  type Decision,
  type SetRequest,
  type SettingHistoryEntry,
  type StoredSetting,
} from '../src';

const T0 = Date.parse('2026-01-01T00:00:00Z');
const minute = (n: number) => new Date(T0 + n * 60_000);

/** Metadata variants: two spellings of "none" (one canonical form) and two real differences. */
const METADATA: InnbyggerMetadata[] = [
  normaliseMetadata('reservasjon', undefined),
  normaliseMetadata('reservasjon', { tidsbegrensning: null }),
  normaliseMetadata('reservasjon', { tidsbegrensning: { perioder: [] } }),
  normaliseMetadata('reservasjon', {
    tidsbegrensning: { perioder: [{ fraDato: '2026-01-01T00:00:00Z' }] },
  }),
];
const PROOFS = [undefined, 'a'.repeat(64), 'b'.repeat(64)];

interface Outcome {
  stored: StoredSetting | undefined;
  answers: Array<Decision['kind']>;
}

function entryOf(
  request: SetRequest,
  recordNo: number,
  sekvensnummer: number,
  applied: boolean,
): SettingHistoryEntry {
  return {
    recordNo,
    sekvensnummer,
    applied,
    tidspunkt: request.tidspunkt,
    registrert: request.tidspunkt,
    aktiv: request.aktiv,
    metadata: request.metadata,
    proof: request.proofSha256
      ? { id: `proof-${recordNo}`, sha256: request.proofSha256, mimeType: 'image/png' }
      : null,
  };
}

/** Applies each request in turn as the use case stores its decision. */
function applySequentially(requests: SetRequest[]): Outcome {
  let stored: StoredSetting | undefined;
  const answers: Array<Decision['kind']> = [];
  for (const request of requests) {
    const decision = decideSet(stored, request);
    answers.push(decision.kind);
    const proofSha256 = request.proofSha256 ?? null;
    if (decision.kind === 'create') {
      stored = {
        version: 1,
        history: [entryOf(request, 1, 1, true)],
        state: {
          id: 's',
          innbyggerFnr: '13116900216',
          definisjonGuid: 'd',
          partKode: 'p',
          typePi: 'reservasjon',
          aktiv: request.aktiv,
          metadata: request.metadata,
          sekvensnummer: 1,
          opprettetTidspunkt: request.tidspunkt,
          sistEndretTidspunkt: request.tidspunkt,
          latestTidspunkt: request.tidspunkt,
          latestProofSha256: proofSha256,
          proofSha256,
          pagingKey: 1,
        },
      };
      continue;
    }
    if (decision.kind === 'unchanged' || !stored) continue;
    const recordNo = stored.version + 1;
    const state = stored.state;
    let entry: SettingHistoryEntry;
    if (decision.kind === 'change') {
      stored.state = {
        ...state,
        aktiv: request.aktiv,
        metadata: request.metadata,
        sekvensnummer: decision.sekvensnummer,
        sistEndretTidspunkt: request.tidspunkt,
        latestTidspunkt: request.tidspunkt,
        latestProofSha256: proofSha256,
        proofSha256,
      };
      entry = entryOf(request, recordNo, decision.sekvensnummer, true);
    } else if (decision.kind === 'superseded') {
      entry = entryOf(request, recordNo, decision.sekvensnummerInForce, false);
    } else {
      // A repeat of the state dated later: the state holds until then, nothing else changes.
      stored.state = {
        ...state,
        latestTidspunkt: request.tidspunkt,
        latestProofSha256: proofSha256,
      };
      entry = { ...entryOf(request, recordNo, state.sekvensnummer, false), confirmed: true };
    }
    stored.version = recordNo;
    stored.history = [...stored.history, entry];
  }
  return { stored, answers };
}

/** The documented order: tidspunkt, then aktiv (false before true), metadata as canonical JSON, proof (none first). */
function compareRequests(a: SetRequest, b: SetRequest): number {
  const byTime = a.tidspunkt.getTime() - b.tidspunkt.getTime();
  if (byTime !== 0) return byTime;
  if (a.aktiv !== b.aktiv) return a.aktiv ? 1 : -1;
  const [ma, mb] = [JSON.stringify(a.metadata), JSON.stringify(b.metadata)];
  if (ma !== mb) return ma < mb ? -1 : 1;
  const [pa, pb] = [a.proofSha256 ?? '', b.proofSha256 ?? ''];
  return pa === pb ? 0 : pa < pb ? -1 : 1;
}

function defined<T>(value: T | undefined): T {
  if (value === undefined) throw new Error('expected a value');
  return value;
}

const latestOf = (requests: SetRequest[]) =>
  requests.reduce((best, r) => (compareRequests(r, best) > 0 ? r : best));

const distinctCount = (requests: SetRequest[]) =>
  new Set(
    requests.map((r) =>
      JSON.stringify([r.tidspunkt.getTime(), r.aktiv, r.metadata, r.proofSha256 ?? null]),
    ),
  ).size;

const requestArb: fc.Arbitrary<SetRequest> = fc.record({
  // Few distinct times: ties and equal repeats are common.
  tidspunkt: fc.integer({ min: 0, max: 5 }).map(minute),
  aktiv: fc.boolean(),
  metadata: fc.constantFrom(...METADATA),
  proofSha256: fc.constantFrom(...PROOFS),
});

/** A list of requests (exact repeats included) and a permutation of it. */
const requestsAndOrder = fc.array(requestArb, { minLength: 1, maxLength: 12 }).chain((unique) =>
  fc
    .subarray(unique)
    .map((repeats) => [...unique, ...repeats])
    .chain((all) =>
      fc.tuple(
        fc.constant(all),
        fc.shuffledSubarray(all, { minLength: all.length, maxLength: all.length }),
      ),
    ),
);

describe('property: the final state does not depend on the order requests arrive in', () => {
  it('when any set of requests is applied in any order, then the state is that of the latest request (ties by content) and every change made one consecutive sekvensnummer', () => {
    fc.assert(
      fc.property(requestsAndOrder, ([requests, order]) => {
        const outcome = applySequentially(order);
        const stored = defined(outcome.stored);
        const answers = outcome.answers;
        const latest = latestOf(requests);
        const state = stored.state;
        expect({ aktiv: state.aktiv, metadata: state.metadata }).toEqual({
          aktiv: latest.aktiv,
          metadata: latest.metadata,
        });
        if (latest.proofSha256) expect(state.proofSha256).toBe(latest.proofSha256);

        const changes = answers.filter((k) => k === 'create' || k === 'change').length;
        expect(state.sekvensnummer).toBe(changes);
        const applied = stored.history.filter((e) => e.applied).map((e) => e.sekvensnummer);
        expect(applied).toEqual(Array.from({ length: changes }, (_, i) => i + 1));
        // Every distinct request is recorded once; an exact repeat of a recorded one writes nothing.
        expect(stored.history).toHaveLength(distinctCount(requests));
      }),
      { numRuns: 2000 },
    );
  });

  it('when the same requests come in two different orders, then both end in the same aktiv and metadata', () => {
    fc.assert(
      fc.property(
        requestsAndOrder.chain(([requests, order]) =>
          fc.tuple(
            fc.constant(order),
            fc.shuffledSubarray(requests, {
              minLength: requests.length,
              maxLength: requests.length,
            }),
          ),
        ),
        ([first, second]) => {
          const a = defined(applySequentially(first).stored).state;
          const b = defined(applySequentially(second).stored).state;
          expect([b.aktiv, b.metadata]).toEqual([a.aktiv, a.metadata]);
        },
      ),
      { numRuns: 1000 },
    );
  });
});

describe('deciding against the latest accepted request', () => {
  const meta = normaliseMetadata('reservasjon', undefined);
  const request = (n: number, aktiv: boolean, proofSha256?: string): SetRequest => ({
    tidspunkt: minute(n),
    aktiv,
    metadata: meta,
    proofSha256,
  });

  it('when a change dated between a change and a later repeat of it arrives last, then it does not apply', () => {
    const { stored, answers } = applySequentially([
      request(0, true),
      request(20, true),
      request(10, false),
    ]);
    expect(answers).toEqual(['create', 'confirm', 'superseded']);
    expect(stored?.state).toMatchObject({
      aktiv: true,
      sekvensnummer: 1,
      sistEndretTidspunkt: minute(0),
      latestTidspunkt: minute(20),
    });
  });

  it('when a repeat of the state comes dated later, then it is recorded as confirming the state and makes no sekvensnummer', () => {
    const { stored } = applySequentially([request(0, true)]);
    expect(decideSet(stored, request(5, true))).toEqual({ kind: 'confirm' });
  });

  it('when the latest request comes again exactly, then nothing is recorded', () => {
    const { stored } = applySequentially([request(0, true), request(5, true)]);
    expect(decideSet(stored, request(5, true))).toEqual({ kind: 'unchanged' });
    expect(decideSet(stored, request(0, true))).toEqual({ kind: 'unchanged' });
  });

  it('when two requests have the same tidspunkt and different aktiv, then aktiv true wins in either order', () => {
    for (const order of [
      [request(1, false), request(1, true)],
      [request(1, true), request(1, false)],
    ]) {
      expect(applySequentially(order).stored?.state.aktiv).toBe(true);
    }
  });

  it('when the current state comes again with its proof, then nothing changes; with another proof, then it is a change', () => {
    const { stored } = applySequentially([request(0, true, 'a'.repeat(64))]);
    expect(decideSet(stored, request(0, true, 'a'.repeat(64)))).toEqual({ kind: 'unchanged' });
    expect(decideSet(stored, request(3, true, 'a'.repeat(64)))).toEqual({ kind: 'confirm' });
    expect(decideSet(stored, request(3, true, 'b'.repeat(64)))).toEqual({
      kind: 'change',
      sekvensnummer: 2,
    });
  });
});
