import type { Dataset } from '@nhp/refsync-contracts';

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
 * A run stopped on purpose before committing: the upstream or the situation is not safe to
 * publish. Nothing was committed; readers stay on the version they had.
 */
export class SyncAbortedError extends Error {
  override readonly name = 'SyncAbortedError';

  constructor(
    readonly reason: AbortReason,
    message: string,
    readonly details: {
      report?: ValidationReport;
      datasets?: Partial<Record<Dataset, DatasetSummary>>;
      /** The committed version when the run stopped (readers stay on it). */
      previousVersion?: number;
    } = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** What a run found (and, when it committed, did) for one dataset. */
export interface DatasetSummary {
  added: number;
  changed: number;
  deleted: number;
  reappeared: number;
  unchanged: number;
  activeBefore: number;
  /** Active items after the run: every upstream item. */
  total: number;
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
