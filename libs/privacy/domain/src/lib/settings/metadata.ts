import type { InnbyggerMetadata, InnbyggerMetadataInput } from '@nhp/privacy-contracts';
import type { PiType } from '../types';
import { toInstant } from './time';

type Person = { nummer?: string | null; navn?: string | null };

const people = (list: Person[] | null | undefined) =>
  list == null ? null : list.map((p) => ({ nummer: p.nummer ?? null, navn: p.navn ?? null }));

/**
 * The citizen metadata in one canonical form: every field present (null where not given), times
 * as UTC ISO strings with milliseconds. Stored and answered in this form, and compared in it, so
 * that `{}` and `{tidsbegrensning: null}` or two spellings of one instant are the same state.
 */
export function normaliseMetadata(
  typePi: PiType,
  input: InnbyggerMetadataInput | null | undefined,
): InnbyggerMetadata {
  const perioder = input?.tidsbegrensning?.perioder;
  const metadata: InnbyggerMetadata = {
    tidsbegrensning: {
      perioder:
        perioder == null
          ? null
          : perioder.map((p) => ({
              fraDato: p.fraDato == null ? null : toInstant(p.fraDato).toISOString(),
              tilDato: p.tilDato == null ? null : toInstant(p.tilDato).toISOString(),
            })),
    },
  };
  if (typePi === 'tilgangsbegrensning') {
    const detaljert =
      input && 'detaljertAngivelse' in input ? (input.detaljertAngivelse ?? undefined) : undefined;
    metadata.detaljertAngivelse = {
      navngittHelseperson: people(detaljert?.navngittHelseperson),
      helseforetak: people(detaljert?.helseforetak),
    };
  }
  return metadata;
}

/** Deep equality of two canonical metadata values (plain JSON data, fixed key order). */
export function sameMetadata(a: InnbyggerMetadata, b: InnbyggerMetadata): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** A period whose end lies before its start can never apply: refused as a bad request. */
export function invalidPeriodIndex(metadata: InnbyggerMetadata): number | undefined {
  const index = (metadata.tidsbegrensning.perioder ?? []).findIndex(
    (p) => p.fraDato !== null && p.tilDato !== null && p.fraDato > p.tilDato,
  );
  return index === -1 ? undefined : index;
}
