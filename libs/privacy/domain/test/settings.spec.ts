import { AppError } from '@nhp/shared-errors';
import { present } from '@nhp/shared-testing';
import {
  decideSet,
  isActiveAt,
  MAX_PROOF_BYTES,
  normaliseMetadata,
  parseProof,
  sameMetadata,
  toInstant,
  type SettingHistoryEntry,
  type StoredSetting,
} from '../src';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
const PDF = Buffer.from('%PDF-1.7\n...');

function proofCode(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (err) {
    return err instanceof AppError ? err.code : 'not an AppError';
  }
  return undefined;
}

describe('proofs', () => {
  it('when a png proof is valid, then its bytes and hash come back', () => {
    const proof = parseProof('image/png', PNG.toString('base64'));
    expect(proof?.mimeType).toBe('image/png');
    expect(proof?.bytes.equals(PNG)).toBe(true);
    expect(proof?.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('when the type is given in upper case, then it is accepted as the canonical type', () => {
    expect(parseProof('Application/PDF', PDF.toString('base64'))?.mimeType).toBe('application/pdf');
  });

  it('when neither field is given, then there is no proof', () => {
    expect(parseProof(undefined, null)).toBeUndefined();
  });

  it('when only one of the two fields is given, then EPVK-104400', () => {
    expect(proofCode(() => parseProof('image/png', undefined))).toBe('EPVK-104400');
    expect(proofCode(() => parseProof(null, PNG.toString('base64')))).toBe('EPVK-104400');
  });

  it('when the type is not accepted, then EPVK-104400', () => {
    expect(proofCode(() => parseProof('image/gif', PNG.toString('base64')))).toBe('EPVK-104400');
  });

  it('when the content is not base64, then EPVK-104400', () => {
    expect(proofCode(() => parseProof('image/png', 'iVBOR w0K!!'))).toBe('EPVK-104400');
  });

  it('when the bytes do not match the type, then EPVK-104400', () => {
    expect(proofCode(() => parseProof('image/jpeg', PNG.toString('base64')))).toBe('EPVK-104400');
    expect(proofCode(() => parseProof('application/pdf', PNG.toString('base64')))).toBe(
      'EPVK-104400',
    );
  });

  it('when the proof is exactly 4 MiB, then it is accepted, and one byte more is refused', () => {
    const max = Buffer.alloc(MAX_PROOF_BYTES, 0);
    PNG.copy(max);
    expect(parseProof('image/png', max.toString('base64'))?.bytes.length).toBe(MAX_PROOF_BYTES);
    const over = Buffer.alloc(MAX_PROOF_BYTES + 1, 0);
    PNG.copy(over);
    expect(proofCode(() => parseProof('image/png', over.toString('base64')))).toBe('EPVK-104400');
  });
});

describe('metadata', () => {
  it('when metadata is absent or empty, then both normalise to the same state', () => {
    const a = normaliseMetadata('samtykke', undefined);
    const b = normaliseMetadata('samtykke', { tidsbegrensning: null });
    expect(sameMetadata(a, b)).toBe(true);
    expect(a).toEqual({ tidsbegrensning: { perioder: null } });
  });

  it('when two spellings name the same instant, then the metadata is the same', () => {
    const a = normaliseMetadata('samtykke', {
      tidsbegrensning: { perioder: [{ fraDato: '2026-01-01T00:00:00Z' }] },
    });
    const b = normaliseMetadata('samtykke', {
      tidsbegrensning: { perioder: [{ fraDato: '2026-01-01T01:00:00.000+01:00', tilDato: null }] },
    });
    expect(sameMetadata(a, b)).toBe(true);
  });

  it('when the type is access restriction, then detaljertAngivelse is always there', () => {
    expect(normaliseMetadata('tilgangsbegrensning', {}).detaljertAngivelse).toEqual({
      navngittHelseperson: null,
      helseforetak: null,
    });
  });

  it('when a time has no offset, then it is read as UTC', () => {
    expect(toInstant('2026-03-01T10:00:00').toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(toInstant('2026-03-01').toISOString()).toBe('2026-03-01T00:00:00.000Z');
  });
});

const meta = normaliseMetadata('reservasjon', undefined);
const t = (iso: string) => new Date(iso);

function stored(
  overrides: Partial<StoredSetting['state']> = {},
  history: SettingHistoryEntry[] = [],
): StoredSetting {
  const sistEndretTidspunkt = overrides.sistEndretTidspunkt ?? t('2026-02-01T00:00:00Z');
  const proofSha256 = overrides.proofSha256 ?? null;
  return {
    version: history.length || 1,
    history,
    state: {
      id: 's1',
      innbyggerFnr: '13116900216',
      definisjonGuid: 'd',
      partKode: 'p',
      typePi: 'reservasjon',
      aktiv: true,
      metadata: meta,
      sekvensnummer: 3,
      opprettetTidspunkt: t('2026-01-01T00:00:00Z'),
      sistEndretTidspunkt,
      proofSha256,
      // Unless a test says otherwise, the latest request was the change that made the state.
      latestTidspunkt: sistEndretTidspunkt,
      latestProofSha256: proofSha256,
      pagingKey: 1,
      ...overrides,
    },
  };
}

describe('deciding a set request', () => {
  const base = {
    aktiv: true,
    metadata: meta,
    tidspunkt: t('2026-03-01T00:00:00Z'),
    proofSha256: undefined,
  };

  it('when there is no instance, then it is created', () => {
    expect(decideSet(undefined, base)).toEqual({ kind: 'create' });
  });

  it('when the state is the same and no proof comes, then nothing changes; dated later than the state, it confirms it', () => {
    expect(decideSet(stored(), { ...base, tidspunkt: t('2026-02-01T00:00:00Z') })).toEqual({
      kind: 'unchanged',
    });
    // The decisions: a later repeat of the state makes no sekvensnummer but is recorded.
    expect(decideSet(stored(), base)).toEqual({ kind: 'confirm' });
  });

  it('when aktiv differs, then it is a change with the next sekvensnummer', () => {
    expect(decideSet(stored(), { ...base, aktiv: false })).toEqual({
      kind: 'change',
      sekvensnummer: 4,
    });
  });

  it('when the same state comes with a new proof, then it is a change', () => {
    expect(decideSet(stored(), { ...base, proofSha256: 'abc' })).toEqual({
      kind: 'change',
      sekvensnummer: 4,
    });
  });

  it('when the same state comes with the current proof again (a retry), then nothing changes; dated later, it confirms the state', () => {
    const retry = { ...base, tidspunkt: t('2026-02-01T00:00:00Z'), proofSha256: 'abc' };
    expect(decideSet(stored({ proofSha256: 'abc' }), retry)).toEqual({ kind: 'unchanged' });
    expect(decideSet(stored({ proofSha256: 'abc' }), { ...base, proofSha256: 'abc' })).toEqual({
      kind: 'confirm',
    });
  });

  it('when the request is older than the current state, then it is kept but supersded, with the number in force then', () => {
    const history: SettingHistoryEntry[] = [1, 2, 3].map((n) => ({
      recordNo: n,
      sekvensnummer: n,
      applied: true,
      tidspunkt: t(`2026-0${n}-01T00:00:00Z`),
      registrert: t(`2026-0${n}-01T00:00:00Z`),
      aktiv: true,
      metadata: meta,
      proof: null,
    }));
    const current = stored({ sistEndretTidspunkt: t('2026-03-01T00:00:00Z') }, history);
    const older = { ...base, aktiv: false, tidspunkt: t('2026-02-15T00:00:00Z') };
    expect(decideSet(current, older)).toEqual({ kind: 'superseded', sekvensnummerInForce: 2 });

    const recorded = stored(current.state, [
      ...history,
      {
        ...present(history[0], 'the first history entry'),
        recordNo: 4,
        sekvensnummer: 2,
        applied: false,
        aktiv: false,
        tidspunkt: older.tidspunkt,
      },
    ]);
    expect(decideSet(recorded, older)).toEqual({ kind: 'unchanged' });
  });
});

describe('aktiv as read', () => {
  const now = t('2026-06-01T12:00:00Z');
  const open = {
    tidsbegrensning: { tidsbegrensetFra: null, tidsbegrensetTil: null },
    omfangElementer: [],
  };
  const periods = (perioder: Array<{ fraDato: string | null; tilDato: string | null }> | null) => ({
    tidsbegrensning: { perioder },
  });

  it('when the instance is inactive, then it reads inactive', () => {
    expect(
      isActiveAt(
        { fasteMetadata: open, takesPeriods: false },
        { aktiv: false, metadata: meta },
        now,
      ),
    ).toBe(false);
  });

  it("when now is outside the definition's window, then it reads inactive", () => {
    const closed = {
      ...open,
      tidsbegrensning: { tidsbegrensetFra: null, tidsbegrensetTil: '2026-05-01T00:00:00.000Z' },
    };
    expect(
      isActiveAt(
        { fasteMetadata: closed, takesPeriods: false },
        { aktiv: true, metadata: meta },
        now,
      ),
    ).toBe(false);
    expect(
      isActiveAt(
        { fasteMetadata: open, takesPeriods: false },
        { aktiv: true, metadata: meta },
        now,
      ),
    ).toBe(true);
  });

  it('when the template takes periods, then only a period around now makes it active', () => {
    const def = { fasteMetadata: open, takesPeriods: true };
    expect(isActiveAt(def, { aktiv: true, metadata: periods(null) }, now)).toBe(false);
    expect(
      isActiveAt(
        def,
        {
          aktiv: true,
          metadata: periods([
            { fraDato: '2026-01-01T00:00:00.000Z', tilDato: '2026-02-01T00:00:00.000Z' },
          ]),
        },
        now,
      ),
    ).toBe(false);
    expect(
      isActiveAt(
        def,
        {
          aktiv: true,
          metadata: periods([{ fraDato: '2026-05-01T00:00:00.000Z', tilDato: null }]),
        },
        now,
      ),
    ).toBe(true);
  });
});
