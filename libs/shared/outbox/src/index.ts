export {
  documentKey,
  type DocumentRef,
  type OutboxEntry,
  type OutboxStore,
  type PublishOutcome,
  type RelaySummary,
} from './lib/types';
export { batchedWrites, type BatchedWrites, type BatchedWritesOptions } from './lib/batched-writes';
export {
  documentEntries,
  outboxPush,
  PUBLISHED_AT,
  type DocumentEntries,
  type DocumentEntriesOptions,
  type SettleMode,
} from './lib/document-entries';
export {
  outboxPointers,
  pointerSchema,
  type OutboxPointer,
  type OutboxPointers,
  type OutboxPointersOptions,
} from './lib/pointers';
export {
  documentOutboxStore,
  SWEEP_BATCH,
  SWEEP_PAGES,
  type DocumentOutboxStoreOptions,
} from './lib/document-store';
export { createOutboxRelay, type CreateOutboxRelayOptions, type OutboxRelay } from './lib/relay';
export {
  createJetStreamPublisher,
  type JetStreamPublisher,
  type JetStreamPublisherOptions,
  type OutboxMessage,
  type PublishedAck,
  type PublishObserver,
} from './lib/jetstream-publisher';
