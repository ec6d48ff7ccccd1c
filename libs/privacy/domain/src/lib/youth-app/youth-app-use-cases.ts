import type { Caller } from '@nhp/privacy-contracts';
import { privacyErrors } from '../errors';
import { isValidFnr } from '../fnr';
import type { SettingsStore } from '../settings/model';
import type { SettingsUseCases } from '../settings/settings-use-cases';
import { BUILT_IN_PART, YOUTH_APP_DEFINITION_GUID } from '../templates';

export interface YouthAppUseCasePorts {
  settings: Pick<SettingsUseCases, 'set'>;
  store: Pick<SettingsStore, 'find'>;
  allowSyntheticIds: boolean;
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
export function createYouthAppUseCases(ports: YouthAppUseCasePorts) {
  async function setConsent(caller: Caller, aktiv: boolean): Promise<void> {
    const { pid } = caller;
    if (pid === undefined) {
      throw privacyErrors.notActingFor(
        "The youth app needs an access token in a citizen's context",
      );
    }
    if (!isValidFnr(pid, { allowSynthetic: ports.allowSyntheticIds })) {
      throw privacyErrors.invalidFnr('pid');
    }
    if (!aktiv && !(await ports.store.find(pid, YOUTH_APP_DEFINITION_GUID))) return;
    await ports.settings.set(
      {
        clientId: caller.clientId,
        isAdmin: true,
        pid,
        ...(caller.requestId === undefined ? {} : { requestId: caller.requestId }),
      },
      {
        innbyggerFnr: pid,
        definisjonGuid: YOUTH_APP_DEFINITION_GUID,
        partKode: BUILT_IN_PART.partKode,
        typePi: 'samtykke',
        aktiv,
      },
    );
  }

  return {
    /** POST ungdomsapp: gives the consent. */
    give: (caller: Caller) => setConsent(caller, true),
    /** DELETE ungdomsapp: withdraws it. */
    withdraw: (caller: Caller) => setConsent(caller, false),
  };
}

export type YouthAppUseCases = ReturnType<typeof createYouthAppUseCases>;
