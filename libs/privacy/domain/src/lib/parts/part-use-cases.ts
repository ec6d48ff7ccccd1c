import type { Caller, PartRequest } from '@nhp/privacy-contracts';
import { auditOf, type AuditContext } from '../audit/audit';
import { required } from '../required';

/** A party as stored and read: the interface's fields, partKode required. */
export interface Part {
  partKode: string;
  navn: string | null;
  kortNavn: string | null;
  beskrivelse: string | null;
  uri: string | null;
}

/** What the party use cases need of storage (data-access's part repository). */
export interface PartStore {
  /** Refuses an existing partKode (EPVK-102409). */
  create(part: Part, audit: AuditContext): Promise<void>;
  /** Refuses an unknown partKode (EPVK-102404). */
  update(part: Part, audit: AuditContext): Promise<void>;
  exists(partKode: string): Promise<boolean>;
}

function partOf(request: PartRequest): Part {
  return {
    partKode: required(request.partKode, 'partKode'),
    navn: request.navn ?? null,
    kortNavn: request.kortNavn ?? null,
    beskrivelse: request.beskrivelse ?? null,
    uri: request.uri ?? null,
  };
}

/** Parties (POST and PUT /part/v1); the caller's admin scope is the entry point's check. */
export function createPartUseCases(ports: { parts: PartStore }) {
  return {
    /** Creates a party; an existing partKode is EPVK-102409. */
    create: (caller: Caller, request: PartRequest): Promise<void> =>
      ports.parts.create(partOf(request), auditOf(caller)),
    /** Replaces a party's fields (absent or null: null); an unknown partKode is EPVK-102404. */
    update: (caller: Caller, request: PartRequest): Promise<void> =>
      ports.parts.update(partOf(request), auditOf(caller)),
  };
}

export type PartUseCases = ReturnType<typeof createPartUseCases>;
