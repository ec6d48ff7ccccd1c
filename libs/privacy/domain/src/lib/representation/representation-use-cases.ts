import type { Caller, HentRepresentasjonsforholdResponse } from '@nhp/privacy-contracts';
import { privacyErrors } from '../errors';
import {
  tilleggsinfoOf,
  type RepresentationLookup,
  type RepresentationRelationship,
} from './relationships';

/** How an import is named in the audit trail. */
export interface ImportOptions {
  /** Names this import in the audit trail. */
  importId: string;
  at: Date;
  /** Who ran it (the admin CLI's operator or the sample-data seed). */
  actorId: string;
}

/** What the representation use cases need of storage (data-access's repository). */
export interface RepresentationStore extends RepresentationLookup {
  /**
   * Replaces the relationships of every caller in `byFnr` (callers not in it keep theirs), one
   * atomic write per caller carrying its audit record. Returns the number of callers written.
   */
  replaceRelationships(
    byFnr: ReadonlyMap<string, RepresentationRelationship[]>,
    options: ImportOptions,
  ): Promise<number>;
}

export interface ImportOutcome {
  /** Callers whose relationships were written. */
  replaced: number;
  /** Callers whose stored relationships already equalled the import's. */
  unchanged: number;
}

/** Representation relationships: the citizen's read, and the operators' import. */
export function createRepresentationUseCases(ports: {
  representation: RepresentationStore;
  now: () => Date;
}) {
  /** GET representasjonsforhold: the calling citizen's relationships, tilleggsinfo as of now. */
  async function get(caller: Caller): Promise<HentRepresentasjonsforholdResponse> {
    if (caller.pid === undefined) {
      throw privacyErrors.notActingFor(
        "Representation needs an access token in a citizen's context",
      );
    }
    const relationships = await ports.representation.findRelationships(caller.pid);
    return {
      representasjonsforhold: relationships.map((r) => ({
        eksternProfilGuid: r.eksternProfilGuid,
        fornavn: r.fornavn,
        mellomnavn: r.mellomnavn,
        etternavn: r.etternavn,
        representasjonsforholdType: r.representasjonsforholdType,
      })),
      tilleggsinfo: tilleggsinfoOf(relationships, ports.now()),
    };
  }

  /**
   * An import (parseRepresentationImport's `byFnr`): the relationships of every caller in it
   * replace that caller's earlier ones, one atomic write per caller; callers not in it keep theirs.
   * A caller whose stored list equals the import's is left alone, so importing again writes nothing.
   */
  async function importRelationships(
    caller: Caller,
    byFnr: ReadonlyMap<string, RepresentationRelationship[]>,
    importId: string,
  ): Promise<ImportOutcome> {
    const changed = new Map<string, RepresentationRelationship[]>();
    for (const [fnr, list] of byFnr) {
      const current = await ports.representation.findRelationships(fnr);
      if (JSON.stringify(current) !== JSON.stringify(list)) changed.set(fnr, list);
    }
    const replaced = await ports.representation.replaceRelationships(changed, {
      importId,
      at: ports.now(),
      actorId: caller.operator ?? caller.clientId ?? 'admin',
    });
    return { replaced, unchanged: byFnr.size - replaced };
  }

  return { get, importRelationships };
}

export type RepresentationUseCases = ReturnType<typeof createRepresentationUseCases>;
