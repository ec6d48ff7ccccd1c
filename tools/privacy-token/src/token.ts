import { createHash, randomUUID } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { parseArgs } from 'node:util';
import {
  base64url,
  calculateJwkThumbprint,
  exportJWK,
  generateKeyPair,
  importJWK,
  SignJWT,
  type CryptoKey,
  type JWK,
} from 'jose';
import { scopeName, type DevKey, type ScopeKind } from '@nhp/privacy-auth';
import { isValidFnr } from '@nhp/privacy-domain';

export const USAGE = `Usage: npm run privacy-token -- [options]

Mints a development access token for privacy-api, signed with the development key that
\`npm start\` keeps in .data/ (created here when missing). privacy-api trusts that key only outside
production and only while PRIVACY_AUTH_ISSUER / PRIVACY_AUTH_JWKS_* are unset.

Token:
  --scope LIST        comma-separated: read, write, admin (default: none). Each becomes
                      <audience>/personverninnstilling_<kind>; a full scope name passes as it is.
  --client ID         the client_id claim (default: dev-client)
  --pid FNR           a citizen's token: the pid claim (a valid 11-digit identity number)
  --expires-in SEC    lifetime in seconds, 1-86400 (default: 3600)
  --audience AUD      aud and scope prefix (default: PRIVACY_AUTH_AUDIENCE or nhn:helsenorge.eksternapi)
  --scope-string      the scope claim as a space-separated string instead of a JSON array

DPoP (RFC 9449):
  --dpop              bind the token to a DPoP key (cnf.jkt) and print a proof after it
  --method METHOD     the proof's HTTP method (required with --dpop)
  --url URL           the proof's absolute URL (required with --dpop); query and fragment do not count
  --dpop-key FILE     keep the DPoP key in FILE (created when missing) to make more proofs later;
                      default: a new key each run
  --token TOKEN       with --dpop and --dpop-key: only make a new proof for this existing token

Output:
  (default)           the token on one line; with --dpop a second line with the proof
  --json              {"accessToken", "dpopProof"?, "expiresAt", "scopes", ...}
  --init              only create the development key (if missing) and say where it is
  -h, --help          this text

Examples:
  TOKEN=$(npm run -s privacy-token -- --scope admin --client my-system)
  curl -H "Authorization: Bearer $TOKEN" ...
  npm run -s privacy-token -- --dpop --dpop-key .data/my-dpop-key.json --scope read \\
    --method GET --url 'http://localhost:3001/personverninnstillinger/hentinnbyggereaktivepifordefinisjon/v2'`;

export const DEFAULT_AUDIENCE = 'nhn:helsenorge.eksternapi';
const KINDS: readonly ScopeKind[] = ['read', 'write', 'admin'];
const METHOD = /^[A-Z]+$/;

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

export interface TokenRequest {
  scopes: string[];
  clientId: string;
  pid?: string;
  expiresInSec: number;
  audience: string;
  scopeAsString: boolean;
  dpop?: { method: string; url: string; keyFile?: string; existingToken?: string };
  json: boolean;
}

export type Cli =
  { kind: 'help' } | { kind: 'init'; json: boolean } | ({ kind: 'mint' } & TokenRequest);

/** Reads the command line; throws UsageError with a sentence a person can act on. */
export function parseCli(argv: string[], env: NodeJS.ProcessEnv = process.env): Cli {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: false,
      strict: true,
      options: {
        scope: { type: 'string' },
        client: { type: 'string' },
        pid: { type: 'string' },
        'expires-in': { type: 'string' },
        audience: { type: 'string' },
        'scope-string': { type: 'boolean' },
        dpop: { type: 'boolean' },
        method: { type: 'string' },
        url: { type: 'string' },
        'dpop-key': { type: 'string' },
        token: { type: 'string' },
        json: { type: 'boolean' },
        init: { type: 'boolean' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) return { kind: 'help' };
  if (v.init) return { kind: 'init', json: v.json ?? false };

  const audience = v.audience ?? env['PRIVACY_AUTH_AUDIENCE'] ?? DEFAULT_AUDIENCE;
  if (audience.trim() === '' || /\s/.test(audience)) {
    throw new UsageError('--audience must be a non-empty value without spaces');
  }
  const scopes = (v.scope ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((s) => {
      if ((KINDS as readonly string[]).includes(s)) return scopeName(audience, s as ScopeKind);
      if (s.includes('/') && !/\s/.test(s)) return s;
      throw new UsageError(
        `--scope: unknown scope "${s}" (use read, write, admin or a full scope name)`,
      );
    });

  const clientId = v.client ?? 'dev-client';
  if (!/^[\x21-\x7e]{1,128}$/.test(clientId)) {
    throw new UsageError('--client must be 1-128 visible ASCII characters');
  }
  if (v.pid !== undefined && !isValidFnr(v.pid, { allowSynthetic: true })) {
    throw new UsageError('--pid must be a valid 11-digit identity number (check digits included)');
  }
  const expiresText = v['expires-in'] ?? '3600';
  const expiresInSec = Number(expiresText);
  if (!/^\d+$/.test(expiresText) || expiresInSec < 1 || expiresInSec > 86_400) {
    throw new UsageError('--expires-in must be a whole number of seconds, 1-86400');
  }

  let dpop: TokenRequest['dpop'];
  const dpopOnly = ['method', 'url', 'dpop-key', 'token'] as const;
  if (!v.dpop) {
    const stray = dpopOnly.find((name) => v[name] !== undefined);
    if (stray) throw new UsageError(`--${stray} needs --dpop`);
  } else {
    if (!v.method || !METHOD.test(v.method)) {
      throw new UsageError('--dpop needs --method, an HTTP method in capitals (GET, POST, ...)');
    }
    if (!v.url || !/^https?:\/\/[^\s]+$/.test(v.url) || !URL.canParse(v.url)) {
      throw new UsageError('--dpop needs --url, an absolute http(s) URL');
    }
    if (v.token !== undefined && v['dpop-key'] === undefined) {
      throw new UsageError(
        '--token needs --dpop-key: a proof must be signed by the key the token is bound to',
      );
    }
    dpop = { method: v.method, url: v.url, keyFile: v['dpop-key'], existingToken: v.token };
  }

  return {
    kind: 'mint',
    scopes,
    clientId,
    pid: v.pid,
    expiresInSec,
    audience,
    scopeAsString: v['scope-string'] ?? false,
    dpop,
    json: v.json ?? false,
  };
}

interface DpopKeyPair {
  privateKey: CryptoKey;
  publicJwk: JWK;
  jkt: string;
}

async function fromPrivateJwk(privateJwk: JWK): Promise<DpopKeyPair> {
  const { d: _d, ...publicJwk } = privateJwk;
  return {
    privateKey: (await importJWK(privateJwk, 'ES256')) as CryptoKey,
    publicJwk,
    jkt: await calculateJwkThumbprint(publicJwk, 'sha256'),
  };
}

/** The DPoP key in `file`, or a new one (written there when a file is named). */
async function dpopKey(file: string | undefined): Promise<DpopKeyPair> {
  if (file) {
    try {
      return await fromPrivateJwk(JSON.parse(await readFile(file, 'utf8')) as JWK);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw new UsageError(`--dpop-key ${file} is not a DPoP key file written by this tool`);
      }
    }
  }
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  if (file) {
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, `${JSON.stringify(privateJwk, null, 2)}\n`, { mode: 0o600 });
  }
  return fromPrivateJwk(privateJwk);
}

export interface Minted {
  accessToken: string;
  dpopProof?: string;
  tokenType: 'Bearer' | 'DPoP';
  expiresAt?: string;
  scopes?: string[];
  clientId?: string;
  citizen?: boolean;
  issuer: string;
  audience: string;
  jkt?: string;
}

export async function mint(
  request: TokenRequest,
  devKey: DevKey,
  nowMs = Date.now(),
): Promise<Minted> {
  const iat = Math.floor(nowMs / 1000);
  const key = request.dpop ? await dpopKey(request.dpop.keyFile) : undefined;
  let accessToken = request.dpop?.existingToken;
  let exp: number | undefined;
  if (accessToken === undefined) {
    exp = iat + request.expiresInSec;
    const claims: Record<string, unknown> = {
      client_id: request.clientId,
      scope: request.scopeAsString ? request.scopes.join(' ') : request.scopes,
      jti: randomUUID(),
    };
    if (request.pid !== undefined) claims['pid'] = request.pid;
    if (key) claims['cnf'] = { jkt: key.jkt };
    accessToken = await new SignJWT(claims)
      .setProtectedHeader({ alg: devKey.alg, kid: devKey.kid, typ: 'at+jwt' })
      .setIssuer(devKey.issuer)
      .setAudience(request.audience)
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .sign(devKey.privateKey);
  }
  const minted: Minted = {
    accessToken,
    tokenType: key ? 'DPoP' : 'Bearer',
    issuer: devKey.issuer,
    audience: request.audience,
  };
  if (exp !== undefined) {
    Object.assign(minted, {
      expiresAt: new Date(exp * 1000).toISOString(),
      scopes: request.scopes,
      clientId: request.clientId,
      citizen: request.pid !== undefined,
    });
  }
  if (key && request.dpop) {
    minted.jkt = key.jkt;
    minted.dpopProof = await new SignJWT({
      jti: randomUUID(),
      htm: request.dpop.method,
      htu: request.dpop.url,
      iat,
      ath: base64url.encode(createHash('sha256').update(accessToken, 'ascii').digest()),
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk })
      .sign(key.privateKey);
  }
  return minted;
}
