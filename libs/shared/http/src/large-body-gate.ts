import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { serviceUnavailable } from '@nhp/shared-errors';

export interface LargeBodyOptions {
  /**
   * A body that may be larger than this (bytes) is large: its Content-Length says so, or its size
   * is not known before it is read (chunked, or compressed: the limit applies to the inflated size).
   */
  above: number;
  /** Large bodies read and handled at once. */
  concurrent: number;
  /** Longest wait for a place (ms); then 503 `SERVER_BUSY` with `Retry-After`. Default 10 000. */
  maxWaitMs?: number;
  /** Requests that may wait at once; one more is answered 503 at once. Default 64. */
  maxWaiting?: number;
  /**
   * Longest time (ms) a request holding a place may send no byte of its body; then its place
   * passes on and `onStall` answers it. Default 5 000.
   */
  stallMs?: number;
  /** Answers a request whose sender stalled (createHttpApp: 408 through the app's error body). */
  onStall?: (req: IncomingMessage, res: ServerResponse) => void;
}

export interface LargeBodyGateStats {
  /** Large bodies being read or handled now. */
  active: number;
  /** Requests with a large body waiting for a place. */
  waiting: number;
  /** Requests answered 503 because no place came (queue full or wait over). */
  refused: number;
  /** Requests whose sender stalled while holding a place (answered by onStall). */
  stalled: number;
}

export interface LargeBodyGate extends RequestHandler {
  stats(): LargeBodyGateStats;
}

function mayBeLarge(req: IncomingMessage, above: number): boolean {
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') return true;
  const length = req.headers['content-length'];
  if (length === undefined) return req.headers['transfer-encoding'] !== undefined;
  return !(Number(length) <= above);
}

const busy = () =>
  serviceUnavailable(
    'SERVER_BUSY',
    'Too many large requests are being handled; try again shortly',
    undefined,
    { category: 'unavailable', expose: true, headers: { 'Retry-After': '1' } },
  );

/**
 * At most `concurrent` large request bodies in memory at once. A large body is read, parsed and
 * handled only once it has a place, and keeps it until its response is done (or its connection
 * closes): what a body costs in memory (the bytes, the text, the parsed value, what the handler
 * derives from it) lasts until then, not only while it is read. A request without a place is not
 * read: Node stops reading its socket once a few KiB are buffered, so the rest of the body waits
 * in the kernel's socket buffers and the client's. It waits in arrival order, at most `maxWaitMs`
 * (then 503 `SERVER_BUSY`, `Retry-After: 1`; Node discards the unread body); beyond `maxWaiting`
 * waiting requests, one more is answered so at once. A waiting client that goes away gives up its
 * place in the queue when Node sees its connection close: at once if it sent little, else when its
 * turn comes or its wait ends (an unread socket is not watched).
 *
 * A sender that stops sending while it holds a place would hold it until the server's request
 * timeout (30 s): so while its body is being received, the bytes its connection has read
 * (`socket.bytesRead`) are looked at every quarter of `stallMs`, and when none came for `stallMs`
 * the place passes on at once and `onStall` answers the request (a 408 that closes the
 * connection). Polled rather than listened for: a 'data' listener would take the body from the
 * reader that comes next.
 */
export function largeBodyGate(options: LargeBodyOptions): LargeBodyGate {
  const { above, concurrent } = options;
  const maxWaitMs = options.maxWaitMs ?? 10_000;
  const maxWaiting = options.maxWaiting ?? 64;
  const stallMs = options.stallMs ?? 5_000;
  if (!(concurrent >= 1)) throw new RangeError('largeBodies.concurrent must be at least 1');
  let active = 0;
  let refused = 0;
  let stalled = 0;
  const queue = new Set<() => void>();

  const release = () => {
    const next = queue.values().next();
    if (next.done) {
      active -= 1;
      return;
    }
    queue.delete(next.value);
    // The place passes on: `active` stays as it is.
    next.value();
  };

  const gate: RequestHandler = (req, res, next) => {
    // A response closed already (the client left before we got here) would never close again.
    if (res.closed || !mayBeLarge(req, above)) {
      next();
      return;
    }
    // Once the response is done, the place passes on and the request lets go of its parsed body:
    // the server keeps each connection's latest response (and so its request) for a graceful
    // close, which kept the last large body of every connection alive (about 50 MB after 8
    // clients' 4 MiB uploads, until the connection closed and was pruned).
    let held = false;
    let watch: NodeJS.Timeout | undefined;
    const done = () => {
      clearInterval(watch);
      (req as { body?: unknown }).body = undefined;
      if (!held) return;
      held = false;
      release();
    };
    const hold = () => {
      held = true;
      res.once('close', done);
      let lastRead = req.socket.bytesRead;
      let lastProgress = Date.now();
      watch = setInterval(
        () => {
          if (req.complete || res.writableEnded) {
            clearInterval(watch);
            return;
          }
          const read = req.socket.bytesRead;
          const now = Date.now();
          if (read !== lastRead) {
            lastRead = read;
            lastProgress = now;
          } else if (now - lastProgress >= stallMs) {
            stalled += 1;
            done();
            options.onStall?.(req, res);
          }
        },
        Math.max(10, Math.floor(stallMs / 4)),
      );
      watch.unref();
      next();
    };
    if (active < concurrent) {
      active += 1;
      hold();
      return;
    }
    if (queue.size >= maxWaiting) {
      refused += 1;
      next(busy());
      return;
    }
    const admit = () => {
      clearTimeout(timer);
      res.off('close', leave);
      hold();
    };
    const leave = () => {
      clearTimeout(timer);
      queue.delete(admit);
    };
    const timer = setTimeout(() => {
      leave();
      res.off('close', leave);
      refused += 1;
      next(busy());
    }, maxWaitMs);
    queue.add(admit);
    res.once('close', leave);
  };

  return Object.assign(gate, {
    stats: (): LargeBodyGateStats => ({ active, waiting: queue.size, refused, stalled }),
  });
}
