import type { BatchedWrites, DocumentEntries, OutboxPointers } from '@nhp/shared-outbox';
import { SWEEP_BATCH } from '@nhp/shared-outbox';
import type { Collection, Document } from 'mongodb';
import { Schema, type Connection } from 'mongoose';
import type { AuditTarget, JournalEntry } from './entry';

export const AUDIT_COLLECTION = 'privacy_audit';

/** An audit record as stored and listed: the entry, with the id of the event it caused, if any. */
export type AuditRecord = Omit<JournalEntry, 'event'> & {
  eventId?: string;
  /** False while the record still waits in the changed document to be relayed. */
  relayed: boolean;
};

export type AuditFilter = { fnr: string } | { definisjonGuid: string } | { partKode: string };

// Declared for its indexes only (an app builds them before it serves); documents are written and
// read through the driver's collection, exactly as built.
export const auditSchema = new Schema(
  { _id: { type: String, required: true } },
  { collection: AUDIT_COLLECTION, versionKey: false, strict: false },
);
auditSchema.index({ 'target.fnr': 1, at: 1 }, { name: 'fnr_at', sparse: true });
auditSchema.index({ 'target.definisjonGuid': 1, at: 1 }, { name: 'definisjon_at', sparse: true });
auditSchema.index({ 'target.partKode': 1, at: 1 }, { name: 'part_at', sparse: true });

function toAuditRecord(entry: JournalEntry, relayed: boolean): AuditRecord {
  const record: AuditRecord = {
    id: entry.id,
    at: entry.at,
    seq: entry.seq,
    actor: entry.actor,
    operation: entry.operation,
    target: entry.target,
    relayed,
  };
  if (entry.requestId !== undefined) record.requestId = entry.requestId;
  if (entry.event) record.eventId = entry.event.id;
  return record;
}

function matches(target: AuditTarget, filter: AuditFilter): boolean {
  if ('fnr' in filter) return target.fnr === filter.fnr;
  if ('definisjonGuid' in filter) return target.definisjonGuid === filter.definisjonGuid;
  return target.partKode === filter.partKode;
}

function filterQuery(filter: AuditFilter): Record<string, string> {
  if ('fnr' in filter) return { 'target.fnr': filter.fnr };
  if ('definisjonGuid' in filter) return { 'target.definisjonGuid': filter.definisjonGuid };
  return { 'target.partKode': filter.partKode };
}

function storedRecord(doc: Document): AuditRecord {
  const { _id, ...fields } = doc as unknown as Omit<AuditRecord, 'id' | 'relayed'> & {
    _id: string;
  };
  return { id: _id, ...fields, relayed: true };
}

/**
 * The audit trail: every journal entry, copied into `privacy_audit` by the relay (the outbox's
 * sink) before its event is published, and listed with the entries still waiting in their
 * documents.
 */
export function auditTrail(connection: Connection, writes?: BatchedWrites) {
  const audit = (): Collection<Document> => connection.collection<Document>(AUDIT_COLLECTION);

  return {
    /** The relay's sink: the entry's record, inserted once (idempotent by id; never updated). */
    async record(entry: JournalEntry): Promise<void> {
      const { id, relayed: _relayed, ...fields } = toAuditRecord(entry, true);
      const filter = { _id: id as never };
      const update = { $setOnInsert: fields };
      if (writes) {
        await writes.write(AUDIT_COLLECTION, { updateOne: { filter, update, upsert: true } });
      } else {
        await audit().updateOne(filter, update, { upsert: true });
      }
    },

    /** The trail, oldest first, including records not yet relayed. */
    async list(
      filter: AuditFilter,
      limit: number,
      journal: { entries: DocumentEntries<JournalEntry>; pointers: OutboxPointers },
    ): Promise<AuditRecord[]> {
      // Pointers first: a relay upserts the audit record before it drops the pointer, so every
      // entry is found either through its pointer (pending) or in the audit read that follows.
      const pointers = await journal.pointers.list(SWEEP_BATCH);
      const stored = await audit()
        .find(filterQuery(filter))
        .sort({ at: 1, seq: 1 })
        .limit(limit)
        .toArray();
      const records: AuditRecord[] = stored.map(storedRecord);
      const seen = new Set(records.map((r) => r.id));
      // Records still waiting in their documents (relay pending after a crash or an outage).
      const relayedMeanwhile: string[] = [];
      for (const p of pointers) {
        if (seen.has(p._id)) continue;
        const entries = await journal.entries.pending({ collection: p.collection, docId: p.docId });
        const entry = entries.find((e) => e.id === p._id);
        if (!entry) relayedMeanwhile.push(p._id);
        else if (matches(entry.target, filter)) records.push(toAuditRecord(entry, false));
      }
      // An entry relayed between the audit read and its document's read is in the audit now.
      if (relayedMeanwhile.length > 0) {
        const late = await audit()
          .find({ ...filterQuery(filter), _id: { $in: relayedMeanwhile as never[] } })
          .toArray();
        records.push(...late.map(storedRecord));
      }
      records.sort((a, b) => a.at.getTime() - b.at.getTime() || (a.seq ?? 0) - (b.seq ?? 0));
      return records.slice(0, limit);
    },
  };
}
