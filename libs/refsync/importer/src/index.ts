export {
  createImporter,
  type Importer,
  type ImporterOptions,
  type RunOutcome,
  type RunReport,
  type RunRequest,
} from './importer';
export {
  acquireLease,
  instanceId,
  type AcquireLeaseOptions,
  type HeldLease,
  type LeaseAttempt,
} from './leader';
export {
  createOutboxPublisher,
  type OutboxPublisher,
  type OutboxPublisherOptions,
  type PublishSummary,
} from './outbox-publisher';
export { buildSyncCompletedOutboxEvent, refsyncStreamSpec } from './events';
export { createImporterMetrics, type ImporterMetrics, type MetricsSources } from './metrics';
export { refsyncAsyncApiDocument } from './asyncapi';
