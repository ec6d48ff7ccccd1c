import { promisify } from 'node:util';
import { brotliCompress, constants as zlibConstants, gzip } from 'node:zlib';
import type { Dataset } from '@nhp/refsync-contracts';
import type { Logger } from '@nhp/shared-logger';
import { ByteLru } from '../cache/byte-lru';
import { SingleFlight } from '../cache/single-flight';
import type { DatasetReader, ListedItem, Spelling } from '../datasets';
import { renderEmptyEnvelope, renderEnvelope } from './render';

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Content codings offered, in the server's order of preference when the client weighs them equally. */
export const CONTENT_ENCODINGS = ['br', 'gzip', 'identity'] as const;
export type ContentEncoding = (typeof CONTENT_ENCODINGS)[number];

/** What one request selects: a dataset in one spelling, with the effective sinceVersion (>= 0). */
export interface Selection {
  dataset: Dataset;
  spelling: Spelling;
  /** undefined: no sinceVersion (rule 1). Otherwise the effective value: negative already 0. */
  since: number | undefined;
}

/** One representation, ready to write: bytes and the complete header set, built once. */
export interface CachedResponse {
  etag: string;
  version: number;
  encoding: ContentEncoding;
  body: Buffer;
  headers: Readonly<Record<string, string>>;
}

export interface ResponseStoreOptions {
  reader: DatasetReader;
  maxBytes: number;
  logger: Logger;
  /**
   * Diffs from this many versions below the current one are cached; older ones are computed on
   * demand (once for concurrent requests) but not kept. See the README's cache design.
   */
  recentVersions?: number;
}

/** Fixed per-entry overhead (headers, key, bookkeeping) charged against the byte bound. */
const ENTRY_OVERHEAD_BYTES = 512;

const DATASET_CODE: Record<Dataset, string> = { treatmentGroup: 'tg', reimbursementGroup: 'rg' };
const SPELLING_CODE: Record<Spelling, string> = { primary: 'p', alternative: 'a' };
const ENCODING_CODE: Record<ContentEncoding, string> = { br: 'br', gzip: 'gz', identity: 'id' };

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The response cache. A cache key is exactly what the strong ETag is derived from (dataset,
 * spelling, effective sinceVersion, current version, content coding), so the ETag doubles as the
 * key and a 304 can be decided from the request alone.
 *
 * Effective sinceVersion is bounded: every value at or above the current version V selects
 * nothing (rules 4 and 6) and maps to V, negative values are already 0, so per version there are
 * at most V + 2 distinct selections. Of those, only the ones clients poll with are kept (full
 * list, 0, V, and the last `recentVersions` versions); a client catching up from further back is
 * served a freshly computed diff that is not cached, so such requests cannot evict the hot entries.
 */
export class ResponseStore {
  private readonly lru: ByteLru<CachedResponse>;
  private readonly responses = new SingleFlight<CachedResponse>();
  private readonly queries = new SingleFlight<ListedItem[]>();
  private readonly recentVersions: number;
  private currentVersion: number | undefined;
  private computed = 0;

  constructor(private readonly options: ResponseStoreOptions) {
    this.recentVersions = options.recentVersions ?? 30;
    this.lru = new ByteLru<CachedResponse>({
      maxBytes: options.maxBytes,
      sizeOf: (r) => r.body.length + ENTRY_OVERHEAD_BYTES,
      onEvict: (key) => options.logger.debug({ key }, 'response cache entry evicted'),
    });
  }

  /** `all` without sinceVersion, otherwise the effective value clamped to the version. */
  static sinceKey(since: number | undefined, version: number): string {
    return since === undefined ? 'all' : `s${Math.min(since, version)}`;
  }

  /** The strong ETag (and cache key) of a selection at a version in one coding. */
  etag(selection: Selection, version: number, encoding: ContentEncoding): string {
    return `"v${version}.${DATASET_CODE[selection.dataset]}.${SPELLING_CODE[selection.spelling]}.${ResponseStore.sinceKey(selection.since, version)}.${ENCODING_CODE[encoding]}"`;
  }

  /** The cached representation, if any: no query, no serialisation, no compression. */
  peek(etag: string): CachedResponse | undefined {
    return this.lru.get(etag);
  }

  /** The representation, from the cache or computed once for all concurrent callers. */
  async obtain(
    selection: Selection,
    version: number,
    encoding: ContentEncoding,
  ): Promise<CachedResponse> {
    const etag = this.etag(selection, version, encoding);
    const hit = this.lru.get(etag);
    if (hit) return hit;
    return this.responses.run(etag, async () => {
      const started = performance.now();
      const body =
        encoding === 'identity'
          ? await this.render(selection, version)
          : await compress(encoding, (await this.obtain(selection, version, 'identity')).body);
      const response = buildResponse(etag, version, encoding, body);
      const cached = this.admits(selection, version) && this.lru.set(etag, response);
      this.computed++;
      this.options.logger.debug(
        { etag, bytes: body.length, cached, ms: Math.round(performance.now() - started) },
        'response computed',
      );
      return response;
    });
  }

  /**
   * Records the current version and drops every entry of another version: they can never be hit
   * again (the version is part of the key) and would only hold memory.
   */
  setCurrentVersion(version: number): number {
    this.currentVersion = version;
    return this.lru.deleteWhere((_key, r) => r.version !== version);
  }

  clear(): void {
    this.lru.clear();
  }

  stats(): {
    entries: number;
    bytes: number;
    maxBytes: number;
    computed: number;
    versions: number[];
  } {
    const versions = new Set<number>();
    for (const response of this.lru.values()) versions.add(response.version);
    return {
      entries: this.lru.size,
      bytes: this.lru.totalBytes,
      maxBytes: this.lru.maxBytes,
      computed: this.computed,
      versions: [...versions].sort((a, b) => a - b),
    };
  }

  private admits(selection: Selection, version: number): boolean {
    // A computation that finishes after the version moved on still answers its own requests
    // (consistently, at its version) but must not fill the cache with a dead version.
    if (version !== this.currentVersion) return false;
    const since = selection.since;
    return since === undefined || since === 0 || since >= version - this.recentVersions;
  }

  private async render(selection: Selection, version: number): Promise<Buffer> {
    const since = selection.since;
    if (since !== undefined && since >= version) {
      return renderEmptyEnvelope(selection.spelling, version);
    }
    // Both spellings of one selection share the query when they are computed at the same time.
    const items = await this.queries.run(
      `${selection.dataset}|${ResponseStore.sinceKey(since, version)}|${version}`,
      () =>
        this.options.reader.listItems(
          selection.dataset,
          since === undefined
            ? { atVersion: version }
            : { atVersion: version, sinceVersion: since },
        ),
    );
    return renderEnvelope(selection.spelling, version, items);
  }
}

function buildResponse(
  etag: string,
  version: number,
  encoding: ContentEncoding,
  body: Buffer,
): CachedResponse {
  const headers: Record<string, string> = {
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': String(body.length),
    ETag: etag,
    'Cache-Control': 'no-cache',
    Vary: 'Accept-Encoding',
  };
  if (encoding !== 'identity') headers['Content-Encoding'] = encoding;
  return { etag, version, encoding, body, headers };
}

/**
 * Runs on libuv's thread pool, off the event loop. Brotli's top quality is far too slow for a
 * 100k-item list (well under 1 MB/s), so large bodies use a mid quality that still beats gzip.
 */
async function compress(encoding: 'br' | 'gzip', body: Buffer): Promise<Buffer> {
  if (encoding === 'gzip') return gzipAsync(body, { level: 6 });
  return brotliAsync(body, {
    params: {
      [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
      [zlibConstants.BROTLI_PARAM_QUALITY]: body.length > 1024 * 1024 ? 5 : 9,
      [zlibConstants.BROTLI_PARAM_SIZE_HINT]: body.length,
    },
  });
}
