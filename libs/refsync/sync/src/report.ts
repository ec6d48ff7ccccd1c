import type { Dataset } from '@nhp/refsync-contracts';
import type { ChangeSetCounts } from '@nhp/refsync-domain';
import { AppError, isAppError, type ErrorCategory } from '@nhp/shared-errors';

/** One upstream item that failed the contract, named so an operator can find it in the file. */
export interface InvalidItem {
  dataset: Dataset;
  /** 1-based position in the upstream file. */
  index: number;
  line?: number;
  /** The item's id when it has a usable one. */
  id?: string;
  reasons: string[];
}

export interface DuplicateId {
  dataset: Dataset;
  id: string;
  /** Every 1-based position at which the id occurs. */
  positions: number[];
}

export interface ValidationReport {
  invalidItems: InvalidItem[];
  duplicateIds: DuplicateId[];
}

export type AbortReason =
  | 'upstream_unavailable'
  | 'invalid_upstream'
  | 'empty_upstream'
  | 'mass_deletion'
  | 'upstream_changed'
  | 'lease_lost';

/**
 * Each reason's error code and status hint. The codes are distinct so a log query or an alert can
 * tell them apart; the importer treats every one of them as "aborted on purpose" (exit code 3).
 */
const ABORTS: Record<AbortReason, { code: string; status: number; category: ErrorCategory }> = {
  upstream_unavailable: { code: 'SYNC_UPSTREAM_UNAVAILABLE', status: 503, category: 'unavailable' },
  invalid_upstream: { code: 'SYNC_INVALID_UPSTREAM', status: 422, category: 'validation' },
  empty_upstream: { code: 'SYNC_EMPTY_UPSTREAM', status: 422, category: 'rule' },
  mass_deletion: { code: 'SYNC_MASS_DELETION', status: 422, category: 'rule' },
  upstream_changed: { code: 'SYNC_UPSTREAM_CHANGED', status: 409, category: 'conflict' },
  lease_lost: { code: 'SYNC_LEASE_LOST', status: 409, category: 'conflict' },
};
const ABORT_CODES = new Set(Object.values(ABORTS).map((a) => a.code));

export interface SyncAbortDetails {
  reason: AbortReason;
  report?: ValidationReport;
  datasets?: Partial<Record<Dataset, ChangeSetCounts>>;
  /** The committed version when the run stopped (readers stay on it). */
  previousVersion?: number;
}

/**
 * A run stopped on purpose before committing: the upstream or the situation is not safe to
 * publish. Nothing was committed; readers stay on the version they had. An AppError (operational)
 * whose details say why.
 */
export type SyncAbortedError = AppError & { readonly details: SyncAbortDetails };

export function syncAborted(
  reason: AbortReason,
  message: string,
  details: Omit<SyncAbortDetails, 'reason'> = {},
  options: { cause?: unknown } = {},
): SyncAbortedError {
  const { code, status, category } = ABORTS[reason];
  return new AppError({
    code,
    status,
    category,
    message,
    details: { reason, ...details } satisfies SyncAbortDetails,
    operational: true,
    cause: options.cause,
  }) as SyncAbortedError;
}

export function isSyncAborted(err: unknown): err is SyncAbortedError {
  return isAppError(err) && ABORT_CODES.has(err.code);
}

/** Human-readable lines for a validation report, one per bad item or duplicate id. */
export function formatReport(report: ValidationReport, limit = Number.POSITIVE_INFINITY): string[] {
  const lines: string[] = [];
  for (const item of report.invalidItems) {
    const where = `${item.dataset} item #${item.index}${item.line !== undefined ? ` (line ${item.line})` : ''}`;
    const name = item.id !== undefined ? ` id ${JSON.stringify(item.id)}` : '';
    lines.push(`${where}${name}: ${item.reasons.join('; ')}`);
  }
  for (const dup of report.duplicateIds) {
    lines.push(
      `${dup.dataset} duplicate id ${JSON.stringify(dup.id)} at items #${dup.positions.join(', #')}`,
    );
  }
  if (lines.length > limit) {
    const more = lines.length - limit;
    return [...lines.slice(0, limit), `… and ${more} more`];
  }
  return lines;
}
