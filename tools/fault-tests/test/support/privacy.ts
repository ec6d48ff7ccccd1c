/**
 * privacy-api as a process for fault tests: trusting a test issuer (its JWKS in a temp file), a
 * party with a replicated consent definition created through the API, and the two calls the load
 * makes (set and status check).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { trustedIssuer, type TestIssuer } from '@nhp/privacy-testing';
import { startAppProcess, type AppProcess } from '@nhp/shared-testing';
import {
  call,
  expectStatus,
  LOG_LEVEL,
  type Answer,
  type Cleanup,
  type Infrastructure,
} from './fault';

export const SET_PATH = '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2';
export const STATUS_PATH = '/personverninnstillinger/sjekkinnbyggerspistatus/v2';
/** Template samtykke without a time limit. */
const SAMTYKKE_TEMPLATE = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01';

export { trustedIssuer };

export function startPrivacyApi(env: {
  mongoUri: string;
  natsUrl: string;
  issuerEnv: Record<string, string>;
}): Promise<AppProcess> {
  return startAppProcess({
    name: 'privacy-api',
    entry: 'apps/privacy-api/src/main.ts',
    portVariable: 'PRIVACY_API_PORT',
    env: {
      PRIVACY_API_HOST: '127.0.0.1',
      MONGO_URL: env.mongoUri,
      LOG_LEVEL: LOG_LEVEL,
      NATS_URL: env.natsUrl,
      ...env.issuerEnv,
    },
  });
}

/** One privacy-api on the infrastructure, trusting a test issuer, with a client of its own definition. */
export async function startPrivacyStack(cleanup: Cleanup, infrastructure: Infrastructure) {
  const issuer = cleanup.add(await trustedIssuer(), (i) => i.dispose());
  const app = cleanup.add(
    await startPrivacyApi({
      mongoUri: infrastructure.mongoUri,
      natsUrl: infrastructure.nats.url,
      issuerEnv: issuer.env,
    }),
    (a) => a.stop(),
  );
  return { issuer, app, privacy: await privacyClient(app, issuer.issuer) };
}

/**
 * Two privacy-api instances on the same infrastructure, as behind a load balancer: `doomed` (the
 * one a test kills) and `survivor`, each with a client of the same party and definition.
 */
export async function startTwoPrivacyInstances(cleanup: Cleanup, infrastructure: Infrastructure) {
  const issuer = cleanup.add(await trustedIssuer(), (i) => i.dispose());
  const env = {
    mongoUri: infrastructure.mongoUri,
    natsUrl: infrastructure.nats.url,
    issuerEnv: issuer.env,
  };
  const doomed = cleanup.add(await startPrivacyApi(env), (a) => a.stop());
  const survivor = cleanup.add(await startPrivacyApi(env), (a) => a.stop());
  const viaDoomed = await privacyClient(doomed, issuer.issuer);
  const viaSurvivor = await privacyClient(survivor, issuer.issuer, viaDoomed);
  return { issuer, env, doomed, survivor, viaDoomed, viaSurvivor };
}

export interface SetAnswer {
  returKode: string;
  instansEndret: 'endret' | 'ikkeEndret';
}

export interface StatusAnswer {
  innbyggerFnr: string;
  aktiv: boolean;
  sekvensnummer: number | null;
}

/** A client of one privacy-api with an admin token (admin implies read and write, no grant). */
export interface PrivacyClient {
  readonly partKode: string;
  readonly definisjonGuid: string;
  set(fnr: string, aktiv: boolean, timeoutMs?: number): Promise<Answer<SetAnswer>>;
  status(fnr: string, timeoutMs?: number): Promise<Answer<StatusAnswer>>;
}

/**
 * Creates a party and a consent definition with `replikering: true` through the API, and returns
 * a client for setting and checking citizens' settings of it. With `existing` (another client's
 * party and definition), nothing is created: a client of another instance of the same service.
 */
export async function privacyClient(
  app: AppProcess,
  issuer: TestIssuer,
  existing?: Pick<PrivacyClient, 'partKode' | 'definisjonGuid'>,
): Promise<PrivacyClient> {
  const token = await issuer.mint({
    clientId: 'fault-tests',
    scopes: ['admin'],
    expiresInSec: 3600,
  });
  const headers = { Authorization: `Bearer ${token}` };
  const partKode = existing?.partKode ?? `fault-${randomBytes(4).toString('hex')}`;
  const definisjonGuid = existing?.definisjonGuid ?? randomUUID();
  if (!existing) await createReplicatedDefinition(app, headers, partKode, definisjonGuid);
  return {
    partKode,
    definisjonGuid,
    set: (fnr, aktiv, timeoutMs) =>
      call<SetAnswer>(
        `${app.url}${SET_PATH}`,
        {
          headers,
          body: { innbyggerFnr: fnr, definisjonGuid, partKode, typePi: 'samtykke', aktiv },
        },
        timeoutMs,
      ),
    status: (fnr, timeoutMs) =>
      call<StatusAnswer>(
        `${app.url}${STATUS_PATH}`,
        { headers, body: { innbyggerFnr: fnr, definisjonGuid, partKode } },
        timeoutMs,
      ),
  };
}

async function createReplicatedDefinition(
  app: AppProcess,
  headers: Record<string, string>,
  partKode: string,
  definisjonGuid: string,
): Promise<void> {
  expectStatus(
    await call(`${app.url}/part/v1`, { headers, body: { partKode, navn: 'Feiltest' } }),
    201,
    'POST /part/v1',
  );
  expectStatus(
    await call(`${app.url}/innstillingdefinisjon/v1`, {
      headers,
      body: {
        definisjonMalGuid: SAMTYKKE_TEMPLATE,
        definisjonGuid,
        partKode,
        navn: 'Feiltest-samtykke',
        replikering: true,
      },
    }),
    201,
    'POST /innstillingdefinisjon/v1',
  );
}
