import type { Caller } from '@nhp/privacy-contracts';
import type { Request, RequestHandler } from 'express';
import { refused, type AuthScheme } from './errors';

export type ScopeKind = 'read' | 'write' | 'admin';

/**
 * Who is calling, as the verified access token says: privacy-contracts' Caller (what the use
 * cases take, bar the request id) with the token's scopes and scheme, which the entry point checks.
 */
export interface AuthenticatedCaller extends Omit<Caller, 'requestId'> {
  /** The token's `client_id` claim: the calling system. */
  readonly clientId: string | undefined;
  /** The token's scopes, exactly as issued. */
  readonly scopes: ReadonlySet<string>;
  /** Citizen context: the identity number in the token's `pid` claim. Personal data: never log it. */
  readonly pid: string | undefined;
  /** How the token came: as a Bearer token or DPoP-bound with a proof. */
  readonly scheme: AuthScheme;
  /** Holds `<audience>/personverninnstilling_<kind>`; the admin scope implies read and write. */
  has(kind: ScopeKind): boolean;
  readonly isAdmin: boolean;
}

export function scopeName(audience: string, kind: ScopeKind): string {
  return `${audience}/personverninnstilling_${kind}`;
}

const SCOPE_KINDS: readonly ScopeKind[] = ['read', 'write', 'admin'];

class VerifiedCaller implements AuthenticatedCaller {
  readonly isAdmin: boolean;
  /** The kinds the scopes grant, named once: a caller is kept with its token and asked per request. */
  private readonly held: ReadonlySet<ScopeKind>;

  constructor(
    readonly audience: string,
    readonly clientId: string | undefined,
    readonly scopes: ReadonlySet<string>,
    readonly pid: string | undefined,
    readonly scheme: AuthScheme,
  ) {
    this.held = new Set(SCOPE_KINDS.filter((kind) => scopes.has(scopeName(audience, kind))));
    this.isAdmin = this.held.has('admin');
  }

  has(kind: ScopeKind): boolean {
    return this.isAdmin || this.held.has(kind);
  }

  /** A caller that ends up in a log line shows who called, never the identity number. */
  toJSON(): Record<string, unknown> {
    return {
      clientId: this.clientId,
      scopes: [...this.scopes],
      citizen: this.pid !== undefined,
      scheme: this.scheme,
    };
  }
}

export function newCaller(
  audience: string,
  claims: { clientId: string | undefined; scopes: ReadonlySet<string>; pid: string | undefined },
  scheme: AuthScheme,
): AuthenticatedCaller {
  return new VerifiedCaller(audience, claims.clientId, claims.scopes, claims.pid, scheme);
}

// Keyed by the request object: Express's request is Node's IncomingMessage, so a caller set on
// the message before Express sees it (a fast path) is the caller Express's routes read.
const callers = new WeakMap<object, AuthenticatedCaller>();

/** Binds a verified caller (from PrivacyAuth.verify) to a request; only for a verified one. */
export function setCaller(req: object, caller: AuthenticatedCaller): void {
  callers.set(req, caller);
}

/** Whether a caller was bound to this request. */
export function hasCaller(req: object): boolean {
  return callers.has(req);
}

/**
 * The caller `authenticate` verified for this request. Throws a programmer error (a 500, logged)
 * when it did not run: a route that reads the caller without authentication is a bug, never a
 * reason to let the request through.
 */
export function callerOf(req: Request): AuthenticatedCaller {
  const caller = callers.get(req);
  if (!caller) {
    throw new Error(
      `callerOf: no authenticated caller for ${req.method} ${req.path}; mount PrivacyAuth.authenticate before this handler`,
    );
  }
  return caller;
}

/** Lets the request through when the caller holds the scope kind; refuses it with EPVK-100403 otherwise. */
export function requireScope(kind: ScopeKind, refusalStatus: 401 | 403): RequestHandler {
  return (req, _res, next) => {
    const caller = callerOf(req);
    if (!caller.has(kind)) {
      throw refused(
        `The access token lacks the personverninnstilling_${kind} scope`,
        refusalStatus,
        caller.scheme,
        caller instanceof VerifiedCaller ? scopeName(caller.audience, kind) : undefined,
      );
    }
    next();
  };
}

/**
 * Citizen operations: the token must be in a citizen's context (a `pid` claim); no scope is
 * needed. A system token is refused as a missing scope is.
 */
export function requireCitizen(refusalStatus: 401 | 403): RequestHandler {
  return (req, _res, next) => {
    const caller = callerOf(req);
    if (caller.pid === undefined) {
      throw refused(
        "This operation needs an access token in a citizen's context (a pid claim)",
        refusalStatus,
        caller.scheme,
      );
    }
    next();
  };
}
