import type { AuditContext } from '../audit/audit';
import type { Part } from '../parts/part-use-cases';
import {
  BUILT_IN_PART,
  findTemplate,
  YOUTH_APP_DEFINITION_GUID,
  YOUTH_APP_TEMPLATE_GUID,
} from '../templates';
import type { Definition } from '../types';
import { definitionFromTemplate } from './definition-from-template';

/** Storage that creates a party or definition unless it exists (leaving an existing one alone). */
export interface BuiltInPorts {
  parts: { ensure(part: Part, audit: AuditContext): Promise<boolean> };
  definitions: { ensure(definition: Definition, audit: AuditContext): Promise<boolean> };
}

const SYSTEM: AuditContext = { actor: { kind: 'admin', id: 'privacy-api (built-in data)' } };

/**
 * Creates the built-in party `helsenorge` and the youth-app consent definition unless they exist.
 * Idempotent, safe to run on every start and by several replicas at once (upserts); an existing
 * one is left exactly as it is, so an administrator's later change survives restarts.
 */
export async function ensureBuiltIns(ports: BuiltInPorts): Promise<void> {
  await ports.parts.ensure({ ...BUILT_IN_PART }, SYSTEM);
  const template = findTemplate(YOUTH_APP_TEMPLATE_GUID);
  if (!template) throw new Error(`youth-app template ${YOUTH_APP_TEMPLATE_GUID} is missing`);
  await ports.definitions.ensure(
    definitionFromTemplate(template, {
      definisjonGuid: YOUTH_APP_DEFINITION_GUID,
      partKode: BUILT_IN_PART.partKode,
      navn: 'Samtykke til bruk av ungdomsappen',
      beskrivelse: 'Innbyggerens samtykke til å bruke ungdomsappen',
    }),
    SYSTEM,
  );
}
