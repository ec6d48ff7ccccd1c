export {
  createLeaseRepository,
  type AcquireResult,
  type Lease,
  type LeaseRepository,
} from './lease.repository';
export {
  createRunRepository,
  MAX_STORED_ERROR_DETAILS,
  type ImportRun,
  type ImportRunFinish,
  type ImportRunOutcome,
  type ImportRunStart,
  type ImportRunTrigger,
  type RunRepository,
} from './run.repository';
