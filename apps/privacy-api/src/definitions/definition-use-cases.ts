import type { CreateDefinitionRequest, UpdateDefinitionRequest } from '@nhp/privacy-contracts';
import type { AuditContext, DefinitionChanges } from '@nhp/privacy-data-access';
import {
  findTemplate,
  privacyErrors,
  type Definition,
  type DefinitionStatus,
  type DefinitionTemplate,
  type Relasjon,
} from '@nhp/privacy-domain';
import type { PrivacyContext } from '../context';

/** A field the interface leaves optional but the operation cannot do without: 400 EPVK-100400. */
function required<T>(value: T | null | undefined, path: string): T {
  if (value === undefined || value === null) {
    throw privacyErrors.validation(`Invalid request: body.${path}: required`, [
      { location: 'body', path, message: 'required' },
    ]);
  }
  return value;
}

/** A new definition of the template's type and fixed metadata; created `aktiv`. */
export function definitionFromTemplate(
  template: DefinitionTemplate,
  fields: {
    definisjonGuid: string;
    partKode: string;
    navn?: string | null;
    beskrivelse?: string | null;
    visning?: string | null;
    fullstendigTekstInnhold?: string | null;
    kravTilLesingAvFullstendigTekst?: boolean;
    sortering?: number | null;
    replikering?: boolean;
    relasjoner?: Relasjon[];
  },
): Definition {
  return {
    definisjonGuid: fields.definisjonGuid.toLowerCase(),
    definisjonMalGuid: template.definisjonMalGuid,
    partKode: fields.partKode,
    navn: fields.navn ?? null,
    beskrivelse: fields.beskrivelse ?? null,
    visning: fields.visning ?? null,
    fullstendigTekstInnhold: fields.fullstendigTekstInnhold ?? null,
    kravTilLesingAvFullstendigTekst: fields.kravTilLesingAvFullstendigTekst ?? false,
    sortering: fields.sortering ?? null,
    replikering: fields.replikering ?? false,
    relasjoner: fields.relasjoner ?? [],
    status: 'aktiv',
    typePi: template.typePi,
    // A copy: the template is shared reference data.
    fasteMetadata: structuredClone(template.fasteMetadata),
    takesPeriods: template.takesPeriods,
  };
}

/**
 * POST /innstillingdefinisjon/v1. Checks in the order a client fixes them: the fields it must
 * send, the template (EPVK-103404), the party (EPVK-102404), the related definitions
 * (EPVK-103404), then the store refuses an existing definisjonGuid (EPVK-103409).
 */
export async function createDefinition(
  context: PrivacyContext,
  request: CreateDefinitionRequest,
  audit: AuditContext,
): Promise<Definition> {
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
  if (!(await context.parts.exists(partKode))) throw privacyErrors.unknownPart(partKode);
  const missing = await context.definitions.missing(relasjoner.map((r) => r.definisjonGuid));
  if (missing[0] !== undefined) throw privacyErrors.unknownRelation(missing[0]);

  const definition = definitionFromTemplate(template, {
    ...request,
    definisjonGuid,
    partKode,
    relasjoner,
  });
  await context.definitions.create(definition, audit);
  return definition;
}

/** PATCH /innstillingdefinisjon/v1: null or absent fields stay as they are. */
export async function updateDefinition(
  context: PrivacyContext,
  request: UpdateDefinitionRequest,
  audit: AuditContext,
): Promise<void> {
  const definisjonGuid = required(request.definisjonGuid, 'definisjonGuid');
  const changes: DefinitionChanges = {};
  if (request.visning != null) changes.visning = request.visning;
  if (request.kravTilLesingAvFullstendigTekst != null) {
    changes.kravTilLesingAvFullstendigTekst = request.kravTilLesingAvFullstendigTekst;
  }
  if (request.sortering != null) changes.sortering = request.sortering;
  if (request.replikering != null) changes.replikering = request.replikering;
  if (request.status != null) changes.status = request.status.toLowerCase() as DefinitionStatus;
  await context.definitions.update(definisjonGuid, changes, audit);
}
