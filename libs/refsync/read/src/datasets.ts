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
