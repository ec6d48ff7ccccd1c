import * as oidc from 'openid-client';
import { importJWK, type CryptoKey, type JWK } from 'jose';
import { PRIVACY_CLIENT_CODES, PrivacyApiError } from './errors';

export const DEFAULT_AUDIENCE = 'nhn:helsenorge.eksternapi';
export type ScopeKind = 'read' | 'write' | 'admin';

/** Client credentials with private_key_jwt, and a DPoP key pair the tokens are bound to. */
export interface ClientCredentialsAuth {
  /** The issuer (HelseID, or the development issuer, http://localhost:3004); discovery is read from it. */
  issuer: string;
  clientId: string;
  /** The client's private key as a JWK (ES256, PS256 or RS256; `alg` and `kid` as registered). */
  privateKey: JWK;
  /** Scopes to ask for: kinds (`read`) become `<audience>/personverninnstilling_read`. Default read. */
  scopes?: readonly string[];
  /** The API's audience (scope prefix). Default nhn:helsenorge.eksternapi. */
  audience?: string;
  /** Extra token request parameters (the development issuer's `pid` shortcut, HelseID's `resource`). */
  tokenParameters?: Record<string, string>;
  /**
   * The DPoP key pair; default a new ES256 pair per client instance. `false`: Bearer tokens (only
   * where the issuer allows it).
   */
  dpopKeyPair?: oidc.CryptoKeyPair | false;
  /** Renew this long before expiry. Default 30 s. */
  refreshMarginSec?: number;
}

/** A token the caller manages (sent as Bearer), e.g. PRIVACY_CLIENT_TOKEN or a gateway's. */
export interface TokenFunctionAuth {
  /** Called before each request; cache as you see fit. */
  accessToken: () => Promise<string> | string;
}

export type PrivacyClientAuth = ClientCredentialsAuth | TokenFunctionAuth;

export interface AuthorizedFetch {
  /** One request with the current token (and a fresh DPoP proof); the Response whatever its status. */
  request(url: URL, method: string, body: string | undefined, headers: Headers): Promise<Response>;
  /** Drop the cached token (after a 401 that says it expired). */
  invalidate(): void;
}

const isLoopback = (url: URL) => ['localhost', '127.0.0.1', '[::1]'].includes(url.hostname);

function scopeList(auth: ClientCredentialsAuth): string {
  const audience = auth.audience ?? DEFAULT_AUDIENCE;
  return (auth.scopes ?? ['read'])
    .map((s) =>
      ['read', 'write', 'admin'].includes(s) ? `${audience}/personverninnstilling_${s}` : s,
    )
    .join(' ');
}

function tokenError(message: string, cause: unknown): PrivacyApiError {
  const detail =
    cause instanceof oidc.ResponseBodyError
      ? `${cause.error}${cause.error_description ? `: ${cause.error_description}` : ''}`
      : cause instanceof Error
        ? cause.message
        : String(cause);
  return new PrivacyApiError({
    code: PRIVACY_CLIENT_CODES.token,
    errorCategory: 'ConfigError',
    message: `${message}: ${detail}`,
    httpStatus: undefined,
    operation: 'token',
    cause,
  });
}

/**
 * Tokens by the client-credentials grant (openid-client: discovery, private_key_jwt, DPoP with
 * DPoP-Nonce handled at the token endpoint and at privacy-api), cached until `refreshMarginSec`
 * before expiry; one token request at a time however many calls wait for it.
 */
export function clientCredentialsFetch(
  auth: ClientCredentialsAuth,
  options: { fetch?: typeof fetch; allowInsecureRequests?: boolean; timeoutSec?: number },
): AuthorizedFetch {
  const issuerUrl = new URL(auth.issuer);
  const insecure =
    options.allowInsecureRequests ?? (issuerUrl.protocol === 'http:' && isLoopback(issuerUrl));
  let config: Promise<oidc.Configuration> | undefined;
  let dpop: oidc.DPoPHandle | undefined;
  let cached: { token: string; renewAt: number } | undefined;
  let pending: Promise<string> | undefined;

  async function configuration(): Promise<oidc.Configuration> {
    config ??= (async () => {
      const key = (await importJWK(auth.privateKey, auth.privateKey.alg ?? 'ES256')) as CryptoKey;
      const c = await oidc.discovery(
        issuerUrl,
        auth.clientId,
        undefined,
        oidc.PrivateKeyJwt({ key, kid: auth.privateKey.kid }),
        {
          execute: insecure ? [oidc.allowInsecureRequests] : [],
          ...(options.timeoutSec ? { timeout: options.timeoutSec } : {}),
          ...(options.fetch ? { [oidc.customFetch]: options.fetch } : {}),
        },
      );
      if (auth.dpopKeyPair !== false) {
        dpop = oidc.getDPoPHandle(c, auth.dpopKeyPair ?? (await oidc.randomDPoPKeyPair('ES256')));
      }
      return c;
    })().catch((err: unknown) => {
      config = undefined;
      throw tokenError(`discovery of ${auth.issuer} failed`, err);
    });
    return config;
  }

  const scopes = scopeList(auth);

  async function token(): Promise<string> {
    if (cached && Date.now() < cached.renewAt) return cached.token;
    pending ??= (async () => {
      try {
        const c = await configuration();
        let response: oidc.TokenEndpointResponse;
        try {
          response = await oidc.clientCredentialsGrant(
            c,
            { ...(scopes ? { scope: scopes } : {}), ...auth.tokenParameters },
            dpop ? { DPoP: dpop } : undefined,
          );
        } catch (err) {
          throw tokenError('the token request failed', err);
        }
        const lifetime = response.expires_in ?? 60;
        const margin = Math.min(auth.refreshMarginSec ?? 30, lifetime / 2);
        cached = { token: response.access_token, renewAt: Date.now() + (lifetime - margin) * 1000 };
        return response.access_token;
      } finally {
        pending = undefined;
      }
    })();
    return pending;
  }

  return {
    async request(url, method, body, headers) {
      const accessToken = await token();
      const c = await configuration();
      try {
        return await oidc.fetchProtectedResource(c, accessToken, url, method, body, headers, {
          DPoP: dpop,
        });
      } catch (err) {
        // privacy-api's refusals carry a WWW-Authenticate challenge: the response is the answer.
        if (err instanceof oidc.WWWAuthenticateChallengeError) return err.response;
        throw err;
      }
    },
    invalidate() {
      cached = undefined;
    },
  };
}

/** A caller's own token, sent as Bearer. */
export function tokenFunctionFetch(
  auth: TokenFunctionAuth,
  doFetch: typeof fetch,
): AuthorizedFetch {
  return {
    async request(url, method, body, headers) {
      let accessToken: string;
      try {
        accessToken = await auth.accessToken();
      } catch (err) {
        throw tokenError('the token function failed', err);
      }
      headers.set('authorization', `Bearer ${accessToken}`);
      return doFetch(url, { method, body, headers });
    },
    invalidate() {
      // Nothing cached here: the caller's function owns its token.
    },
  };
}
