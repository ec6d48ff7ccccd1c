/**
 * Who is calling a use case of privacy-api, whatever the entry point: an HTTP route or the fast
 * path (from the verified access token), or a tool (privacy-admin, the sample data, a benchmark).
 */
export interface Caller {
  /** The token's `client_id`: the calling system; undefined for a token without one. */
  clientId: string | undefined;
  /** Admin-scope tokens (and the operators' tools) need no grant. */
  isAdmin: boolean;
  /** The citizen whose context the token carries (personal data: never log). */
  pid?: string | undefined;
  /**
   * An operator's tool (privacy-admin, the sample data) calling for a named person or job instead
   * of a token: audit records name them as `admin`.
   */
  operator?: string | undefined;
  /** The request the call came in, named in audit records. */
  requestId?: string | undefined;
}
