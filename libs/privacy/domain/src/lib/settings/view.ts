import type {
  HentInnbyggereAktivePiForDefinisjonV2Response,
  InnbyggerMetadata,
  PersonvernInnstillingHentInnbyggereV2,
  PersonvernInnstillingV2,
} from '@nhp/privacy-contracts';
import type { Definition, FasteMetadata, PiType } from '../types';
import { isActiveAt } from './active';
import { normaliseMetadata } from './metadata';
import type { SettingState } from './model';

const PREFIX: Record<PiType, 'sa' | 're' | 'tb'> = {
  samtykke: 'sa',
  reservasjon: 're',
  tilgangsbegrensning: 'tb',
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

/** Answers carry the metadata of the definition's type only, and always its full shape. */
function innbyggerMetadataView(typePi: PiType, metadata: InnbyggerMetadata): InnbyggerMetadata {
  const full = normaliseMetadata(typePi, null);
  return {
    ...full,
    ...metadata,
    ...(typePi === 'tilgangsbegrensning'
      ? { detaljertAngivelse: metadata.detaljertAngivelse ?? full.detaljertAngivelse }
      : { detaljertAngivelse: undefined }),
  };
}

function stripUndefined<T extends object>(value: T): T {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as T;
}

/** PersonvernInnstillingV2 of a definition for a citizen: the instance if there is one. */
export function settingView(
  definition: Definition,
  innbyggerFnr: string,
  instance: SettingState | undefined,
  now: Date,
): PersonvernInnstillingV2 {
  const typePi = definition.typePi;
  const p = PREFIX[typePi];
  const metadata = stripUndefined(
    innbyggerMetadataView(typePi, instance?.metadata ?? normaliseMetadata(typePi, null)),
  );
  const wrapper = {
    [`${p}FasteMetadata`]: fasteMetadataView(typePi, definition.fasteMetadata),
    [`${p}InnbyggerMetadata`]: metadata,
  };
  return {
    innbyggerFnr: instance?.innbyggerFnr ?? innbyggerFnr,
    definisjonGuid: definition.definisjonGuid,
    definisjonNavn: definition.navn,
    partKode: definition.partKode,
    typePi,
    aktiv: instance ? isActiveAt(definition, instance, now) : false,
    [`${p}Metadata`]: wrapper,
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
    [`${PREFIX[typePi]}InnbyggerMetadata`]: stripUndefined(
      innbyggerMetadataView(typePi, instance.metadata),
    ),
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
    [`${PREFIX[typePi]}FasteMetadata`]: fasteMetadataView(typePi, definition.fasteMetadata),
    pagingReference,
    personvernInnstillinger: entries,
  } as HentInnbyggereAktivePiForDefinisjonV2Response;
}
