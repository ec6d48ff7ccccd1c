import type { InnbyggerMetadata } from '@nhp/privacy-contracts';
import type { PiType } from '../types';

/** A citizen's instance of a definition: its current state (what reads need; no history, no proof bytes). */
export interface SettingState {
  id: string;
  innbyggerFnr: string;
  definisjonGuid: string;
  partKode: string;
  typePi: PiType;
  aktiv: boolean;
  metadata: InnbyggerMetadata;
  /** Number of the change that made this state; 1 for the first. */
  sekvensnummer: number;
  /** tidspunkt of the first change. */
  opprettetTidspunkt: Date;
  /** tidspunkt of the change that made this state. */
  sistEndretTidspunkt: Date;
  /** SHA-256 of the proof given with the current change, if any. */
  proofSha256: string | null;
  /**
   * tidspunkt of the latest accepted request: the change that made this state, or a later repeat
   * of it, which moves the time the state is known to hold. An arriving request is ordered against
   * this (see decideSet), never against sistEndretTidspunkt alone.
   */
  latestTidspunkt: Date;
  /** SHA-256 of the proof the latest accepted request carried: it orders requests of one tidspunkt. */
  latestProofSha256: string | null;
  /** The instance's place in the active-citizens walk: fixed at creation, unique per definition. */
  pagingKey: number;
}

/** A proof as referenced from history: the bytes live in their own record. */
export interface ProofRef {
  id: string;
  sha256: string;
  mimeType: string;
}

/** Every request that was recorded, in the order recorded. */
export interface SettingHistoryEntry {
  /** 1, 2, ... per instance, in the order the requests were recorded. */
  recordNo: number;
  /**
   * For a change: its sekvensnummer. For a request older (by tidspunkt) than the state it met,
   * kept but not applied: the sekvensnummer of the state that was in force at its tidspunkt
   * (0 when there was none). For a confirming repeat: the current sekvensnummer.
   */
  sekvensnummer: number;
  /** The request made a change (a new sekvensnummer). */
  applied: boolean;
  /**
   * A repeat of the current state dated after the latest request: not applied (no sekvensnummer),
   * but it moved latestTidspunkt. Its proof, if any, is the current change's (not listed again).
   */
  confirmed?: boolean;
  tidspunkt: Date;
  registrert: Date;
  aktiv: boolean;
  metadata: InnbyggerMetadata;
  proof: ProofRef | null;
}

export interface StoredSetting {
  state: SettingState;
  /** Optimistic version: one more with every recorded request. */
  version: number;
  history: SettingHistoryEntry[];
}

export interface StoredProof {
  id: string;
  settingId: string;
  mimeType: string;
  bytes: Buffer;
  registrert: Date;
}

/** What a write records besides the change: the audit actor and, for replicated definitions, the event. */
export interface SettingWriteRecord {
  actor: { kind: 'client' | 'citizen' | 'admin'; id: string };
  operation: 'setting.set';
  requestId?: string;
  event?: { subject: string; type: string; data: Record<string, unknown> };
}

export interface NewProof {
  id: string;
  mimeType: string;
  bytes: Buffer;
  sha256: string;
}

export type WriteOutcome = 'written' | 'conflict';

/**
 * The storage of citizens' settings (data-access implements it). Writes are single-document and
 * conditional: `create` fails with 'conflict' when the instance exists, `update` when its version
 * moved on; the caller reads again and decides again. A proof is stored before the write that
 * references it, so a crash leaves at most a proof nothing refers to.
 */
export interface SettingsStore {
  find(innbyggerFnr: string, definisjonGuid: string): Promise<SettingState | undefined>;
  findForWrite(innbyggerFnr: string, definisjonGuid: string): Promise<StoredSetting | undefined>;
  listForCitizen(innbyggerFnr: string, definisjonGuids: string[]): Promise<SettingState[]>;
  create(input: {
    state: Omit<SettingState, 'id' | 'pagingKey'>;
    entry: SettingHistoryEntry;
    proof?: NewProof;
    record: SettingWriteRecord;
  }): Promise<WriteOutcome>;
  update(input: {
    id: string;
    expectedVersion: number;
    state: SettingState;
    entry: SettingHistoryEntry;
    proof?: NewProof;
    record: SettingWriteRecord;
  }): Promise<WriteOutcome>;
  /** Up to `limit` instances with stored aktiv true and pagingKey > `after`, by pagingKey. */
  pageActive(definisjonGuid: string, after: number, limit: number): Promise<SettingState[]>;
  /** The proofs named, with their bytes (only the uploaded-proofs operation asks). */
  loadProofs(ids: string[]): Promise<StoredProof[]>;
}
