import type {
  HentInnbyggereAktivePiForDefinisjonV2Response,
  InnbyggerMetadata,
  PersonvernInnstillingHentInnbyggereV2,
  PersonvernInnstillingV2,
} from '@nhp/privacy-contracts';
import type { Definition, FasteMetadata, PiType } from '../types';
import { isActiveAt } from './active';
import type { SettingState } from './model';

/** The names of a type's metadata members (sa-, re-, tb-), spelled out once per type. */
function keysOf(prefix: 'sa' | 're' | 'tb') {
  return {
    metadata: `${prefix}Metadata`,
    faste: `${prefix}FasteMetadata`,
    innbygger: `${prefix}InnbyggerMetadata`,
  };
}
const KEYS: Record<PiType, ReturnType<typeof keysOf>> = {
  samtykke: keysOf('sa'),
  reservasjon: keysOf('re'),
  tilgangsbegrensning: keysOf('tb'),
};

function fasteMetadataView(typePi: PiType, faste: FasteMetadata) {
  const base = {
    tidsbegrensning: {
      tidsbegrensetFra: faste.tidsbegrensning?.tidsbegrensetFra ?? null,
      tidsbegrensetTil: faste.tidsbegrensning?.tidsbegrensetTil ?? null,
    },
    omfangElementer:
      faste.omfangElementer?.map((e) => ({
        omfangKode: e.omfangKode ?? null,
        logiskOmfang: e.logiskOmfang ?? null,
        presisering: e.presisering ?? null,
      })) ?? null,
  };
  if (typePi !== 'tilgangsbegrensning') return base;
  return {
    ...base,
    detaljertAngivelse: {
      kategoriOpplysninger: faste.detaljertAngivelse?.kategoriOpplysninger ?? null,
      rolleTilPasient: faste.detaljertAngivelse?.rolleTilPasient ?? null,
    },
  };
}

/**
 * Answers carry the metadata of the definition's type only, and always its full shape (stored
 * metadata is canonical already, see normaliseMetadata; this fills what an older document lacks).
 */
function innbyggerMetadataView(
  typePi: PiType,
  metadata: InnbyggerMetadata | undefined,
): InnbyggerMetadata {
  const view: InnbyggerMetadata = {
    tidsbegrensning: metadata?.tidsbegrensning ?? { perioder: null },
  };
  if (typePi === 'tilgangsbegrensning') {
    view.detaljertAngivelse = metadata?.detaljertAngivelse ?? {
      navngittHelseperson: null,
      helseforetak: null,
    };
  }
  return view;
}

/** PersonvernInnstillingV2 of a definition for a citizen: the instance if there is one. */
export function settingView(
  definition: Definition,
  innbyggerFnr: string,
  instance: SettingState | undefined,
  now: Date,
): PersonvernInnstillingV2 {
  const typePi = definition.typePi;
  const keys = KEYS[typePi];
  const metadata = innbyggerMetadataView(typePi, instance?.metadata);
  const wrapper = {
    [keys.faste]: fasteMetadataView(typePi, definition.fasteMetadata),
    [keys.innbygger]: metadata,
  };
  return {
    innbyggerFnr: instance?.innbyggerFnr ?? innbyggerFnr,
    definisjonGuid: definition.definisjonGuid,
    definisjonNavn: definition.navn,
    partKode: definition.partKode,
    typePi,
    aktiv: instance ? isActiveAt(definition, instance, now) : false,
    [keys.metadata]: wrapper,
    sekvensnummer: instance?.sekvensnummer ?? null,
    opprettetTidspunkt: instance?.opprettetTidspunkt.toISOString() ?? null,
    sistEndretTidspunkt: instance?.sistEndretTidspunkt.toISOString() ?? null,
  } as PersonvernInnstillingV2;
}

export function activeCitizenView(
  definition: Definition,
  instance: SettingState,
): PersonvernInnstillingHentInnbyggereV2 {
  const typePi = definition.typePi;
  return {
    innbyggerFnr: instance.innbyggerFnr,
    [KEYS[typePi].innbygger]: innbyggerMetadataView(typePi, instance.metadata),
    sekvensnummer: instance.sekvensnummer,
    opprettetTidspunkt: instance.opprettetTidspunkt.toISOString(),
    sistEndretTidspunkt: instance.sistEndretTidspunkt.toISOString(),
  } as PersonvernInnstillingHentInnbyggereV2;
}

/** The definition's part of every active-citizens page, an empty one too. */
export function activePageView(
  definition: Definition,
  pagingReference: number,
  entries: PersonvernInnstillingHentInnbyggereV2[],
): HentInnbyggereAktivePiForDefinisjonV2Response {
  const typePi = definition.typePi;
  return {
    definisjonGuid: definition.definisjonGuid,
    definisjonNavn: definition.navn,
    partKode: definition.partKode,
    typePi,
    [KEYS[typePi].faste]: fasteMetadataView(typePi, definition.fasteMetadata),
    pagingReference,
    personvernInnstillinger: entries,
  } as HentInnbyggereAktivePiForDefinisjonV2Response;
}
