import type {
  Caller,
  CreateDefinitionRequest,
  HentInnstillingDefinisjonerQuery,
  HentInnstillingDefinisjonerResponse,
  UpdateDefinitionRequest,
} from '@nhp/privacy-contracts';
import { auditOf, type AuditContext } from '../audit/audit';
import { mayUsePart } from '../definition-access';
import { privacyErrors } from '../errors';
import { required } from '../required';
import { findTemplate } from '../templates';
import type {
  Definition,
  DefinitionLookup,
  DefinitionStatus,
  GrantLookup,
  Relasjon,
} from '../types';
import { definitionFromTemplate } from './definition-from-template';
import { definitionListingView } from './definition-listing-view';

/** The fields PATCH /innstillingdefinisjon/v1 may change; absent ones stay as they are. */
export interface DefinitionChanges {
  visning?: string;
  kravTilLesingAvFullstendigTekst?: boolean;
  sortering?: number;
  replikering?: boolean;
  status?: DefinitionStatus;
}

/** What the definition use cases need of storage (data-access's repositories). */
export interface DefinitionUseCasePorts {
  parts: { exists(partKode: string): Promise<boolean> };
  grants: GrantLookup;
  definitions: Pick<DefinitionLookup, 'listDefinitionsOfPart'> & {
    /** The GUIDs among `guids` that name no definition. */
    missing(guids: readonly string[]): Promise<string[]>;
    /** Refuses an existing definisjonGuid (EPVK-103409). */
    create(definition: Definition, audit: AuditContext): Promise<void>;
    /** Refuses an unknown definisjonGuid (EPVK-101500). */
    update(definisjonGuid: string, changes: DefinitionChanges, audit: AuditContext): Promise<void>;
  };
}

/**
 * Definitions (GET, POST and PATCH /innstillingdefinisjon/v1); the scope (read to list, admin to
 * create and change) is the entry point's check.
 */
export function createDefinitionUseCases(ports: DefinitionUseCasePorts) {
  /**
   * Checks in the order a client fixes them: the fields it must send, the template
   * (EPVK-103404), the party (EPVK-102404), the related definitions (EPVK-103404), then the store
   * refuses an existing definisjonGuid (EPVK-103409).
   */
  async function create(caller: Caller, request: CreateDefinitionRequest): Promise<Definition> {
    const definisjonMalGuid = required(request.definisjonMalGuid, 'definisjonMalGuid');
    const definisjonGuid = required(request.definisjonGuid, 'definisjonGuid');
    const partKode = required(request.partKode, 'partKode');
    const relasjoner: Relasjon[] = (request.relasjoner ?? []).map((relasjon, i) => ({
      definisjonGuid: required(
        relasjon.definisjonGuid,
        `relasjoner[${i}].definisjonGuid`,
      ).toLowerCase(),
      relasjonType: relasjon.relasjonType ?? null,
      beskrivelse: relasjon.beskrivelse ?? null,
    }));

    const template = findTemplate(definisjonMalGuid);
    if (!template) throw privacyErrors.unknownTemplate();
    if (!(await ports.parts.exists(partKode))) throw privacyErrors.unknownPart(partKode);
    const missing = await ports.definitions.missing(relasjoner.map((r) => r.definisjonGuid));
    if (missing[0] !== undefined) throw privacyErrors.unknownRelation(missing[0]);

    const definition = definitionFromTemplate(template, {
      ...request,
      definisjonGuid,
      partKode,
      relasjoner,
    });
    await ports.definitions.create(definition, auditOf(caller));
    return definition;
  }

  /** Null or absent fields stay as they are. */
  async function update(caller: Caller, request: UpdateDefinitionRequest): Promise<void> {
    const definisjonGuid = required(request.definisjonGuid, 'definisjonGuid');
    const changes: DefinitionChanges = {};
    if (request.visning != null) changes.visning = request.visning;
    if (request.kravTilLesingAvFullstendigTekst != null) {
      changes.kravTilLesingAvFullstendigTekst = request.kravTilLesingAvFullstendigTekst;
    }
    if (request.sortering != null) changes.sortering = request.sortering;
    if (request.replikering != null) changes.replikering = request.replikering;
    if (request.status != null) changes.status = request.status.toLowerCase() as DefinitionStatus;
    await ports.definitions.update(definisjonGuid, changes, auditOf(caller));
  }

  /**
   * Which definitions of a party the caller may read, so that a downstream copy knows what to
   * walk. Grants are per party, so the caller sees all of a party's definitions or none (admin:
   * all). An unknown party is EPVK-102404, as on a definition: parties are not secret (their codes
   * are in every event subject), and a mistyped partKode should not look like a party without
   * definitions. A party the caller has no read grant for answers an empty list, exactly as a
   * party without definitions does, so grants do not leak.
   */
  async function list(
    caller: Caller,
    query: HentInnstillingDefinisjonerQuery,
  ): Promise<HentInnstillingDefinisjonerResponse> {
    const { partKode } = query;
    if (!(await ports.parts.exists(partKode))) throw privacyErrors.unknownPart(partKode);
    if (!(await mayUsePart(ports.grants, caller, partKode, 'read'))) {
      return { partKode, definisjoner: [] };
    }
    const definitions = await ports.definitions.listDefinitionsOfPart(partKode);
    const definisjoner = definitions
      .map(definitionListingView)
      .sort((a, b) =>
        a.definisjonGuid < b.definisjonGuid ? -1 : a.definisjonGuid > b.definisjonGuid ? 1 : 0,
      );
    return { partKode, definisjoner };
  }

  return { list, create, update };
}

export type DefinitionUseCases = ReturnType<typeof createDefinitionUseCases>;
