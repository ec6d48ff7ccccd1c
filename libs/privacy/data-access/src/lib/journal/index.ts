export {
  JOURNAL_FIELD,
  journalPush,
  newJournalEntry,
  type AuditActor,
  type AuditTarget,
  type JournalEntry,
  type JournalEvent,
  type NewJournalEntry,
} from './entry';
export { AUDIT_COLLECTION, type AuditFilter, type AuditRecord } from './audit';
export {
  createJournal,
  ensureJournalIndexes,
  journalModels,
  PENDING_COLLECTION,
  type CreateJournalOptions,
  type Journal,
  type JournalEventOrigin,
} from './journal';
