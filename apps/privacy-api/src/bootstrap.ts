import type { AuditContext } from '@nhp/privacy-data-access';
import {
  BUILT_IN_PART,
  findTemplate,
  YOUTH_APP_DEFINITION_GUID,
  YOUTH_APP_TEMPLATE_GUID,
} from '@nhp/privacy-domain';
import type { PrivacyContext } from './context';
import { definitionFromTemplate } from './definitions/definition-use-cases';

const SYSTEM: AuditContext = { actor: { kind: 'admin', id: 'privacy-api (built-in data)' } };

/**
 * Creates the built-in party `helsenorge` and the youth-app consent definition unless they exist.
 * Idempotent, safe to run on every start and by several replicas at once (upserts); an existing
 * one is left exactly as it is, so an administrator's later change survives restarts.
 */
export async function ensureBuiltIns(context: PrivacyContext): Promise<void> {
  await context.parts.ensure({ ...BUILT_IN_PART }, SYSTEM);
  const template = findTemplate(YOUTH_APP_TEMPLATE_GUID);
  if (!template) throw new Error(`youth-app template ${YOUTH_APP_TEMPLATE_GUID} is missing`);
  await context.definitions.ensure(
    definitionFromTemplate(template, {
      definisjonGuid: YOUTH_APP_DEFINITION_GUID,
      partKode: BUILT_IN_PART.partKode,
      navn: 'Samtykke til bruk av ungdomsappen',
      beskrivelse: 'Innbyggerens samtykke til å bruke ungdomsappen',
    }),
    SYSTEM,
  );
}
