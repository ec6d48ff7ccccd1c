// Stored documents as BSON bytes, so that reads send bytes instead of serialising documents again.
// Each stored record keeps the bytes of its (immutable) document beside it (StoredRecord.raw): the
// insert's own wire bytes when the document is stored as it arrived, else the document serialised
// once when it is written.
//
// Cursor replies are assembled here around those bytes, and plain top-level projections
// (`{_id: 0, a: 1, b: 1}`, `{data: 0}`) are applied to the bytes by copying whole elements. Written
// by hand because the `bson` package has no API to embed already-encoded documents or to copy
// elements; what it does here is only framing (element headers and lengths), never value encoding.
import { Decimal128, serialize } from 'bson';
import { isPlainObject, toNumber, type Doc } from './values';

/** A document that is already BSON (a stored document's bytes, or a projection made on them). */
export class RawBson {
  constructor(readonly bytes: Uint8Array) {}
}

/**
 * On the array of a document sequence (insert's `documents`): each document's wire bytes, so that
 * a document stored as it came keeps them as its stored bytes (wire.ts sets it, insert uses it).
 */
export const SEQUENCE_BYTES = Symbol('sequence bytes');

/** The wire bytes wire.ts attached to a document sequence, if any. */
export function sequenceBytes(docs: unknown[]): Uint8Array[] | undefined {
  return (docs as { [SEQUENCE_BYTES]?: Uint8Array[] })[SEQUENCE_BYTES];
}

export function attachSequenceBytes(docs: unknown[], bytes: Uint8Array[]): void {
  Object.defineProperty(docs, SEQUENCE_BYTES, { value: bytes, enumerable: false });
}

/**
 * A projector on bytes for projections that name only top-level fields (no dots, no `$`) with
 * 1/true or 0/false, `_id` included or not; undefined for anything else (the caller then projects
 * the document). The result keeps the stored field order, as MongoDB's does.
 */
export function compileRawProjection(
  projection: Doc | undefined,
): ((bytes: Uint8Array) => Uint8Array) | undefined {
  if (!projection || Object.keys(projection).length === 0) return undefined;
  const names: Buffer[] = [];
  let mode: 'include' | 'exclude' | undefined;
  let keepId = true;
  for (const [k, v] of Object.entries(projection)) {
    let include: boolean;
    if (v === 1 || v === true) include = true;
    else if (v === 0 || v === false) include = false;
    else return undefined;
    if (k === '' || k.includes('.') || k.startsWith('$')) return undefined;
    if (k === '_id') {
      keepId = include;
      continue;
    }
    const m = include ? 'include' : 'exclude';
    if (mode && mode !== m) return undefined;
    mode = m;
    names.push(Buffer.from(k, 'utf8'));
  }
  // `{_id: 1}` alone includes only `_id`; `{_id: 0}` alone excludes it.
  const inclusive = mode === 'include' || (mode === undefined && keepId);
  // Element names are compared as bytes (their UTF-8 form), without decoding them to strings.
  const wanted = (buf: Buffer, from: number, to: number): boolean => {
    if (to - from === 3 && buf[from] === 0x5f && buf[from + 1] === 0x69 && buf[from + 2] === 0x64)
      return keepId;
    return inclusive === isOneOf(buf, from, to, names);
  };
  return (bytes) => projectBytes(bytes, wanted);
}

function isOneOf(buf: Buffer, from: number, to: number, names: Buffer[]): boolean {
  const len = to - from;
  next: for (const name of names) {
    if (name.length !== len) continue;
    for (let i = 0; i < len; i++) if (name[i] !== buf[from + i]) continue next;
    return true;
  }
  return false;
}

function projectBytes(
  src: Uint8Array,
  wanted: (buf: Buffer, from: number, to: number) => boolean,
): Uint8Array {
  const buf = Buffer.isBuffer(src) ? src : Buffer.from(src.buffer, src.byteOffset, src.byteLength);
  const end = buf.readInt32LE(0) - 1;
  const keep: number[] = [];
  let total = 5;
  let at = 4;
  while (at < end) {
    const start = at;
    const type = buf[at] as number;
    const nameEnd = buf.indexOf(0, at + 1);
    const next = elementEnd(buf, type, nameEnd + 1);
    if (wanted(buf, at + 1, nameEnd)) {
      keep.push(start, next);
      total += next - start;
    }
    at = next;
  }
  const out = Buffer.allocUnsafe(total);
  out.writeInt32LE(total, 0);
  let w = 4;
  for (let i = 0; i < keep.length; i += 2) w += buf.copy(out, w, keep[i], keep[i + 1]);
  out[w] = 0;
  return out;
}

/** Where a BSON element whose value starts at `v` ends (BSON spec, element types 0x01-0x13, min/max key). */
export function elementEnd(buf: Buffer, type: number, v: number): number {
  switch (type) {
    case 0x01: // double
    case 0x09: // UTC datetime
    case 0x11: // timestamp
    case 0x12: // int64
      return v + 8;
    case 0x02: // string
    case 0x0d: // JavaScript code
    case 0x0e: // symbol
      return v + 4 + buf.readInt32LE(v);
    case 0x03: // document
    case 0x04: // array
    case 0x0f: // code with scope
      return v + buf.readInt32LE(v);
    case 0x05: // binary
      return v + 5 + buf.readInt32LE(v);
    case 0x06: // undefined
    case 0x0a: // null
    case 0x7f: // max key
    case 0xff: // min key
      return v;
    case 0x07: // ObjectId
      return v + 12;
    case 0x08: // boolean
      return v + 1;
    case 0x0b: // regex: two cstrings
      return buf.indexOf(0, buf.indexOf(0, v) + 1) + 1;
    case 0x0c: // DBPointer
      return v + 4 + buf.readInt32LE(v) + 12;
    case 0x10: // int32
      return v + 4;
    case 0x13: // decimal128
      return v + 16;
    default:
      throw new Error(`unknown BSON element type ${type}`);
  }
}

/** The bytes a batch entry contributes: a RawBson's own, else the document serialised. */
function entryBytes(doc: unknown): Uint8Array {
  if (doc instanceof RawBson) return doc.bytes;
  return serialize(doc as Doc);
}

const ZERO = Buffer.from([0]);

/** One element `name: <embedded document or array bytes>` (`kind` 0x03 or 0x04). */
function elementHeader(kind: number, name: string): Buffer {
  const h = Buffer.allocUnsafe(name.length + 2);
  h[0] = kind;
  h.write(name, 1, 'latin1');
  h[name.length + 1] = 0;
  return h;
}

/** The elements of a serialised single-field document, without its length and terminator. */
function elementsOf(doc: Doc): Buffer {
  const b = serialize(doc);
  return Buffer.from(b.buffer, b.byteOffset + 4, b.byteLength - 5);
}

function withHeadroom(body: Uint8Array, headroom: number): Buffer {
  const out = Buffer.allocUnsafe(headroom + body.length);
  out.set(body, headroom);
  return out;
}

/**
 * Encodes a reply, after `headroom` bytes left for the caller (the message header). A cursor reply (`{cursor: {firstBatch|nextBatch: [...], ...}, ...}`) is assembled
 * from the batch documents' bytes; everything else is serialised as usual.
 */
export function encodeDocument(reply: Doc, headroom = 0): Buffer {
  const cursor = reply['cursor'];
  if (!isPlainObject(cursor)) return withHeadroom(serialize(reply), headroom);
  const batchKey = Array.isArray(cursor['firstBatch'])
    ? 'firstBatch'
    : Array.isArray(cursor['nextBatch'])
      ? 'nextBatch'
      : undefined;
  if (!batchKey) return withHeadroom(serialize(reply), headroom);
  const batch = cursor[batchKey] as unknown[];
  const parts: Uint8Array[] = [];
  let arrayLen = 5;
  for (let i = 0; i < batch.length; i++) {
    const bytes = entryBytes(batch[i]);
    const head = elementHeader(0x03, String(i));
    parts.push(head, bytes);
    arrayLen += head.length + bytes.length;
  }
  const cursorParts: Uint8Array[] = [];
  let cursorLen = 5;
  for (const [k, v] of Object.entries(cursor)) {
    if (k === batchKey) {
      const head = elementHeader(0x04, k);
      const len = Buffer.allocUnsafe(4);
      len.writeInt32LE(arrayLen, 0);
      cursorParts.push(head, len);
      for (const part of parts) cursorParts.push(part);
      cursorParts.push(ZERO);
      cursorLen += head.length + arrayLen;
    } else {
      const e = elementsOf({ [k]: v });
      cursorParts.push(e);
      cursorLen += e.length;
    }
  }
  const topParts: Uint8Array[] = [];
  let topLen = 5;
  for (const [k, v] of Object.entries(reply)) {
    if (k === 'cursor') {
      const head = elementHeader(0x03, k);
      const len = Buffer.allocUnsafe(4);
      len.writeInt32LE(cursorLen, 0);
      topParts.push(head, len);
      for (const part of cursorParts) topParts.push(part);
      topParts.push(ZERO);
      topLen += head.length + cursorLen;
    } else {
      const e = elementsOf({ [k]: v });
      topParts.push(e);
      topLen += e.length;
    }
  }
  const out = Buffer.allocUnsafe(headroom + topLen);
  out.writeInt32LE(topLen, headroom);
  let w = headroom + 4;
  for (const p of topParts) {
    out.set(p, w);
    w += p.length;
  }
  out[w] = 0;
  return out;
}

// Reading single top-level fields of a stored document from its bytes, without decoding the
// document: what index keys, the scalar fast paths of filters (engine.ts) and fastSort need.
// Hand-written: `bson`'s only lazy reader, `onDemand.parseToElements`, is marked experimental
// ("not intended for production use") and allocates a tuple per element; this finds one element
// by name and reads one value, allocating nothing but the value itself.

/**
 * What `topValue` gives for a field whose value is not one of the scalars it reads (an embedded
 * document, ObjectId, binary, regex, ...): an object that is not a Date, so the fast paths that
 * read it treat it as such a value of a view (mostly undecided: the caller decodes the document).
 */
export const OTHER: unknown = Object.freeze({ notDecodedHere: true });

/** What `topValue` gives for an array (not read): an (empty, frozen) array, as arrays are told. */
export const ARRAY: unknown = Object.freeze([]);

const asBuffer = (b: Uint8Array): Buffer =>
  Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);

/**
 * The offset of the value of the last top-level element named `field` (deserialize keeps the last
 * of repeated names too), or -1 when there is none; its type byte is at the offset given by
 * `foundType`. Names are compared as UTF-8 bytes.
 */
let foundType = 0;
function findTop(buf: Buffer, field: string, start = 0): number {
  let name: Buffer | undefined;
  const n = field.length;
  for (let i = 0; i < n; i++) {
    if (field.charCodeAt(i) >= 0x80) {
      name = Buffer.from(field, 'utf8');
      break;
    }
  }
  const len = name ? name.length : n;
  const end = start + buf.readInt32LE(start) - 1;
  let at = start + 4;
  let found = -1;
  while (at < end) {
    const type = buf[at] as number;
    const nameStart = at + 1;
    let p = nameStart;
    while (buf[p] !== 0) p++;
    if (p - nameStart === len) {
      let same = true;
      for (let i = 0; i < len; i++) {
        const c = name ? name[i] : field.charCodeAt(i);
        if (buf[nameStart + i] !== c) {
          same = false;
          break;
        }
      }
      if (same) {
        found = p + 1;
        foundType = type;
      }
    }
    at = elementEnd(buf, type, p + 1);
  }
  return found;
}

/** Whether the bytes hold a top-level element named `field`. */
export function hasTop(bytes: Uint8Array, field: string): boolean {
  return findTop(asBuffer(bytes), field) >= 0;
}

/**
 * The view value (values.ts) of a top-level field, read from a document's bytes: undefined when
 * missing, a JS number for int32/int64/double/decimal128, a string, boolean, Date or null; OTHER for any
 * other value (and for `__proto__`, which a view does not hold as an own field), ARRAY for an
 * array.
 */
export function topValue(bytes: Uint8Array, field: string): unknown {
  if (field === '__proto__') return OTHER;
  const buf = asBuffer(bytes);
  const v = findTop(buf, field);
  if (v < 0) return undefined;
  switch (foundType) {
    case 0x01:
      return buf.readDoubleLE(v);
    case 0x02:
      return buf.toString('utf8', v + 4, v + 3 + buf.readInt32LE(v));
    case 0x08:
      return buf[v] !== 0;
    case 0x09:
      return new Date(int64At(buf, v));
    case 0x0a:
      return null;
    case 0x06: // undefined (deprecated): decoded as undefined
      return undefined;
    case 0x10:
      return buf.readInt32LE(v);
    case 0x12:
      return int64At(buf, v);
    case 0x13:
      return decimalAt(buf, v);
    case 0x04:
      return ARRAY;
    default:
      return OTHER;
  }
}

/** A Decimal128's view number, as values.ts toNumber gives it. */
const decimalAt = (buf: Buffer, v: number): number =>
  toNumber(new Decimal128(buf.subarray(v, v + 16))) as number;

/**
 * `keyOf` (values.ts) of a top-level field's view value, read from the bytes; undefined for values
 * it does not read (arrays, documents, regexes, timestamps, ...), which the caller then keys from
 * the decoded document. `test/planner.spec.ts` checks it against keyOf for every BSON type.
 */
export function topKey(bytes: Uint8Array, field: string): string | undefined {
  const key = keyAtPath(bytes, [field]);
  return key === null ? 'z' : key;
}

/**
 * `keyOf` of the value at a path (field names, from the top level down through embedded
 * documents) read from the bytes, as an index key; null when the path leads nowhere (a missing
 * field, or a part that is not a document: valuesAtPath's missing); undefined when it meets an
 * array (multikey: the caller decodes) or a value not read here.
 */
export function keyAtPath(bytes: Uint8Array, path: readonly string[]): string | null | undefined {
  const buf = asBuffer(bytes);
  const first = path[0] as string;
  if (first === '__proto__') return undefined;
  const v = findTop(buf, first);
  return v < 0 ? null : keyBelow(buf, v, foundType, path);
}

/**
 * Where a document's top-level elements of some names are, found in one walk of its bytes, so that
 * the keys of all of a collection's indexes are read without walking the document once per indexed
 * field (start-up loads every document through here). `read` then `keyAtPath` as the function of
 * that name gives it, for paths whose first part is one of the names.
 */
export class TopElements {
  private readonly names: readonly string[];
  private readonly encoded: readonly Buffer[];
  private readonly offsets: Int32Array;
  private readonly types: Uint8Array;
  private buf: Buffer = Buffer.alloc(0);

  constructor(names: readonly string[]) {
    this.names = names.filter((n) => n !== '__proto__');
    this.encoded = this.names.map((n) => Buffer.from(n, 'utf8'));
    this.offsets = new Int32Array(this.names.length);
    this.types = new Uint8Array(this.names.length);
  }

  /** Finds the names' elements in `bytes` (the last of repeated names, as decoding keeps). */
  read(bytes: Uint8Array): this {
    const buf = asBuffer(bytes);
    this.buf = buf;
    const { encoded, offsets, types } = this;
    offsets.fill(-1);
    const end = buf.readInt32LE(0) - 1;
    let at = 4;
    while (at < end) {
      const type = buf[at] as number;
      const nameStart = at + 1;
      let p = nameStart;
      while (buf[p] !== 0) p++;
      const len = p - nameStart;
      next: for (let j = 0; j < encoded.length; j++) {
        const name = encoded[j] as Buffer;
        if (name.length !== len) continue;
        for (let i = 0; i < len; i++) if (buf[nameStart + i] !== name[i]) continue next;
        offsets[j] = p + 1;
        types[j] = type;
      }
      at = elementEnd(buf, type, p + 1);
    }
    return this;
  }

  /** keyAtPath of the bytes last read; undefined (not read here) when path[0] is not one of the names. */
  keyAtPath(path: readonly string[]): string | null | undefined {
    const slot = this.names.indexOf(path[0] as string);
    if (slot < 0) return undefined;
    const v = this.offsets[slot] as number;
    return v < 0 ? null : keyBelow(this.buf, v, this.types[slot] as number, path);
  }
}

/**
 * keyAtPath's rest: `path[0]`'s value (of BSON type `type`) starts at `v`; follows the rest of the
 * path through embedded documents.
 */
function keyBelow(
  buf: Buffer,
  v: number,
  type: number,
  path: readonly string[],
): string | null | undefined {
  for (let i = 1; i < path.length; i++) {
    if (type === 0x04) return undefined;
    if (type !== 0x03) return null;
    const part = path[i] as string;
    if (part === '__proto__') return undefined;
    v = findTop(buf, part, v);
    if (v < 0) return null;
    type = foundType;
  }
  return keyOfElement(buf, v, type);
}

/** keyOf of one element's value (type `type`, value at `v`); see keyAtPath. */
/**
 * A BSON int64 (a long, a date's milliseconds) as the nearest double, as Number(readBigInt64LE)
 * gives it, without making a BigInt: start-up reads one for every date and long in an index key.
 * Both halves are exact doubles, so their sum is rounded once, to the same nearest double.
 */
function int64At(buf: Buffer, at: number): number {
  return buf.readInt32LE(at + 4) * 4294967296 + buf.readUInt32LE(at);
}

function keyOfElement(buf: Buffer, v: number, type: number): string | null | undefined {
  switch (type) {
    case 0x01: {
      const d = buf.readDoubleLE(v);
      return Object.is(d, -0) ? 'n0' : `n${d}`;
    }
    case 0x02:
      return `s${buf.toString('utf8', v + 4, v + 3 + buf.readInt32LE(v))}`;
    case 0x05: {
      const sub = buf[v + 4] as number;
      // Subtype 2 (old binary) holds a length of its own inside; leave it to the decoder.
      if (sub === 2) return undefined;
      return `x${sub}:${buf.toString('base64', v + 5, v + 5 + buf.readInt32LE(v))}`;
    }
    case 0x07:
      return `i${buf.toString('hex', v, v + 12)}`;
    case 0x08:
      return buf[v] !== 0 ? 'b1' : 'b0';
    case 0x09:
      return `t${new Date(int64At(buf, v)).getTime()}`;
    case 0x0a:
      return 'z';
    case 0x06: // undefined (deprecated): decoded as undefined, which an index takes as missing
      return null;
    case 0x10:
      return `n${buf.readInt32LE(v)}`;
    case 0x12:
      return `n${int64At(buf, v)}`;
    case 0x13: {
      const d = decimalAt(buf, v);
      return Object.is(d, -0) ? 'n0' : `n${d}`;
    }
    default:
      return undefined;
  }
}
