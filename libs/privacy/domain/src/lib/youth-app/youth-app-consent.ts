import { privacyErrors } from '../errors';
import { isValidFnr } from '../fnr';
import type { SettingsStore } from '../settings/model';
import type { SettingsService } from '../settings/service';
import { BUILT_IN_PART, YOUTH_APP_DEFINITION_GUID } from '../templates';

export interface YouthAppConsentPorts {
  settings: Pick<SettingsService, 'set'>;
  store: Pick<SettingsStore, 'find'>;
  allowSyntheticIds: boolean;
}

export interface YouthAppCaller {
  /** The citizen in the token's context (personal data: never log). */
  pid: string;
  clientId: string | undefined;
  requestId?: string | undefined;
}

/**
 * The youth-app consent: the calling citizen's setting of the built-in consent definition, kept
 * by the settings use case like any other setting (history, sekvensnummer, audit), so that check
 * status of that definition shows it. The citizen acts on their own consent, so no party grant
 * applies (the actor is let through as an administrator is, and audited as the citizen).
 * Both operations are idempotent: giving a given consent, or withdrawing a withdrawn one, changes
 * nothing (the settings rules record it as confirming the state); withdrawing one never given
 * writes nothing at all.
 */
export function createYouthAppConsent(ports: YouthAppConsentPorts) {
  async function setConsent(caller: YouthAppCaller, aktiv: boolean): Promise<void> {
    if (!isValidFnr(caller.pid, { allowSynthetic: ports.allowSyntheticIds })) {
      throw privacyErrors.invalidFnr('pid');
    }
    if (!aktiv && !(await ports.store.find(caller.pid, YOUTH_APP_DEFINITION_GUID))) return;
    await ports.settings.set(
      {
        actor: { clientId: caller.clientId, isAdmin: true, pid: caller.pid },
        ...(caller.requestId === undefined ? {} : { requestId: caller.requestId }),
      },
      {
        innbyggerFnr: caller.pid,
        definisjonGuid: YOUTH_APP_DEFINITION_GUID,
        partKode: BUILT_IN_PART.partKode,
        typePi: 'samtykke',
        aktiv,
      },
    );
  }

  return {
    /** POST ungdomsapp: gives the consent. */
    give: (caller: YouthAppCaller) => setConsent(caller, true),
    /** DELETE ungdomsapp: withdraws it. */
    withdraw: (caller: YouthAppCaller) => setConsent(caller, false),
  };
}

export type YouthAppConsent = ReturnType<typeof createYouthAppConsent>;
