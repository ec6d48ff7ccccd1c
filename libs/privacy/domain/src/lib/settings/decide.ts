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
  /**
   * The current state again, ordered after the latest request: answered ikkeEndret and makes no
   * sekvensnummer, but it is recorded and moves the time the state is known to hold, so that a
   * change dated before it that arrives later does not apply.
   */
  | { kind: 'confirm' }
  /** Ordered before the latest request: kept in history, state unchanged (answered ikkeEndret). */
  | { kind: 'superseded'; sekvensnummerInForce: number }
  /** Nothing to record: the latest request again, or an older request recorded before. */
  | { kind: 'unchanged' };

/** What orders two requests: when they were given and what they say. */
export interface RequestOrderKey {
  tidspunkt: Date;
  aktiv: boolean;
  metadata: InnbyggerMetadata;
  proofSha256: string | null | undefined;
}

/** Plain code-unit order: the same on every machine and locale. */
const byText = (a: string, b: string) => (a === b ? 0 : a < b ? -1 : 1);

/**
 * The order in which requests take effect, whatever order they arrive in: by tidspunkt, and
 * requests of the same tidspunkt by their content, so that the outcome of a tie is fixed too:
 * `aktiv` false before true, then the canonical metadata (normaliseMetadata) as JSON text, then
 * the proof's SHA-256 in hex (none first). The later request wins. Negative when `a` is earlier,
 * 0 for the same request.
 */
export function compareSetRequests(a: RequestOrderKey, b: RequestOrderKey): number {
  const byTime = a.tidspunkt.getTime() - b.tidspunkt.getTime();
  if (byTime !== 0) return Math.sign(byTime);
  if (a.aktiv !== b.aktiv) return a.aktiv ? 1 : -1;
  const byMetadata = byText(JSON.stringify(a.metadata), JSON.stringify(b.metadata));
  if (byMetadata !== 0) return byMetadata;
  return byText(a.proofSha256 ?? '', b.proofSha256 ?? '');
}

function sameEntry(entry: SettingHistoryEntry, request: SetRequest): boolean {
  return (
    entry.tidspunkt.getTime() === request.tidspunkt.getTime() &&
    entry.aktiv === request.aktiv &&
    sameMetadata(entry.metadata, request.metadata) &&
    (entry.proof?.sha256 ?? undefined) === request.proofSha256
  );
}

/**
 * What a set request does to an instance. The state is that of the latest accepted request in the
 * order of compareSetRequests, a repeat of the state counted like any other request; so the final
 * state is the same whatever order requests arrive in (clients may replay out of order, and
 * concurrent requests may be decided in any order).
 *
 * - Ordered before the latest request: kept in history but changes nothing; an exact repeat of a
 *   request already recorded records nothing more.
 * - The latest request itself again: nothing.
 * - Ordered after it, with the current aktiv and metadata and no proof or the current change's
 *   proof: it confirms the state (recorded, no sekvensnummer).
 * - Ordered after it otherwise: a change (a proof other than the current one makes a change).
 */
export function decideSet(current: StoredSetting | undefined, request: SetRequest): Decision {
  if (!current) return { kind: 'create' };
  const { state, history } = current;
  const order = compareSetRequests(request, {
    tidspunkt: state.latestTidspunkt,
    aktiv: state.aktiv,
    metadata: state.metadata,
    proofSha256: state.latestProofSha256,
  });
  if (order === 0) return { kind: 'unchanged' };
  if (order < 0) {
    if (history.some((entry) => sameEntry(entry, request))) return { kind: 'unchanged' };
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
    return { kind: 'confirm' };
  }
  return { kind: 'change', sekvensnummer: state.sekvensnummer + 1 };
}
