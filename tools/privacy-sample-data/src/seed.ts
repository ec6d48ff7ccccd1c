import { readFile } from 'node:fs/promises';
import {
  createDefinitionRepository,
  createGrantRepository,
  createInclusionRepository,
  createPartRepository,
  createRepresentationRepository,
  createSettingRepository,
  type AuditContext,
  type Journal,
} from '@nhp/privacy-data-access';
import {
  createSettingsService,
  createYouthAppConsent,
  parseRepresentationImport,
  setInclusion,
  YOUTH_APP_DEFINITION_GUID,
  type Actor,
} from '@nhp/privacy-domain';
import type { Connection } from 'mongoose';
import {
  SAMPLE_CLIENT_ID,
  SAMPLE_DEFINITIONS,
  SAMPLE_INCLUSIONS,
  SAMPLE_PART,
  SAMPLE_REPRESENTATION_FILE,
  SAMPLE_SETTINGS,
  SAMPLE_YOUTH_APP_CONSENTS,
} from './sample-data';

export interface SeedDeps {
  connection: Connection;
  journal: Journal;
  now?: () => Date;
}

export interface SeedReport {
  /** What this run wrote (an unchanged item writes nothing). */
  part: boolean;
  definitions: number;
  grant: boolean;
  settings: number;
  youthAppConsents: number;
  inclusions: number;
  representationCallers: number;
}

const ACTOR_ID = 'privacy-sample-data';
const audit: AuditContext = { actor: { kind: 'admin', id: ACTOR_ID } };
const actor: Actor = { clientId: ACTOR_ID, isAdmin: true };

const sameJson = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Seeds the development data. Idempotent: what exists and is equal is left alone (no write, no
 * audit record), so the dev stack runs it at every start. Development only: the caller refuses
 * production.
 */
export async function seedPrivacySampleData(deps: SeedDeps): Promise<SeedReport> {
  const { connection, journal } = deps;
  const now = deps.now ?? (() => new Date());
  const parts = createPartRepository({ connection, journal, now });
  const definitions = createDefinitionRepository({ connection, journal, now, cacheTtlMs: 0 });
  const grants = createGrantRepository({ connection, journal, now, cacheTtlMs: 0 });
  const inclusions = createInclusionRepository({ connection, journal });
  const representation = createRepresentationRepository({ connection, journal });

  const report: SeedReport = {
    part: await parts.ensure({ ...SAMPLE_PART }, audit),
    definitions: 0,
    grant: false,
    settings: 0,
    youthAppConsents: 0,
    inclusions: 0,
    representationCallers: 0,
  };

  for (const definition of Object.values(SAMPLE_DEFINITIONS)) {
    if (await definitions.ensure(definition, audit)) report.definitions += 1;
  }

  const current = (await grants.list({ clientId: SAMPLE_CLIENT_ID })).find(
    (g) => g.partKode === SAMPLE_PART.partKode,
  );
  if (!current?.read || !current.write) {
    await grants.set(SAMPLE_CLIENT_ID, SAMPLE_PART.partKode, { read: true, write: true }, audit);
    report.grant = true;
  }

  const store = createSettingRepository({ connection, journal });
  const settings = createSettingsService({
    definitions,
    grants,
    store,
    now,
    allowSyntheticIds: true,
    pageSize: 1000,
  });
  // What exists is left alone: sent again (without tidspunkt, so dated now) a setting would be a
  // later repeat of its state, which privacy-api records as confirming it.
  for (const body of SAMPLE_SETTINGS) {
    if (await store.find(body.innbyggerFnr, body.definisjonGuid)) continue;
    const result = await settings.set({ actor }, body);
    if (result.instansEndret === 'endret') report.settings += 1;
  }
  const youthApp = createYouthAppConsent({ settings, store, allowSyntheticIds: true });
  // privacy-api creates the built-in definition at start; the dev stack seeds after that.
  const builtIn = await definitions.findDefinition(YOUTH_APP_DEFINITION_GUID);
  for (const pid of builtIn ? SAMPLE_YOUTH_APP_CONSENTS : []) {
    if ((await store.find(pid, YOUTH_APP_DEFINITION_GUID))?.aktiv) continue;
    await youthApp.give({ pid, clientId: undefined });
    report.youthAppConsents += 1;
  }

  for (const request of SAMPLE_INCLUSIONS) {
    const before = await inclusions.find(
      request.innbyggerFnr,
      request.personvernInnstillingDefinisjonId,
    );
    await setInclusion({ definitions, grants, inclusions }, actor, request, {
      allowSyntheticIds: true,
      now: now(),
    });
    const after = await inclusions.find(
      request.innbyggerFnr,
      request.personvernInnstillingDefinisjonId,
    );
    if (before?.history.length !== after?.history.length) report.inclusions += 1;
  }

  const parsed = parseRepresentationImport(await readFile(SAMPLE_REPRESENTATION_FILE, 'utf8'), {
    allowSyntheticIds: true,
  });
  if (!parsed.ok) {
    throw new Error(
      `sample representation file: ${parsed.errors.map((e) => `line ${e.line}: ${e.message}`).join('; ')}`,
    );
  }
  const changed = new Map(
    (
      await Promise.all(
        [...parsed.byFnr].map(async ([fnr, list]) =>
          sameJson(await representation.findRelationships(fnr), list) ? [] : [[fnr, list] as const],
        ),
      )
    ).flat(),
  );
  report.representationCallers = await representation.replaceRelationships(changed, {
    importId: 'sample-data',
    at: now(),
    actorId: ACTOR_ID,
  });

  await journal.idle();
  return report;
}
