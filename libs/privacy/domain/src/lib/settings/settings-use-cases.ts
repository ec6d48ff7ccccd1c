import { randomUUID } from 'node:crypto';
import { AppError } from '@nhp/shared-errors';
import {
  METADATA_FIELD_OF_TYPE,
  SETTING_CHANGED_EVENT_TYPE,
  settingChangedSubject,
  type HentInnbyggereAktivePiForDefinisjonV2Query,
  type HentInnbyggereAktivePiForDefinisjonV2Response,
  type HentInnbyggersOpplastedeBevisV2Request,
  type HentInnbyggersOpplastedeBevisV2Response,
  type HentInnbyggersPiV2Request,
  type HentInnbyggersPiV2Response,
  type PersonvernInnstillingV2,
  type SettingChangedEventData,
  type SettInnbyggersPersonvernInnstillingV2Request,
  type SettInnbyggersPersonvernInnstillingV2Response,
  type SjekkInnbyggersPiStatusV2Request,
  type Caller,
} from '@nhp/privacy-contracts';
import { assertMayActFor, assertNotCitizenToken, type CitizenAccessPorts } from '../citizen-access';
import { mayUsePart, resolveDefinition } from '../definition-access';
import { privacyErrors } from '../errors';
import { parseFnr } from '../fnr';
import type { Definition, DefinitionLookup, GrantLookup } from '../types';
import { definitionWindowOpen, isActiveAt } from './active';
import { decideSet } from './decide';
import { invalidPeriodIndex, normaliseMetadata } from './metadata';
import type {
  NewProof,
  ProofRef,
  SettingHistoryEntry,
  SettingsStore,
  SettingState,
  SettingWriteRecord,
  StoredSetting,
  WriteOutcome,
} from './model';
import { parseProof } from './proof';
import { MAX_TIDSPUNKT_AHEAD_MS, toInstant } from './time';
import { activeCitizenView, activePageView, settingView } from './view';

export interface SettingsUseCasePorts extends CitizenAccessPorts {
  definitions: DefinitionLookup;
  grants: GrantLookup;
  store: SettingsStore;
  now: () => Date;
  allowSyntheticIds: boolean;
  /** Entries per page of the active-citizens walk. */
  pageSize: number;
}

/** Optimistic writes retry this often before giving up (only under extreme contention on one instance). */
const MAX_WRITE_ATTEMPTS = 50;

/**
 * The use cases of citizens' settings (v2). Plain objects in and out; the HTTP layer validates the
 * shapes with the contracts, this layer the rules (identity numbers, whom a citizen's token acts
 * for, definitions and grants, proofs, ordering by tidspunkt, sekvensnummer).
 */
export function createSettingsUseCases(ports: SettingsUseCasePorts) {
  const { store } = ports;

  /**
   * The first checks of every operation on a citizen: the identity number (EPVK-101518), then
   * whom a citizen's token acts for (EPVK-100403), before anything of a definition is read.
   */
  function checkCitizen(caller: Caller, innbyggerFnr: string): Promise<void> {
    if (!parseFnr(innbyggerFnr, { allowSynthetic: ports.allowSyntheticIds })) {
      return Promise.reject(privacyErrors.invalidFnr());
    }
    // assertMayActFor's promise is the answer: no promise of this function's own (every status
    // check passes here).
    return assertMayActFor(ports, caller, innbyggerFnr);
  }

  /** checkCitizen, then the definition the caller names and may use for `access` (EPVK-101500). */
  async function citizensDefinition(
    caller: Caller,
    body: { innbyggerFnr: string; definisjonGuid: string; partKode?: string | null },
    access: 'read' | 'write',
  ): Promise<Definition> {
    await checkCitizen(caller, body.innbyggerFnr);
    return resolveDefinition(ports, caller, body, access);
  }

  function writeRecord(
    caller: Caller,
    definition: Definition,
    event: SettingChangedEventData | undefined,
  ): SettingWriteRecord {
    const record: SettingWriteRecord = {
      // A citizen acting on their own setting (the youth app) is recorded as "citizen": the
      // identity number is in the record's target, never in the actor.
      actor:
        caller.pid !== undefined
          ? { kind: 'citizen', id: 'citizen' }
          : {
              kind: caller.isAdmin && !caller.clientId ? 'admin' : 'client',
              id: caller.clientId ?? 'unknown',
            },
      operation: 'setting.set',
    };
    if (caller.requestId !== undefined) record.requestId = caller.requestId;
    if (event && definition.replikering) {
      record.event = {
        subject: settingChangedSubject(definition.partKode),
        type: SETTING_CHANGED_EVENT_TYPE,
        data: event,
      };
    }
    return record;
  }

  async function set(
    caller: Caller,
    body: SettInnbyggersPersonvernInnstillingV2Request,
  ): Promise<SettInnbyggersPersonvernInnstillingV2Response> {
    const definition = await citizensDefinition(caller, body, 'write');
    if (body.typePi != null && body.typePi !== definition.typePi) {
      throw privacyErrors.typeMismatch(definition.typePi);
    }
    if (definition.status !== 'aktiv') throw privacyErrors.definitionInactive();

    const metadataField = METADATA_FIELD_OF_TYPE[definition.typePi];
    for (const field of Object.values(METADATA_FIELD_OF_TYPE)) {
      if (field !== metadataField && body[field] != null) {
        throw privacyErrors.validation(
          `Invalid request: body.${field}: a ${definition.typePi} setting takes ${metadataField}`,
        );
      }
    }
    const metadata = normaliseMetadata(definition.typePi, body[metadataField]);
    const badPeriod = invalidPeriodIndex(metadata);
    if (badPeriod !== undefined) {
      throw privacyErrors.validation(
        `Invalid request: body.${metadataField}.tidsbegrensning.perioder[${badPeriod}]: tilDato is before fraDato`,
      );
    }

    const now = ports.now();
    const tidspunkt = body.tidspunkt == null ? now : toInstant(body.tidspunkt);
    if (tidspunkt.getTime() > now.getTime() + MAX_TIDSPUNKT_AHEAD_MS) {
      throw privacyErrors.validation(
        'Invalid request: body.tidspunkt: more than 5 minutes ahead of the service',
      );
    }
    const parsedProof = parseProof(body.signertBevisMimeType, body.signertBevisInnhold);
    const request = {
      aktiv: body.aktiv,
      metadata,
      tidspunkt,
      proofSha256: parsedProof?.sha256,
    };

    for (let attempt = 0; attempt < MAX_WRITE_ATTEMPTS; attempt++) {
      const current = await store.findForWrite(body.innbyggerFnr, definition.definisjonGuid);
      const decision = decideSet(current, request);
      if (decision.kind === 'unchanged') return { returKode: 'ok', instansEndret: 'ikkeEndret' };

      const registrert = ports.now();
      // A confirming repeat carries the current change's proof, if any: it refers to those bytes.
      const currentProof =
        decision.kind === 'confirm' && parsedProof
          ? currentChangeProof(current as StoredSetting)
          : undefined;
      const proof: NewProof | undefined =
        parsedProof && !currentProof
          ? {
              id: randomUUID(),
              mimeType: parsedProof.mimeType,
              bytes: parsedProof.bytes,
              sha256: parsedProof.sha256,
            }
          : undefined;
      const proofRef =
        currentProof ??
        (proof ? { id: proof.id, sha256: proof.sha256, mimeType: proof.mimeType } : null);
      const latest = { latestTidspunkt: tidspunkt, latestProofSha256: request.proofSha256 ?? null };
      // What every history entry of this request records, whatever it does to the state.
      const change = { tidspunkt, registrert, aktiv: body.aktiv, metadata, proof: proofRef };
      const withProof = proof ? { proof } : {};

      if (decision.kind === 'create') {
        const outcome = await store.create({
          state: {
            innbyggerFnr: body.innbyggerFnr,
            definisjonGuid: definition.definisjonGuid,
            partKode: definition.partKode,
            typePi: definition.typePi,
            aktiv: body.aktiv,
            metadata,
            sekvensnummer: 1,
            opprettetTidspunkt: tidspunkt,
            sistEndretTidspunkt: tidspunkt,
            proofSha256: proof?.sha256 ?? null,
            ...latest,
          },
          entry: { recordNo: 1, sekvensnummer: 1, applied: true, ...change },
          ...withProof,
          record: writeRecord(
            caller,
            definition,
            eventData(definition, body.innbyggerFnr, body.aktiv, 1, tidspunkt),
          ),
        });
        if (outcome === 'written') return { returKode: 'ok', instansEndret: 'endret' };
        continue;
      }

      // decideSet answers 'create' exactly when there is no instance.
      const stored = current as StoredSetting;
      /** The conditional write of the instance: its new state and this request's history entry. */
      const update = (
        state: SettingState,
        entry: Pick<SettingHistoryEntry, 'sekvensnummer' | 'applied' | 'confirmed'>,
        event?: SettingChangedEventData,
      ) =>
        store.update({
          id: stored.state.id,
          expectedVersion: stored.version,
          state,
          entry: { recordNo: stored.version + 1, ...entry, ...change },
          ...withProof,
          record: writeRecord(caller, definition, event),
        });

      let outcome: WriteOutcome;
      if (decision.kind === 'superseded') {
        outcome = await update(stored.state, {
          sekvensnummer: decision.sekvensnummerInForce,
          applied: false,
        });
      } else if (decision.kind === 'confirm') {
        outcome = await update(
          { ...stored.state, ...latest },
          { sekvensnummer: stored.state.sekvensnummer, applied: false, confirmed: true },
        );
      } else {
        const sekvensnummer = decision.sekvensnummer;
        outcome = await update(
          {
            ...stored.state,
            aktiv: body.aktiv,
            metadata,
            sekvensnummer,
            sistEndretTidspunkt: tidspunkt,
            proofSha256: proof?.sha256 ?? null,
            ...latest,
          },
          { sekvensnummer, applied: true },
          eventData(definition, stored.state.innbyggerFnr, body.aktiv, sekvensnummer, tidspunkt),
        );
      }
      if (outcome === 'written') {
        return {
          returKode: 'ok',
          instansEndret: decision.kind === 'change' ? 'endret' : 'ikkeEndret',
        };
      }
    }
    throw new AppError({
      code: 'SETTING_WRITE_CONTENTION',
      status: 500,
      category: 'internal',
      message: `The setting changed ${MAX_WRITE_ATTEMPTS} times while this request tried to write it`,
    });
  }

  async function checkStatus(
    caller: Caller,
    body: SjekkInnbyggersPiStatusV2Request,
  ): Promise<PersonvernInnstillingV2> {
    const definition = await citizensDefinition(caller, body, 'read');
    const instance = await store.find(body.innbyggerFnr, definition.definisjonGuid);
    return settingView(definition, body.innbyggerFnr, instance, ports.now());
  }

  async function forPart(
    caller: Caller,
    body: HentInnbyggersPiV2Request,
  ): Promise<HentInnbyggersPiV2Response> {
    await checkCitizen(caller, body.innbyggerFnr);
    // A party the client may not read answers like a party without definitions: nothing leaks.
    if (!(await mayUsePart(ports.grants, caller, body.partKode, 'read'))) {
      return { personvernInnstillinger: [] };
    }
    const definitions = await ports.definitions.listDefinitionsOfPart(body.partKode);
    if (definitions.length === 0) return { personvernInnstillinger: [] };
    const instances = await store.listForCitizen(
      body.innbyggerFnr,
      definitions.map((d) => d.definisjonGuid),
    );
    const byDefinition = new Map(instances.map((i) => [i.definisjonGuid, i]));
    const now = ports.now();
    const ordered = [...definitions].sort(
      (a, b) =>
        (a.sortering ?? Number.MAX_SAFE_INTEGER) - (b.sortering ?? Number.MAX_SAFE_INTEGER) ||
        a.definisjonGuid.localeCompare(b.definisjonGuid),
    );
    const personvernInnstillinger: PersonvernInnstillingV2[] = [];
    for (const definition of ordered) {
      const instance = byDefinition.get(definition.definisjonGuid);
      if (instance)
        personvernInnstillinger.push(settingView(definition, body.innbyggerFnr, instance, now));
    }
    return { personvernInnstillinger };
  }

  async function uploadedProofs(
    caller: Caller,
    body: HentInnbyggersOpplastedeBevisV2Request,
  ): Promise<HentInnbyggersOpplastedeBevisV2Response> {
    const definition = await citizensDefinition(caller, body, 'read');
    const stored = await store.findForWrite(body.innbyggerFnr, definition.definisjonGuid);
    if (!stored) return { opplastedeBevis: [] };
    // A confirming repeat refers to the current change's proof: listed once, with that change.
    const withProof = stored.history.flatMap((entry) =>
      entry.proof && !entry.confirmed ? [{ entry, proofId: entry.proof.id }] : [],
    );
    const proofs = new Map(
      (await store.loadProofs(withProof.map((e) => e.proofId))).map((p) => [p.id, p]),
    );
    const ordered = [...withProof].sort(
      (a, b) =>
        a.entry.sekvensnummer - b.entry.sekvensnummer || a.entry.recordNo - b.entry.recordNo,
    );
    return {
      opplastedeBevis: ordered.flatMap(({ entry, proofId }) => {
        const proof = proofs.get(proofId);
        if (!proof) return [];
        const current = entry.applied && entry.sekvensnummer === stored.state.sekvensnummer;
        return [
          {
            sekvensnummer: entry.sekvensnummer,
            regsitrertTidspunkt: entry.registrert.toISOString(),
            historisk: !current,
            signertBevisMimeType: proof.mimeType,
            signertBevisInnhold: proof.bytes.toString('base64'),
          },
        ];
      }),
    };
  }

  async function activeCitizens(
    caller: Caller,
    query: HentInnbyggereAktivePiForDefinisjonV2Query,
  ): Promise<HentInnbyggereAktivePiForDefinisjonV2Response> {
    assertNotCitizenToken(caller);
    const definition = await resolveDefinition(ports, caller, query, 'read');
    const now = ports.now();
    if (!definitionWindowOpen(definition.fasteMetadata.tidsbegrensning, now)) {
      return activePageView(definition, 0, []);
    }
    const after = query.pagingReference ?? 0;
    const rows = await store.pageActive(definition.definisjonGuid, after, ports.pageSize + 1);
    const page = rows.slice(0, ports.pageSize);
    const lastOfPage = page.at(-1);
    const next = rows.length > ports.pageSize && lastOfPage ? lastOfPage.pagingKey : 0;
    const entries = page
      .filter((instance) => isActiveAt(definition, instance, now))
      .map((instance) => activeCitizenView(definition, instance));
    return activePageView(definition, next, entries);
  }

  return { set, checkStatus, forPart, uploadedProofs, activeCitizens };
}

export type SettingsUseCases = ReturnType<typeof createSettingsUseCases>;

/**
 * The proof of the change that made the current state, as history refers to it (undefined when
 * it had none, or its entry is no longer in the kept history).
 */
function currentChangeProof(stored: StoredSetting): ProofRef | undefined {
  const change = stored.history.find(
    (entry) => entry.applied && entry.sekvensnummer === stored.state.sekvensnummer,
  );
  return change?.proof && change.proof.sha256 === stored.state.proofSha256
    ? change.proof
    : undefined;
}

function eventData(
  definition: Definition,
  innbyggerFnr: string,
  aktiv: boolean,
  sekvensnummer: number,
  sistEndret: Date,
): SettingChangedEventData {
  return {
    definisjonGuid: definition.definisjonGuid,
    partKode: definition.partKode,
    typePi: definition.typePi,
    innbyggerFnr,
    aktiv,
    sekvensnummer,
    sistEndretTidspunkt: sistEndret.toISOString(),
  };
}
