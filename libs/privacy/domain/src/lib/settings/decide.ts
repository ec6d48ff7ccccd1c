import type { InnbyggerMetadata } from '@nhp/privacy-contracts';
import { sameMetadata } from './metadata';
import type { SettingHistoryEntry, StoredSetting } from './model';

export interface SetRequest {
  aktiv: boolean;
  metadata: InnbyggerMetadata;
  tidspunkt: Date;
  proofSha256: string | undefined;
}

export type Decision =
  /** The first change of a new instance (sekvensnummer 1). */
  | { kind: 'create' }
  /** A new state: sekvensnummer + 1. */
  | { kind: 'change'; sekvensnummer: number }
  /** Older than the current state: kept in history, state unchanged (answered ikkeEndret). */
  | { kind: 'superseded'; sekvensnummerInForce: number }
  /** Nothing to record: the same state (a retry), or a superseded request recorded before. */
  | { kind: 'unchanged' };

function sameEntry(entry: SettingHistoryEntry, request: SetRequest): boolean {
  return (
    entry.tidspunkt.getTime() === request.tidspunkt.getTime() &&
    entry.aktiv === request.aktiv &&
    sameMetadata(entry.metadata, request.metadata) &&
    (entry.proof?.sha256 ?? undefined) === request.proofSha256
  );
}

/**
 * What a set request does to an instance. The current state is the latest by tidspunkt, so a
 * request dated before it is kept but changes nothing (clients may replay out of order). A request
 * that repeats the current state changes nothing either, unless it brings a proof other than the
 * current change's proof (a proof makes a change of its own).
 */
export function decideSet(current: StoredSetting | undefined, request: SetRequest): Decision {
  if (!current) return { kind: 'create' };
  const { state, history } = current;
  if (request.tidspunkt.getTime() < state.sistEndretTidspunkt.getTime()) {
    if (history.some((entry) => !entry.applied && sameEntry(entry, request))) {
      return { kind: 'unchanged' };
    }
    let inForce = 0;
    for (const entry of history) {
      if (entry.applied && entry.tidspunkt.getTime() <= request.tidspunkt.getTime()) {
        inForce = Math.max(inForce, entry.sekvensnummer);
      }
    }
    return { kind: 'superseded', sekvensnummerInForce: inForce };
  }
  const sameState = state.aktiv === request.aktiv && sameMetadata(state.metadata, request.metadata);
  if (
    sameState &&
    (request.proofSha256 === undefined || request.proofSha256 === state.proofSha256)
  ) {
    return { kind: 'unchanged' };
  }
  return { kind: 'change', sekvensnummer: state.sekvensnummer + 1 };
}
