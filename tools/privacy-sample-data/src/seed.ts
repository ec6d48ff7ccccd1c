import { readFile } from 'node:fs/promises';
import type { Caller } from '@nhp/privacy-contracts';
import {
  createPrivacyRepositories,
  type AuditContext,
  type Journal,
} from '@nhp/privacy-data-access';
import {
  auditOf,
  createGrantUseCases,
  createPrivacyUseCases,
  parseRepresentationImport,
  YOUTH_APP_DEFINITION_GUID,
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
/** The seed as an operator: its administrative writes are audited as admin. */
const operator: Caller = { clientId: undefined, isAdmin: true, operator: ACTOR_ID };
const audit: AuditContext = auditOf(operator);
/** The seed as a system with admin rights: the settings it makes name it as their client. */
const caller: Caller = { clientId: ACTOR_ID, isAdmin: true };

/**
 * Seeds the development data. Idempotent: what exists and is equal is left alone (no write, no
 * audit record), so the dev stack runs it at every start. Development only: the caller refuses
 * production.
 */
export async function seedPrivacySampleData(deps: SeedDeps): Promise<SeedReport> {
  const { connection, journal } = deps;
  const now = deps.now ?? (() => new Date());
  const repositories = createPrivacyRepositories({ connection, journal, now, cacheTtlMs: 0 });
  const { parts, definitions, grants, inclusions, settings: store } = repositories;
  const useCases = createPrivacyUseCases({
    ...repositories,
    now,
    allowSyntheticIds: true,
    pageSize: 1000,
  });

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

  const grantUseCases = createGrantUseCases({ parts, grants });
  const current = (await grantUseCases.list(operator, { clientId: SAMPLE_CLIENT_ID })).find(
    (g) => g.partKode === SAMPLE_PART.partKode,
  );
  if (!current?.read || !current.write) {
    await grantUseCases.grant(operator, {
      clientId: SAMPLE_CLIENT_ID,
      partKode: SAMPLE_PART.partKode,
      read: true,
      write: true,
    });
    report.grant = true;
  }

  // What exists is left alone: sent again (without tidspunkt, so dated now) a setting would be a
  // later repeat of its state, which privacy-api records as confirming it.
  for (const body of SAMPLE_SETTINGS) {
    if (await store.find(body.innbyggerFnr, body.definisjonGuid)) continue;
    const result = await useCases.settings.set(caller, body);
    if (result.instansEndret === 'endret') report.settings += 1;
  }
  // privacy-api creates the built-in definition at start; the dev stack seeds after that.
  const builtIn = await definitions.findDefinition(YOUTH_APP_DEFINITION_GUID);
  for (const pid of builtIn ? SAMPLE_YOUTH_APP_CONSENTS : []) {
    if ((await store.find(pid, YOUTH_APP_DEFINITION_GUID))?.aktiv) continue;
    await useCases.youthApp.give({ clientId: undefined, isAdmin: false, pid });
    report.youthAppConsents += 1;
  }

  for (const request of SAMPLE_INCLUSIONS) {
    const before = await inclusions.find(
      request.innbyggerFnr,
      request.personvernInnstillingDefinisjonId,
    );
    await useCases.inclusions.set(caller, request);
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
  const imported = await useCases.representation.importRelationships(
    caller,
    parsed.byFnr,
    'sample-data',
  );
  report.representationCallers = imported.replaced;

  await journal.idle();
  return report;
}
