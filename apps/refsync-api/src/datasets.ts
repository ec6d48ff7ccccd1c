import type { Dataset } from '@nhp/refsync-contracts';

/**
 * The two spellings of the interface: same behaviour, different names (see the README's endpoint
 * table). R1-R7 are the selection rules of libs/refsync/domain/README.md.
 */
export type Spelling = 'primary' | 'alternative';

export interface DatasetRoute {
  path: string;
  dataset: Dataset;
  spelling: Spelling;
  /** Each spelling accepts only its own parameter name; the other one is an unknown parameter. */
  sinceParam: 'sinceVersion' | 'since-version';
}

export const DATASET_ROUTES: readonly DatasetRoute[] = [
  {
    path: '/api/v1/treatmentGroup',
    dataset: 'treatmentGroup',
    spelling: 'primary',
    sinceParam: 'sinceVersion',
  },
  {
    path: '/api/v1/reimbursementGroup',
    dataset: 'reimbursementGroup',
    spelling: 'primary',
    sinceParam: 'sinceVersion',
  },
  {
    path: '/api/v1/treatment-group',
    dataset: 'treatmentGroup',
    spelling: 'alternative',
    sinceParam: 'since-version',
  },
  {
    path: '/api/v1/reimbursement-group',
    dataset: 'reimbursementGroup',
    spelling: 'alternative',
    sinceParam: 'since-version',
  },
];

/** One stored item as the read repository returns it. */
export interface ListedItem {
  data: unknown;
  version: number;
  lastChanged: Date;
  isDeleted: boolean;
}

/** One item as a scan delivers it, with the id it is ordered by. */
export interface ScannedListedItem {
  itemId: string;
  item: ListedItem;
}

/**
 * What the service needs from storage (structurally the read repository of
 * @nhp/refsync-data-access): the committed version, and the items R1-R3 select at a version,
 * streamed (scanItems: in response order to `onItem`, the few a run under way has replaced as the
 * resolved value), so that a large list is serialised while it is read.
 */
export interface DatasetReader {
  currentVersion(): Promise<number>;
  scanItems(
    dataset: Dataset,
    options: { atVersion: number; sinceVersion?: number },
    onItem: (scanned: ScannedListedItem) => void,
  ): Promise<ScannedListedItem[]>;
}
