import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { isValidFnr } from '@nhp/privacy-domain';
import { exportJWK, generateKeyPair, calculateJwkThumbprint, type JWK } from 'jose';

/** Where `npm start` runs the development issuer: http://localhost:3004, the development key's issuer. */
export const DEV_ISSUER_PORT = 3004;

/** The folder under the data folder (`.data/`) where the development issuer keeps its clients. */
export const ISSUER_DIR = 'privacy-issuer';
export const CLIENTS_FILE = 'clients.json';

export const SCOPE_KINDS = ['read', 'write', 'admin'] as const;
export type ScopeKind = (typeof SCOPE_KINDS)[number];

/** One registered client, as the clients file holds it (public key only). */
export interface ClientRegistration {
  client_id: string;
  /** Scope kinds the client may ask for; each becomes `<audience>/personverninnstilling_<kind>`. */
  scopes: ScopeKind[];
  /**
   * The development shortcut for citizen tokens: every token of this client carries this
   * identity number as `pid` (a citizen's app, one client per citizen). Absent: system tokens.
   */
  pid?: string;
  /** Tokens only bound to a DPoP key (the token request must carry a proof). Default true. */
  dpop_bound_access_tokens: boolean;
  /** The client's public keys: it authenticates with a JWT signed by one of them (private_key_jwt). */
  jwks: { keys: JWK[] };
}

export interface ClientsFile {
  clients: ClientRegistration[];
}

export function clientsFilePath(dataDir: string): string {
  return join(dataDir, ISSUER_DIR, CLIENTS_FILE);
}

/** The registered clients; none when the file does not exist yet. */
export async function readClients(file: string): Promise<ClientsFile> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { clients: [] };
    throw err;
  }
  const parsed = JSON.parse(text) as Partial<ClientsFile>;
  if (!Array.isArray(parsed.clients)) {
    throw new Error(`${file} is not a clients file (no "clients" array)`);
  }
  return { clients: parsed.clients };
}

const CLIENT_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export interface NewClient {
  clientId: string;
  scopes: ScopeKind[];
  /** A citizen's identity number: the client's tokens carry it as `pid`. */
  pid?: string;
  dpopBound?: boolean;
}

export interface RegisteredClient {
  registration: ClientRegistration;
  /** The private key (ES256): the client keeps it, the issuer never sees it. */
  privateJwk: JWK;
}

/**
 * Registers a client with a new ES256 key pair: the public key goes into the clients file (which
 * the running issuer reads on every token request, so no restart), the private key is returned
 * to the caller and kept nowhere else. A client id already registered is replaced.
 */
export async function registerClient(
  dataDir: string,
  client: NewClient,
): Promise<RegisteredClient> {
  if (client.pid !== undefined && !isValidFnr(client.pid, { allowSynthetic: true })) {
    throw new Error('pid must be a valid 11-digit national identity number');
  }
  if (!CLIENT_ID.test(client.clientId)) {
    throw new Error('the client id must be 1-128 letters, digits, ".", "_", ":" or "-"');
  }
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  const privateJwk = await exportJWK(privateKey);
  const kid = await calculateJwkThumbprint(privateJwk);
  const { d: _d, ...publicJwk } = privateJwk;
  const registration: ClientRegistration = {
    client_id: client.clientId,
    scopes: [...new Set(client.scopes)],
    ...(client.pid ? { pid: client.pid } : {}),
    dpop_bound_access_tokens: client.dpopBound ?? true,
    jwks: { keys: [{ ...publicJwk, kid, alg: 'ES256', use: 'sig' }] },
  };
  const file = clientsFilePath(dataDir);
  const current = await readClients(file);
  const clients = current.clients.filter((c) => c.client_id !== client.clientId);
  clients.push(registration);
  await mkdir(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  await writeFile(tmp, `${JSON.stringify({ clients }, null, 2)}\n`);
  await rename(tmp, file);
  return { registration, privateJwk: { ...privateJwk, kid, alg: 'ES256', use: 'sig' } };
}
