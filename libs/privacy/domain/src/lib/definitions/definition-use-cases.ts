import type {
  Caller,
  CreateDefinitionRequest,
  UpdateDefinitionRequest,
} from '@nhp/privacy-contracts';
import { auditOf, type AuditContext } from '../audit/audit';
import { privacyErrors } from '../errors';
import { required } from '../required';
import { findTemplate } from '../templates';
import type { Definition, DefinitionStatus, Relasjon } from '../types';
import { definitionFromTemplate } from './definition-from-template';

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
  definitions: {
    /** The GUIDs among `guids` that name no definition. */
    missing(guids: readonly string[]): Promise<string[]>;
    /** Refuses an existing definisjonGuid (EPVK-103409). */
    create(definition: Definition, audit: AuditContext): Promise<void>;
    /** Refuses an unknown definisjonGuid (EPVK-101500). */
    update(definisjonGuid: string, changes: DefinitionChanges, audit: AuditContext): Promise<void>;
  };
}

/** Definitions (POST and PATCH /innstillingdefinisjon/v1); the admin scope is the entry point's check. */
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

  return { create, update };
}

export type DefinitionUseCases = ReturnType<typeof createDefinitionUseCases>;
