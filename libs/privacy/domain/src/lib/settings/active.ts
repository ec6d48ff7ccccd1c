import type { InnbyggerMetadata } from '@nhp/privacy-contracts';
import type { Definition, Tidsbegrensning } from '../types';

const within = (now: number, from: string | null, to: string | null) =>
  (from === null || Date.parse(from) <= now) && (to === null || now <= Date.parse(to));

/** The definition's own window (its tidsbegrensning), if it sets one. */
export function definitionWindowOpen(
  tidsbegrensning: Tidsbegrensning | undefined,
  now: Date,
): boolean {
  if (!tidsbegrensning) return true;
  return within(now.getTime(), tidsbegrensning.tidsbegrensetFra, tidsbegrensning.tidsbegrensetTil);
}

/** Within one of the citizen's periods; a template that takes periods needs at least one. */
export function withinCitizenPeriods(metadata: InnbyggerMetadata, now: Date): boolean {
  const perioder = metadata.tidsbegrensning.perioder ?? [];
  return perioder.some((p) => within(now.getTime(), p.fraDato, p.tilDato));
}

/**
 * `aktiv` as read, evaluated at the time of the request: the instance's own aktiv, within the
 * definition's window if it has one, and within one of the citizen's periods if the definition's
 * template takes periods.
 */
export function isActiveAt(
  definition: Pick<Definition, 'fasteMetadata' | 'takesPeriods'>,
  instance: { aktiv: boolean; metadata: InnbyggerMetadata },
  now: Date,
): boolean {
  if (!instance.aktiv) return false;
  if (!definitionWindowOpen(definition.fasteMetadata.tidsbegrensning, now)) return false;
  if (definition.takesPeriods && !withinCitizenPeriods(instance.metadata, now)) return false;
  return true;
}
