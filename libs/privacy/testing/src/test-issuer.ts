import { createHash, randomUUID } from 'node:crypto';
import {
  base64url,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  SignJWT,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
} from 'jose';

/**
 * A token issuer for tests: a real key pair, real signatures, the same claims the national
 * identity provider puts in privacy-api's access tokens (`iss`, `aud`, `client_id`, `scope`,
 * `pid`, `cnf.jkt`). This lib deliberately does not import @nhp/privacy-auth (whose own tests use
 * it), so the few shapes it shares with it are declared structurally here.
 */

export const DEFAULT_TEST_AUDIENCE = 'nhn:helsenorge.eksternapi';
export const DEFAULT_TEST_ISSUER = 'https://issuer.test.invalid';

/** The access kinds of privacy-api's scopes (`<audience>/personverninnstilling_<kind>`). */
export type TestScopeKind = 'read' | 'write' | 'admin';

export type SigningAlg = 'ES256' | 'RS256' | 'PS256';

/** A DPoP key pair: the private key signs proofs, the public JWK travels in their header. */
export interface DpopKey {
  privateKey: CryptoKey;
  publicJwk: JWK;
  /** RFC 7638 thumbprint of the public key: what a bound token carries as `cnf.jkt`. */
  jkt: string;
  alg: SigningAlg;
}

export interface MintOptions {
  /** `client_id`; default `test-client`. Pass null to leave the claim out. */
  clientId?: string | null;
  /** Kinds (`read`) are expanded to `<audience>/personverninnstilling_read`; full scopes pass as they are. */
  scopes?: readonly string[];
  /** Space-separated string instead of the JSON array. */
  scopeAsString?: boolean;
  /** Citizen context: the `pid` claim. */
  pid?: string;
  /** Seconds from `iat` to `exp`; default 300. Negative for an already expired token. */
  expiresInSec?: number;
  /** `iat` in seconds; default now. */
  iat?: number;
  /** `aud`; default the issuer's audience. */
  audience?: string | string[];
  /** `iss`; default the issuer's. */
  issuer?: string;
  /** Bind the token to this key (`cnf.jkt`). */
  dpopKey?: DpopKey;
  /** Header `typ`; default `at+jwt`. Pass null to leave it out. */
  typ?: string | null;
  /** Header `kid`; default the issuer's key id. */
  kid?: string;
  /** Further claims (they win over the ones above). */
  extra?: Record<string, unknown>;
}

export interface DpopProofOptions {
  key: DpopKey;
  method: string;
  url: string;
  /** The access token the proof accompanies: sets `ath`. */
  accessToken?: string;
  /** Seconds; default now. */
  iat?: number;
  /** Default a fresh UUID. */
  jti?: string;
  /** Header `typ`; default `dpop+jwt`. */
  typ?: string;
  /** Claims that replace or add to the computed ones (e.g. a wrong `ath`). */
  extra?: Record<string, unknown>;
}

/** What @nhp/privacy-auth's createPrivacyAuth needs to trust this issuer (structurally typed). */
export interface TestAuthOptions {
  issuer: string;
  audience: string;
  jwks: { keys: JSONWebKeySet };
}

export interface TestIssuer {
  issuer: string;
  audience: string;
  kid: string;
  alg: SigningAlg;
  /** The public keys, as an identity provider publishes them. */
  jwks: JSONWebKeySet;
  mint(options?: MintOptions): Promise<string>;
  /** `Bearer <minted token>`, ready for an Authorization header. */
  bearer(options?: MintOptions): Promise<string>;
  dpopProof(options: DpopProofOptions): Promise<string>;
  newDpopKey(alg?: SigningAlg): Promise<DpopKey>;
  /** Options for createPrivacyAuth that trust this issuer (spread them to add a clock or a logger). */
  authOptions(): TestAuthOptions;
  /** `<audience>/personverninnstilling_<kind>`. */
  scope(kind: TestScopeKind): string;
}

export interface CreateTestIssuerOptions {
  issuer?: string;
  audience?: string;
  alg?: SigningAlg;
  /** Default a random one. Give two issuers the same kid to get a "wrongly signed" token. */
  kid?: string;
}

const nowSec = () => Math.floor(Date.now() / 1000);

/** base64url(SHA-256(token)): a DPoP proof's `ath`. */
export function accessTokenHash(token: string): string {
  return base64url.encode(createHash('sha256').update(token, 'ascii').digest());
}

export async function newDpopKey(alg: SigningAlg = 'ES256'): Promise<DpopKey> {
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const publicJwk = await exportJWK(publicKey);
  return { privateKey, publicJwk, jkt: await calculateJwkThumbprint(publicJwk, 'sha256'), alg };
}

export async function dpopProof(options: DpopProofOptions): Promise<string> {
  const claims: Record<string, unknown> = {
    jti: options.jti ?? randomUUID(),
    htm: options.method,
    htu: options.url,
    iat: options.iat ?? nowSec(),
    ...(options.accessToken === undefined ? {} : { ath: accessTokenHash(options.accessToken) }),
    ...options.extra,
  };
  return new SignJWT(claims)
    .setProtectedHeader({
      alg: options.key.alg,
      typ: options.typ ?? 'dpop+jwt',
      jwk: options.key.publicJwk,
    })
    .sign(options.key.privateKey);
}

export async function createTestIssuer(options: CreateTestIssuerOptions = {}): Promise<TestIssuer> {
  const issuer = options.issuer ?? DEFAULT_TEST_ISSUER;
  const audience = options.audience ?? DEFAULT_TEST_AUDIENCE;
  const alg = options.alg ?? 'ES256';
  const kid = options.kid ?? randomUUID();
  const { privateKey, publicKey } = await generateKeyPair(alg);
  const jwks: JSONWebKeySet = {
    keys: [{ ...(await exportJWK(publicKey)), kid, alg, use: 'sig' }],
  };
  const scope = (kind: TestScopeKind) => `${audience}/personverninnstilling_${kind}`;
  const expand = (s: string) => (s === 'read' || s === 'write' || s === 'admin' ? scope(s) : s);

  const issuerApi: TestIssuer = {
    issuer,
    audience,
    kid,
    alg,
    jwks,
    scope,
    newDpopKey,
    dpopProof,
    authOptions: () => ({ issuer, audience, jwks: { keys: jwks } }),
    async mint(o: MintOptions = {}): Promise<string> {
      const iat = o.iat ?? nowSec();
      const scopes = (o.scopes ?? []).map(expand);
      const claims: Record<string, unknown> = {
        iss: o.issuer ?? issuer,
        aud: o.audience ?? audience,
        iat,
        exp: iat + (o.expiresInSec ?? 300),
        jti: randomUUID(),
        scope: o.scopeAsString ? scopes.join(' ') : scopes,
      };
      if (o.clientId !== null) claims['client_id'] = o.clientId ?? 'test-client';
      if (o.pid !== undefined) claims['pid'] = o.pid;
      if (o.dpopKey) claims['cnf'] = { jkt: o.dpopKey.jkt };
      Object.assign(claims, o.extra);
      const header: { alg: string; kid: string; typ?: string } = { alg, kid: o.kid ?? kid };
      if (o.typ !== null) header.typ = o.typ ?? 'at+jwt';
      return new SignJWT(claims).setProtectedHeader(header).sign(privateKey);
    },
    bearer: async (o?: MintOptions) => `Bearer ${await issuerApi.mint(o)}`,
  };
  return issuerApi;
}
