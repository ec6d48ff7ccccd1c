import type { IncomingMessage } from 'node:http';
import type { ApiKeyVerifier } from './api-keys';

const LAST_VERIFIED = Symbol('refsync.lastVerifiedApiKey');

interface VerifiedOnSocket {
  [LAST_VERIFIED]?: { presented: string; client: string };
}

/**
 * The client name for a request's X-API-KEY, remembering the last key verified on the same
 * connection: a keep-alive client sends the same header value on every request, and hashing it
 * once per connection instead of once per request is the largest saving on the hot path.
 *
 * This keeps the constant-time property where it matters. A key is only ever compared with `===`
 * against a value that the same connection has already presented and that verified, so timing can
 * tell a connection nothing about any key it did not send itself; every other value goes through
 * the hashed, constant-time comparison. The remembered value lives exactly as long as the
 * connection's own buffers, which held it anyway.
 */
export function authenticate(
  req: IncomingMessage,
  verifier: ApiKeyVerifier,
  header: string,
): string | undefined {
  const presented = req.headers[header];
  const socket = req.socket as (IncomingMessage['socket'] & VerifiedOnSocket) | null;
  const last = socket?.[LAST_VERIFIED];
  if (last !== undefined && typeof presented === 'string' && presented === last.presented)
    return last.client;
  const client = verifier.verify(presented);
  if (client !== undefined && socket && typeof presented === 'string') {
    socket[LAST_VERIFIED] = { presented, client };
  }
  return client;
}
