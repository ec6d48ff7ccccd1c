import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';
import { constants as zlibConstants, createBrotliCompress, createGzip, gunzip } from 'node:zlib';
import type { Dataset } from '@nhp/refsync-contracts';
import { LRUCache } from 'lru-cache';
import { SingleFlight } from '../cache/single-flight';
import type { Spelling } from '../datasets';
import type { DatasetReader, ReadLogger } from '../ports';
import { joinBody, renderEmptyEnvelope, renderEnvelope, type RenderedBody } from './render';

const gunzipAsync = promisify(gunzip);

/** Content codings offered, in the server's order of preference when the client weighs them equally. */
export const CONTENT_ENCODINGS = ['br', 'gzip', 'identity'] as const;
export type ContentEncoding = (typeof CONTENT_ENCODINGS)[number];

/** What one request selects: a dataset in one spelling, with the effective sinceVersion (>= 0). */
export interface Selection {
  dataset: Dataset;
  spelling: Spelling;
  /** undefined: no sinceVersion (R1; rules: libs/refsync/domain/README.md). Otherwise the effective value: negative already 0. */
  since: number | undefined;
}

/** One representation, ready to write: bytes and the complete header set, built once. */
export interface CachedResponse {
  etag: string;
  version: number;
  encoding: ContentEncoding;
  body: Buffer;
  headers: Readonly<Record<string, string>>;
  /** The same headers as a flat [name, value, ...] list: writeHead's cheapest input. */
  headerList: readonly string[];
  /**
   * true for a large identity representation kept gzip-compressed: `body` holds the gzip bytes,
   * shared with the gzip representation, and is inflated while it is sent (see writeCached).
   */
  inflate: boolean;
}

export interface ResponseStoreOptions {
  reader: DatasetReader;
  maxBytes: number;
  logger: ReadLogger;
  /**
   * Diffs from this many versions below the current one are cached; older ones are computed on
   * demand (once for concurrent requests) but not kept. See the README's cache design.
   */
  recentVersions?: number;
  /**
   * Identity bodies larger than this are kept gzip-compressed only (default 8 MiB): a 100k-item
   * list is 85 MB as JSON and 10 MB gzipped, and nearly every client asks for a coding anyway.
   */
  identityMaxBytes?: number;
}

/** Fixed per-entry overhead (headers, key, bookkeeping) charged against the byte bound. */
const ENTRY_OVERHEAD_BYTES = 512;

const DATASET_CODE: Record<Dataset, string> = { treatmentGroup: 'tg', reimbursementGroup: 'rg' };
const SPELLING_CODE: Record<Spelling, string> = { primary: 'p', alternative: 'a' };
const ENCODING_CODE: Record<ContentEncoding, string> = { br: 'br', gzip: 'gz', identity: 'id' };

/** Slots of the ETag memo: one per dataset x spelling x coding (12). */
const DATASET_SLOT: Record<Dataset, number> = { treatmentGroup: 0, reimbursementGroup: 6 };
const SPELLING_SLOT: Record<Spelling, number> = { primary: 0, alternative: 3 };
const ENCODING_SLOT: Record<ContentEncoding, number> = { br: 0, gzip: 1, identity: 2 };
/** sinceVersion values whose ETags are remembered per version (clients poll with a few). */
const MAX_MEMO_SINCE_VALUES = 64;

export const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The response cache. A cache key is exactly what the strong ETag is derived from (dataset,
 * spelling, effective sinceVersion, current version, content coding), so the ETag doubles as the
 * key and a 304 can be decided from the request alone.
 *
 * Effective sinceVersion is bounded: every value at or above the current version V selects
 * nothing (R4 and R6) and maps to V, negative values are already 0, so per version there are
 * at most V + 2 distinct selections. Of those, only the ones clients poll with are kept (full
 * list, 0, V, and the last `recentVersions` versions); a client catching up from further back is
 * served a freshly computed diff that is not cached, so such requests cannot evict the hot entries.
 */
export class ResponseStore {
  private readonly lru: LRUCache<string, CachedResponse>;
  private readonly responses = new SingleFlight<CachedResponse>();
  private readonly recentVersions: number;
  private readonly identityMaxBytes: number;
  private currentVersion: number | undefined;
  private computed = 0;
  /**
   * The ETags of one version, so a cached read or a 304 builds no string (and compares and looks
   * up an already flat one): by slot for the full list, and per effective sinceVersion.
   */
  private readonly etagMemo = {
    version: -1,
    all: [] as Array<string | undefined>,
    since: new Map<number, Array<string | undefined>>(),
  };

  constructor(private readonly options: ResponseStoreOptions) {
    this.recentVersions = options.recentVersions ?? 30;
    this.identityMaxBytes = options.identityMaxBytes ?? 8 * 1024 * 1024;
    // Bounded by bytes, not entries: a full list is 100k times a diff. A representation larger
    // than the whole bound is not stored (maxEntrySize defaults to maxSize).
    this.lru = new LRUCache<string, CachedResponse>({
      maxSize: options.maxBytes,
      sizeCalculation: (r) => r.body.length + ENTRY_OVERHEAD_BYTES,
      dispose: (_value, key, reason) => {
        if (reason === 'evict') options.logger.debug({ key }, 'response cache entry evicted');
      },
    });
  }

  /** `all` without sinceVersion, otherwise the effective value clamped to the version. */
  static sinceKey(since: number | undefined, version: number): string {
    return since === undefined ? 'all' : `s${Math.min(since, version)}`;
  }

  /** The strong ETag (and cache key) of a selection at a version in one coding. */
  etag(selection: Selection, version: number, encoding: ContentEncoding): string {
    const memo = this.etagMemo;
    if (memo.version !== version) {
      memo.version = version;
      memo.all = [];
      memo.since.clear();
    }
    let slots = memo.all;
    if (selection.since !== undefined) {
      const since = Math.min(selection.since, version);
      let forSince = memo.since.get(since);
      if (!forSince) {
        if (memo.since.size >= MAX_MEMO_SINCE_VALUES) memo.since.clear();
        forSince = [];
        memo.since.set(since, forSince);
      }
      slots = forSince;
    }
    const slot =
      DATASET_SLOT[selection.dataset] + SPELLING_SLOT[selection.spelling] + ENCODING_SLOT[encoding];
    return (slots[slot] ??= ResponseStore.buildEtag(selection, version, encoding));
  }

  private static buildEtag(selection: Selection, version: number, encoding: ContentEncoding) {
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
      const response =
        encoding === 'identity'
          ? await this.computeIdentity(selection, version, etag)
          : await this.computeEncoded(selection, version, encoding, etag);
      const cached = this.admits(selection, version) && this.store(etag, response);
      this.computed++;
      this.options.logger.debug(
        { etag, bytes: response.body.length, cached, ms: Math.round(performance.now() - started) },
        'response computed',
      );
      return response;
    });
  }

  private async computeIdentity(
    selection: Selection,
    version: number,
    etag: string,
  ): Promise<CachedResponse> {
    const raw = await this.render(selection, version);
    if (raw.length <= this.identityMaxBytes) {
      return buildResponse(etag, version, 'identity', joinBody(raw));
    }
    // Both codings are made now, from the chunks at hand: later they would have to be inflated
    // again first. The gzip bytes double as the identity representation.
    const [gzipped, brotli] = await Promise.all([
      compress('gzip', raw.chunks, raw.length),
      compress('br', raw.chunks, raw.length),
    ]);
    if (this.admits(selection, version)) {
      for (const [encoding, body] of [
        ['gzip', gzipped],
        ['br', brotli],
      ] as const) {
        const key = this.etag(selection, version, encoding);
        if (!this.lru.has(key)) this.store(key, buildResponse(key, version, encoding, body));
      }
    }
    return buildResponse(etag, version, 'identity', gzipped, raw.length);
  }

  private async computeEncoded(
    selection: Selection,
    version: number,
    encoding: 'br' | 'gzip',
    etag: string,
  ): Promise<CachedResponse> {
    const identity = await this.obtain(selection, version, 'identity');
    if (!identity.inflate) {
      return buildResponse(etag, version, encoding, await compressBuffer(encoding, identity.body));
    }
    const body =
      encoding === 'gzip'
        ? identity.body
        : await compressBuffer(encoding, await gunzipAsync(identity.body));
    return buildResponse(etag, version, encoding, body);
  }

  /**
   * Records the current version and drops every entry of another version: they can never be hit
   * again (the version is part of the key) and would only hold memory.
   */
  setCurrentVersion(version: number): number {
    this.currentVersion = version;
    const stale: string[] = [];
    for (const [key, response] of this.lru.entries()) {
      if (response.version !== version) stale.push(key);
    }
    for (const key of stale) this.lru.delete(key);
    return stale.length;
  }

  /** Stores a representation; false when it is larger than the whole bound (not stored). */
  private store(etag: string, response: CachedResponse): boolean {
    this.lru.set(etag, response);
    return this.lru.has(etag);
  }

  /** What the cache holds now, cheaply (for metrics). */
  usage(): { entries: number; bytes: number; maxBytes: number } {
    return {
      entries: this.lru.size,
      bytes: this.lru.calculatedSize,
      maxBytes: this.options.maxBytes,
    };
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
      bytes: this.lru.calculatedSize,
      maxBytes: this.options.maxBytes,
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

  /**
   * Serialises while the items are read (see renderEnvelope). Each spelling reads on its own: the
   * single flight per key already makes one read per selection, spelling and version.
   */
  private async render(selection: Selection, version: number): Promise<RenderedBody> {
    const since = selection.since;
    if (since !== undefined && since >= version) {
      return renderEmptyEnvelope(selection.spelling, version);
    }
    const options =
      since === undefined ? { atVersion: version } : { atVersion: version, sinceVersion: since };
    return renderEnvelope(selection.spelling, version, (onItem) =>
      this.options.reader.scanItems(selection.dataset, options, onItem),
    );
  }
}

/**
 * Headers are built once per representation. An identity body kept compressed (`identityLength`
 * given) still announces its identity length: it is inflated while it is sent.
 */
function buildResponse(
  etag: string,
  version: number,
  encoding: ContentEncoding,
  body: Buffer,
  identityLength?: number,
): CachedResponse {
  const headers: Record<string, string> = {
    'Content-Type': JSON_CONTENT_TYPE,
    'Content-Length': String(identityLength ?? body.length),
    ETag: etag,
    'Cache-Control': 'no-cache',
    Vary: 'Accept-Encoding',
  };
  if (encoding !== 'identity') headers['Content-Encoding'] = encoding;
  return {
    etag,
    version,
    encoding,
    body,
    headers,
    headerList: Object.entries(headers).flat(),
    inflate: identityLength !== undefined,
  };
}

function compressBuffer(encoding: 'br' | 'gzip', body: Buffer): Promise<Buffer> {
  return compress(encoding, [body], body.length);
}

/**
 * Runs on libuv's thread pool, off the event loop, fed chunk by chunk, so a large body is never
 * joined into one buffer.
 * Brotli's top quality is far too slow for a 100k-item list (well under 1 MB/s), so large bodies
 * use a mid quality that still beats gzip.
 */
async function compress(
  encoding: 'br' | 'gzip',
  chunks: readonly Buffer[],
  length: number,
): Promise<Buffer> {
  const zip =
    encoding === 'gzip'
      ? createGzip({ level: 6 })
      : createBrotliCompress({
          params: {
            [zlibConstants.BROTLI_PARAM_MODE]: zlibConstants.BROTLI_MODE_TEXT,
            [zlibConstants.BROTLI_PARAM_QUALITY]: length > 1024 * 1024 ? 5 : 9,
            [zlibConstants.BROTLI_PARAM_SIZE_HINT]: length,
          },
        });
  const out: Buffer[] = [];
  await pipeline(Readable.from(chunks, { objectMode: false }), zip, async (compressed) => {
    for await (const chunk of compressed) out.push(chunk as Buffer);
  });
  return Buffer.concat(out);
}
