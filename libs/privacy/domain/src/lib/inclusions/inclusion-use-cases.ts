import {
  canonicalInkluderingType,
  type Caller,
  type InkluderingType,
  type SettInkluderingRequest,
  type SettInkluderingResponse,
} from '@nhp/privacy-contracts';
import { assertMayActFor, type CitizenAccessPorts } from '../citizen-access';
import { resolveDefinition } from '../definition-access';
import { privacyErrors } from '../errors';
import { isValidFnr } from '../fnr';
import type { DefinitionLookup, GrantLookup } from '../types';

/** An inclusion's state as stored: one per citizen and definition. */
export interface Inclusion {
  innbyggerFnr: string;
  definisjonGuid: string;
  partKode: string;
  inkluderingType: InkluderingType;
  aktiv: boolean;
}

/** One change of an inclusion, with who made it and when (history and audit). */
export interface InclusionChange extends Inclusion {
  actor: Caller;
  requestId?: string | undefined;
  at: Date;
}

export interface InclusionStore {
  /**
   * Makes `change` the inclusion's current state, keeping the earlier state in its history and
   * auditing it in the same write. A change equal to the current state writes nothing.
   */
  setInclusion(change: InclusionChange): Promise<{ changed: boolean }>;
}

export interface InclusionUseCasePorts extends CitizenAccessPorts {
  definitions: DefinitionLookup;
  grants: GrantLookup;
  inclusions: InclusionStore;
  now: () => Date;
  allowSyntheticIds: boolean;
}

/** Citizens' inclusions (POST settinnbyggersinkludering). */
export function createInclusionUseCases(ports: InclusionUseCasePorts) {
  /**
   * Order of the checks: the identity number (EPVK-101518), whom a citizen's token acts for
   * (EPVK-100403, see assertMayActFor), then the definition with the caller's write grant
   * (EPVK-101500, alike for unknown, foreign and not granted). An inclusion may be ended on an
   * inactive definition but not started or changed (EPVK-101501), as with settings.
   */
  async function set(
    caller: Caller,
    request: SettInkluderingRequest,
  ): Promise<SettInkluderingResponse> {
    if (!isValidFnr(request.innbyggerFnr, { allowSynthetic: ports.allowSyntheticIds })) {
      throw privacyErrors.invalidFnr();
    }
    await assertMayActFor(ports, caller, request.innbyggerFnr);
    const inkluderingType = canonicalInkluderingType(request.inkluderingType);
    if (inkluderingType === undefined) {
      // The contract refuses these already; kept so the use case is safe on its own.
      throw privacyErrors.validation('inkluderingType: expected Inkludert, Deltager or Oppfort');
    }
    const definition = await resolveDefinition(
      ports,
      caller,
      { definisjonGuid: request.personvernInnstillingDefinisjonId, partKode: request.partKode },
      'write',
    );
    const aktiv = request.aktiv ?? true;
    if (aktiv && definition.status !== 'aktiv') throw privacyErrors.definitionInactive();

    await ports.inclusions.setInclusion({
      innbyggerFnr: request.innbyggerFnr,
      definisjonGuid: definition.definisjonGuid,
      partKode: definition.partKode,
      inkluderingType,
      aktiv,
      actor: caller,
      requestId: caller.requestId,
      at: ports.now(),
    });
    return {
      innbyggerFnr: request.innbyggerFnr,
      partKode: definition.partKode,
      personvernInnstillingDefinisjonId: definition.definisjonGuid,
      inkluderingType,
      aktiv,
    };
  }

  return { set };
}

export type InclusionUseCases = ReturnType<typeof createInclusionUseCases>;
