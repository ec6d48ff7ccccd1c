import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import type { JWK } from 'jose';
import { LRUCache } from 'lru-cache';
import Provider, {
  errors,
  type Adapter,
  type AdapterPayload,
  type Configuration,
} from 'oidc-provider';
import { ensureDevKey, scopeName } from '@nhp/privacy-auth';
import type { Logger } from '@nhp/shared-logger';
import { clientsFilePath, DEV_ISSUER_PORT, readClients, type ClientRegistration } from './clients';

export const DEFAULT_AUDIENCE = 'nhn:helsenorge.eksternapi';
/** The algorithms privacy-api accepts for tokens and DPoP proofs. */
const ALGS = ['ES256', 'PS256', 'RS256'];

export interface DevIssuerOptions {
  /** Where `.data` is: the development key and `privacy-issuer/clients.json`. */
  dataDir: string;
  port?: number;
  host?: string;
  /** The issuer identifier; default http://localhost:<port> (what the development key names at 3004). */
  issuer?: string;
  /** `aud` of the tokens and the prefix of their scopes; default nhn:helsenorge.eksternapi. */
  audience?: string;
  /** Lifetime of an access token in seconds; default 300 (HelseID's). */
  accessTokenTtlSec?: number;
  logger?: Logger;
}

export interface DevIssuer {
  issuer: string;
  url: string;
  port: number;
  jwksUri: string;
  close(): Promise<void>;
}

/**
 * oidc-provider's storage: clients are read from the clients file on every lookup (a client
 * registered while the issuer runs can use it at once; oidc-provider caches a client by the hash
 * of its metadata), everything else (client assertion jtis above all, so that a replayed
 * private_key_jwt assertion is refused) in memory until it expires.
 */
function adapterFactory(clientsFile: string, audience: string) {
  const store = new LRUCache<string, AdapterPayload>({ max: 100_000, ttlAutopurge: false });
  return (model: string): Adapter => {
    const key = (id: string) => `${model}:${id}`;
    return {
      async find(id) {
        if (model === 'Client') {
          const { clients } = await readClients(clientsFile);
          const found = clients.find((c) => c.client_id === id);
          return found ? providerMetadata(found, audience) : undefined;
        }
        return store.get(key(id));
      },
      async upsert(id, payload, expiresIn) {
        store.set(key(id), payload, expiresIn ? { ttl: expiresIn * 1000 } : undefined);
      },
      async consume(id) {
        const payload = store.get(key(id));
        if (payload) payload.consumed = Math.floor(Date.now() / 1000);
      },
      async destroy(id) {
        store.delete(key(id));
      },
      async findByUid() {
        return undefined;
      },
      async findByUserCode() {
        return undefined;
      },
      async revokeByGrantId() {
        return undefined;
      },
    };
  };
}

/** A registration as oidc-provider's client metadata: client credentials with private_key_jwt only. */
function providerMetadata(c: ClientRegistration, audience: string): AdapterPayload {
  return {
    client_id: c.client_id,
    grant_types: ['client_credentials'],
    response_types: [],
    redirect_uris: [],
    token_endpoint_auth_method: 'private_key_jwt',
    id_token_signed_response_alg: 'ES256',
    jwks: c.jwks as AdapterPayload['jwks'],
    dpop_bound_access_tokens: c.dpop_bound_access_tokens,
    ...(c.scopes.length > 0
      ? { scope: c.scopes.map((kind) => scopeName(audience, kind)).join(' ') }
      : {}),
    ...(c.pid ? { nhp_pid: c.pid } : {}),
  };
}

export function devIssuerConfiguration(options: {
  clientsFile: string;
  audience: string;
  signingJwk: Record<string, unknown>;
  accessTokenTtlSec: number;
}): Configuration {
  const { audience } = options;
  return {
    adapter: adapterFactory(options.clientsFile, audience),
    jwks: { keys: [options.signingJwk as never] },
    extraClientMetadata: { properties: ['nhp_pid'] },
    // privacy-api's scopes; a client may ask only for those it was registered with.
    scopes: ['read', 'write', 'admin'].map((kind) => scopeName(audience, kind as 'read')),
    features: {
      devInteractions: { enabled: false },
      clientCredentials: { enabled: true },
      dPoP: { enabled: true },
      introspection: { enabled: false },
      revocation: { enabled: false },
      userinfo: { enabled: false },
      resourceIndicators: {
        enabled: true,
        // A client need not name the API: privacy-api is the only resource.
        defaultResource: () => audience,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource, client) => {
          if (resource !== audience) throw new errors.InvalidTarget();
          return {
            audience,
            scope: client.scope ?? '',
            accessTokenTTL: options.accessTokenTtlSec,
            accessTokenFormat: 'jwt',
            jwt: { sign: { alg: 'ES256' } },
          };
        },
      },
    },
    formats: {
      customizers: {
        // privacy-api's existing clients send scope as a JSON array (HelseID does), and a citizen's
        // token carries pid.
        jwt(ctx, _token, jwt) {
          const scope = jwt.payload['scope'];
          jwt.payload['scope'] = typeof scope === 'string' ? scope.split(' ').filter(Boolean) : [];
          // The development shortcut for citizen tokens: a client registered with a citizen's
          // identity number gets it as pid in every token. HelseID has real flows for this (the
          // citizen logs in); nothing here pretends to be one.
          const pid = (ctx.oidc.client as unknown as { nhp_pid?: unknown } | undefined)?.nhp_pid;
          if (typeof pid === 'string' && pid !== '') jwt.payload['pid'] = pid;
        },
      },
    },
    enabledJWA: {
      clientAuthSigningAlgValues: ALGS as never,
      dPoPSigningAlgValues: ALGS as never,
    },
    ttl: { ClientCredentials: options.accessTokenTtlSec },
  };
}

/**
 * The development OpenID provider (oidc-provider): discovery, JWKS, the client-credentials grant
 * with private_key_jwt client authentication and DPoP-bound JWT access tokens for privacy-api. It
 * signs with the development key (`.data/privacy-dev-key.json`), so the tokens of
 * `npm run privacy-token` and its own verify with the same JWKS. Never in production.
 */
export async function startDevIssuer(options: DevIssuerOptions): Promise<DevIssuer> {
  if (process.env['NODE_ENV'] === 'production') {
    throw new Error('the development issuer never runs in production');
  }
  const port = options.port ?? DEV_ISSUER_PORT;
  const host = options.host ?? '127.0.0.1';
  const audience = options.audience ?? DEFAULT_AUDIENCE;
  const devKey = await ensureDevKey(options.dataDir);
  const { privateJwk } = JSON.parse(await readFile(devKey.keyFile, 'utf8')) as { privateJwk: JWK };
  const signingJwk = { ...privateJwk, kid: devKey.kid, alg: 'ES256', use: 'sig' };

  const server: Server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  const actualPort = (server.address() as AddressInfo).port;
  const issuer = options.issuer ?? `http://localhost:${actualPort}`;
  const provider = new Provider(
    issuer,
    devIssuerConfiguration({
      clientsFile: clientsFilePath(options.dataDir),
      audience,
      signingJwk,
      accessTokenTtlSec: options.accessTokenTtlSec ?? 300,
    }),
  );
  const log = options.logger;
  provider.on('server_error', (_ctx, err) =>
    log?.error({ err }, 'development issuer: server error'),
  );
  provider.on('grant.error', (_ctx, err) =>
    log?.info({ reason: (err as Error).message }, 'development issuer: token request refused'),
  );
  provider.on('grant.success', (ctx) =>
    log?.info({ clientId: ctx.oidc.client?.clientId }, 'development issuer: token issued'),
  );
  server.on('request', provider.callback());
  return {
    issuer,
    url: issuer,
    port: actualPort,
    jwksUri: `${issuer}/jwks`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
