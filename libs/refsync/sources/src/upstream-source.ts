import { fileURLToPath } from 'node:url';
import type { UpstreamSource } from '@nhp/refsync-sync';
import { openFileSnapshot } from './file-snapshot';
import { openHttpSnapshot, type HttpSourceOptions } from './http-snapshot';
import { upstreamError } from './upstream-error';

export type UpstreamSourceOptions = HttpSourceOptions;

/**
 * The reader for one configured upstream URL: `file://` (JSON array or NDJSON) or `http(s)://`
 * (downloaded with timeout and retries, see openHttpSnapshot).
 */
export function createUpstreamSource(
  rawUrl: string,
  options: UpstreamSourceOptions,
): UpstreamSource {
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    throw upstreamError(
      'unsupported_url',
      `not a URL: ${JSON.stringify(describeUpstreamUrl(rawUrl))}`,
    );
  }
  const description = describeUpstreamUrl(url);
  if (url.protocol === 'file:') {
    const path = fileURLToPath(url);
    return { description, open: () => openFileSnapshot(path, description) };
  }
  if (url.protocol === 'http:' || url.protocol === 'https:') {
    return {
      description,
      open: (context) =>
        openHttpSnapshot(url, description, {
          ...options,
          logger: context?.logger ?? options.logger,
          ...(context?.runId ? { runId: context.runId } : {}),
        }),
    };
  }
  throw upstreamError(
    'unsupported_url',
    `unsupported upstream URL scheme "${url.protocol}" (use file:, http: or https:)`,
  );
}

/** The URL without credentials or query values, fit for logs and for the published event. */
export function describeUpstreamUrl(url: URL | string): string {
  if (typeof url === 'string') {
    const raw = url;
    try {
      url = new URL(raw);
    } catch {
      return raw.replace(/\/\/[^@/]*@/, '//').replace(/\?.*$/, '');
    }
  }
  if (url.protocol === 'file:') return url.href;
  return `${url.origin}${url.pathname}${url.search ? '?…' : ''}`;
}

/** Parses a configured header line such as "Authorization: Bearer x" into one header entry. */
export function parseHeaderLine(line: string): Record<string, string> {
  const colon = line.indexOf(':');
  const name = colon > 0 ? line.slice(0, colon).trim() : '';
  const value = colon > 0 ? line.slice(colon + 1).trim() : '';
  if (!/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name) || !value) {
    throw new Error('expected "<Header-Name>: <value>", e.g. "Authorization: Bearer <token>"');
  }
  return { [name]: value };
}
