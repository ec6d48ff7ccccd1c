import type { Request } from 'express';
import { CONTENT_ENCODINGS, type ContentEncoding } from '@nhp/refsync-read';

/** Distinct header values remembered; clients send a handful, so this is never reached in practice. */
const MAX_MEMO_ENTRIES = 256;

/**
 * Content negotiation is done by Express (its `accepts`/`negotiator`: q-values, wildcards,
 * specificity, the client's order on ties), on the Express route. The outcome depends only on the
 * header value, so it is remembered per value and the fast path, which runs before Express, only
 * serves requests whose header values Express has already negotiated. That keeps one parser and
 * no per-request negotiation cost.
 */
export class NegotiationMemo {
  private readonly accept = new Map<string, boolean>();
  private readonly encoding = new Map<string, ContentEncoding | null>();

  /** true/false once negotiated; undefined when this Accept value has not been seen yet. */
  acceptsJson(acceptHeader: string | undefined): boolean | undefined {
    return acceptHeader === undefined ? true : this.accept.get(acceptHeader);
  }

  /** The coding, null when none is acceptable, undefined when not negotiated yet. */
  encodingFor(acceptEncodingHeader: string | undefined): ContentEncoding | null | undefined {
    return acceptEncodingHeader === undefined
      ? 'identity'
      : this.encoding.get(acceptEncodingHeader);
  }

  /** Negotiates with Express and remembers the outcome. */
  negotiate(req: Request): { acceptsJson: boolean; encoding: ContentEncoding | null } {
    const acceptHeader = req.headers.accept;
    let acceptsJson = this.acceptsJson(acceptHeader);
    if (acceptsJson === undefined) {
      acceptsJson = req.accepts('application/json') !== false;
      remember(this.accept, acceptHeader as string, acceptsJson);
    }
    const aeHeader = req.headers['accept-encoding'];
    let encoding = this.encodingFor(aeHeader);
    if (encoding === undefined) {
      const chosen = req.acceptsEncodings([...CONTENT_ENCODINGS]);
      encoding = chosen === false ? null : (chosen as ContentEncoding);
      remember(this.encoding, aeHeader as string, encoding);
    }
    return { acceptsJson, encoding };
  }
}

function remember<V>(memo: Map<string, V>, key: string, value: V): void {
  if (memo.size < MAX_MEMO_ENTRIES) memo.set(key, value);
}
