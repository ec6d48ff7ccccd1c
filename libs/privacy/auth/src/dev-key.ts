import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import {
  exportJWK,
  generateKeyPair,
  importJWK,
  type CryptoKey,
  type JSONWebKeySet,
  type JWK,
} from 'jose';

/**
 * The development signing key: outside production, with no identity provider configured,
 * privacy-api trusts this key and `npm run privacy-token` signs with it. `npm start` creates it in
 * the ignored data folder (.data/): the private key in privacy-dev-key.json (mode 0600), the public
 * key set in privacy-dev-jwks.json, which is what PRIVACY_AUTH_JWKS_FILE points at.
 */
/**
 * The development issuer: the URL `npm start` runs the development OpenID provider on
 * (tools/privacy-dev-issuer), which signs with this same key, so that privacy-api trusts both its
 * tokens (through its JWKS URL) and `npm run privacy-token`'s.
 */
export const DEV_ISSUER = 'http://localhost:3004';
export const DEV_KEY_FILE = 'privacy-dev-key.json';
export const DEV_JWKS_FILE = 'privacy-dev-jwks.json';
const DEV_ALG = 'ES256';

export interface DevKey {
  issuer: string;
  kid: string;
  alg: typeof DEV_ALG;
  privateKey: CryptoKey;
  jwks: JSONWebKeySet;
  keyFile: string;
  jwksFile: string;
}

interface DevKeyFile {
  issuer: string;
  kid: string;
  alg: typeof DEV_ALG;
  privateJwk: JWK;
}

/** The default data folder: DEV_DATA_DIR or .data in the working directory (the repository root for npm scripts). */
export function defaultDevDataDir(env: NodeJS.ProcessEnv = process.env): string {
  return resolve(env['DEV_DATA_DIR'] ?? '.data');
}

function publicJwkOf(privateJwk: JWK): JWK {
  // The private members of an EC key; what remains is the public key.
  const { d: _d, ...publicJwk } = privateJwk;
  return publicJwk;
}

async function readKeyFile(keyFile: string): Promise<DevKeyFile | undefined> {
  let text: string;
  try {
    text = await readFile(keyFile, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<DevKeyFile>;
  if (
    typeof parsed.kid !== 'string' ||
    parsed.alg !== DEV_ALG ||
    typeof parsed.privateJwk !== 'object' ||
    typeof parsed.issuer !== 'string'
  ) {
    throw new Error(`${keyFile} is not a development key file; delete it to have a new one made`);
  }
  return parsed as DevKeyFile;
}

async function toDevKey(file: DevKeyFile, keyFile: string, jwksFile: string): Promise<DevKey> {
  const privateKey = (await importJWK(file.privateJwk, DEV_ALG)) as CryptoKey;
  const jwks: JSONWebKeySet = {
    keys: [{ ...publicJwkOf(file.privateJwk), kid: file.kid, alg: DEV_ALG, use: 'sig' }],
  };
  // DEV_ISSUER, not the file's: key files made before the development issuer named another URL.
  return { issuer: DEV_ISSUER, kid: file.kid, alg: DEV_ALG, privateKey, jwks, keyFile, jwksFile };
}

/** The development key in `dataDir`; an error that says how to make one when there is none. */
export async function loadDevKey(dir: string = defaultDevDataDir()): Promise<DevKey> {
  const dataDir = resolve(dir);
  const keyFile = join(dataDir, DEV_KEY_FILE);
  const file = await readKeyFile(keyFile);
  if (!file) {
    throw new Error(
      `No development key at ${keyFile}: run \`npm start\` once (or \`npm run privacy-token -- --init\`) to create it`,
    );
  }
  return toDevKey(file, keyFile, join(dataDir, DEV_JWKS_FILE));
}

/**
 * The development key in `dataDir`, created when missing. The private key file is created
 * exclusively (a concurrent creator's key wins, never a mix); the JWKS file is rewritten from it
 * each time through a rename, so a reader never sees half a file.
 */
export async function ensureDevKey(dir: string = defaultDevDataDir()): Promise<DevKey> {
  const dataDir = resolve(dir);
  await mkdir(dataDir, { recursive: true });
  const keyFile = join(dataDir, DEV_KEY_FILE);
  const jwksFile = join(dataDir, DEV_JWKS_FILE);
  let file = await readKeyFile(keyFile);
  if (!file) {
    const { privateKey } = await generateKeyPair(DEV_ALG, { extractable: true });
    const created: DevKeyFile = {
      issuer: DEV_ISSUER,
      kid: `dev-${randomUUID()}`,
      alg: DEV_ALG,
      privateJwk: await exportJWK(privateKey),
    };
    try {
      await writeFile(keyFile, `${JSON.stringify(created, null, 2)}\n`, {
        flag: 'wx',
        mode: 0o600,
      });
      file = created;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      file = await readKeyFile(keyFile);
      if (!file) throw err;
    }
  }
  const devKey = await toDevKey(file, keyFile, jwksFile);
  const tmp = `${jwksFile}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify(devKey.jwks, null, 2)}\n`);
  await rename(tmp, jwksFile);
  return devKey;
}
