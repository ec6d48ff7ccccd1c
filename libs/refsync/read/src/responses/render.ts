import { compareResponseOrder } from '@nhp/refsync-domain';
import type { Spelling } from '../datasets';
import type { ListedItem, ScannedListedItem } from '../ports';

/**
 * An envelope's bytes as chunks of about `chunkChars` characters each: a 100k-item list is never
 * one string or one buffer. Buffers rather than strings: 82 MB of dead strings stayed in V8's heap
 * until its next full collection, which an idle process may not run for a long time, while buffer
 * memory counts as external memory, which makes V8 collect soon.
 */
export interface RenderedBody {
  chunks: Buffer[];
  /** Total bytes of all chunks. */
  length: number;
}

/**
 * Reads a selection (DatasetReader.scanItems bound to it): items in response order to `onItem`,
 * the late ones (replaced by a run under way) as the resolved value, in response order.
 */
export type ItemScan = (
  onItem: (scanned: ScannedListedItem) => void,
) => Promise<ScannedListedItem[]>;

const DEFAULT_CHUNK_CHARS = 1024 * 1024;

/**
 * Serialises one envelope in the field order of the contracts' envelopes while its items are read. Each
 * entry is stringified on its own, which gives exactly the bytes of JSON.stringify on the whole
 * envelope, so at no point do all items exist as objects or as one string (a 100k-item list is
 * 82 MB of JSON; reading it as one array of documents peaked at 750 MB, this at 290 MB). Called
 * once per cache key: the hot path only ever writes the resulting bytes.
 */
export async function renderEnvelope(
  spelling: Spelling,
  currentVersion: number,
  scan: ItemScan,
  options: { chunkChars?: number } = {},
): Promise<RenderedBody> {
  const entryJson = spelling === 'primary' ? primaryEntry : alternativeEntry;
  const entries = new EntryWriter(options.chunkChars ?? DEFAULT_CHUNK_CHARS);
  const late = await scan(({ itemId, item }) =>
    entries.append(item.version, itemId, entryJson(item)),
  );
  const items = entries.finish(late.map((s) => ({ ...s, json: entryJson(s.item) })));
  const head = Buffer.from(
    `{"currentVersion":${JSON.stringify(currentVersion)},"${spelling === 'primary' ? 'items' : 'entries'}":[`,
    'utf8',
  );
  const tail = Buffer.from(']}', 'utf8');
  return {
    chunks: [head, ...items.chunks, tail],
    length: head.length + items.length + tail.length,
  };
}

/** R4 and R6: nothing above the version asked for, so no query is needed. */
export function renderEmptyEnvelope(
  spelling: Spelling,
  currentVersion: number,
): Promise<RenderedBody> {
  return renderEnvelope(spelling, currentVersion, async () => []);
}

/** The rendered bytes as one buffer (a small body, or a test). */
export function joinBody(body: RenderedBody): Buffer {
  return Buffer.concat(body.chunks, body.length);
}

function primaryEntry(item: ListedItem): string {
  return JSON.stringify({
    data: item.data,
    version: item.version,
    lastChanged: item.lastChanged.toISOString(),
    isDeleted: item.isDeleted,
  });
}

function alternativeEntry(item: ListedItem): string {
  return JSON.stringify({ data: item.data, isDeleted: item.isDeleted });
}

/**
 * The comma-separated entries of an envelope's list, as buffers. Every entry is written with a
 * leading comma (dropped from the first at the end), and the key and end offset (in bytes) of
 * each one is kept, so entries that arrive late can be spliced in at their place by response order.
 */
class EntryWriter {
  private readonly chunks: Buffer[] = [];
  private text = '';
  /** Bytes written, the current text included. */
  private bytes = 0;
  private readonly versions: number[] = [];
  private readonly ids: string[] = [];
  /** Byte offset after each entry, leading commas included. */
  private readonly ends: number[] = [];

  constructor(private readonly chunkChars: number) {}

  append(version: number, itemId: string, json: string): void {
    const piece = `,${json}`;
    this.text += piece;
    this.bytes += Buffer.byteLength(piece, 'utf8');
    this.versions.push(version);
    this.ids.push(itemId);
    this.ends.push(this.bytes);
    if (this.text.length >= this.chunkChars) this.flush();
  }

  /** The entries with the late ones (in response order) spliced in, without the first comma. */
  finish(late: ReadonlyArray<{ itemId: string; item: ListedItem; json: string }>): RenderedBody {
    this.flush();
    let chunks = this.chunks;
    if (late.length > 0) {
      // Rare (a run was staging while this was read) and few: one contiguous copy is simplest.
      const written = Buffer.concat(chunks, this.bytes);
      chunks = [];
      let from = 0;
      let index = 0;
      for (const entry of late) {
        index = this.firstAfter(entry.item.version, entry.itemId, index);
        const at = index === 0 ? 0 : this.ends[index - 1];
        chunks.push(written.subarray(from, at), Buffer.from(`,${entry.json}`, 'utf8'));
        from = at;
      }
      chunks.push(written.subarray(from));
    }
    const nonEmpty = chunks.filter((chunk) => chunk.length > 0);
    if (nonEmpty.length === 0) return { chunks: [], length: 0 };
    nonEmpty[0] = nonEmpty[0].subarray(1); // the first entry's leading comma
    let length = 0;
    for (const chunk of nonEmpty) length += chunk.length;
    return { chunks: nonEmpty, length };
  }

  private flush(): void {
    if (this.text.length === 0) return;
    this.chunks.push(Buffer.from(this.text, 'utf8'));
    this.text = '';
  }

  /** The index of the first written entry after (version, itemId), searching from `from`. */
  private firstAfter(version: number, itemId: string, from: number): number {
    let low = from;
    let high = this.versions.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      const order = compareResponseOrder(
        { version: this.versions[mid], itemId: this.ids[mid] },
        { version, itemId },
      );
      if (order <= 0) low = mid + 1;
      else high = mid;
    }
    return low;
  }
}
