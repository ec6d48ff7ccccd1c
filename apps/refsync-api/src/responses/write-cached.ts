import type { ServerResponse } from 'node:http';
import { pipeline } from 'node:stream';
import { createGunzip } from 'node:zlib';
import type { CachedResponse } from '@nhp/refsync-read';

/** A request id to send along, for the fast path (which runs before any header is set). */
export interface RequestIdHeader {
  name: string;
  value: string;
}

/**
 * Writes a cached representation. With `requestId` (the fast path, before any header is set) all
 * headers go into one writeHead call as a flat list; without it (Express, which has already set
 * X-Request-Id) the header object is merged with what is set. A large identity body kept
 * compressed is inflated as it streams out (no database, serialisation or compression); a HEAD
 * request gets the headers only.
 */
export function writeCached(
  res: ServerResponse,
  response: CachedResponse,
  requestId?: RequestIdHeader,
): void {
  if (requestId) res.writeHead(200, [...response.headerList, requestId.name, requestId.value]);
  else res.writeHead(200, response.headers);
  if (!response.inflate) {
    res.end(response.body);
    return;
  }
  if (res.req?.method === 'HEAD') {
    res.end();
    return;
  }
  const inflate = createGunzip();
  // pipeline destroys the inflater when the client goes away mid-body.
  pipeline(inflate, res, () => undefined);
  inflate.end(response.body);
}

/**
 * Writes a 304 for `etag`: the validators and caching headers a 200 would carry, no body. All in
 * one writeHead call with a flat list: a separate setHeader would send every header through
 * setHeader's validation again (headers Express has already set are merged in by Node).
 */
export function writeNotModified(
  res: ServerResponse,
  etag: string,
  requestId?: RequestIdHeader,
): void {
  res.writeHead(
    304,
    requestId
      ? [
          'ETag',
          etag,
          'Cache-Control',
          'no-cache',
          'Vary',
          'Accept-Encoding',
          requestId.name,
          requestId.value,
        ]
      : ['ETag', etag, 'Cache-Control', 'no-cache', 'Vary', 'Accept-Encoding'],
  );
  res.end();
}
