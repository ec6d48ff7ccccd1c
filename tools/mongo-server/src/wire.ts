// MongoDB wire protocol framing: OP_QUERY (legacy handshake only) in, OP_REPLY out; OP_MSG both ways.
// https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
import { deserialize, serialize, type DeserializeOptions } from 'bson';
import { crc32c } from './crc32c';
import { attachSequenceBytes, encodeDocument } from './raw';
import type { Doc } from './values';

export const OP_REPLY = 1;
export const OP_QUERY = 2004;
export const OP_COMPRESSED = 2012;
export const OP_MSG = 2013;

export const MAX_MESSAGE_SIZE_BYTES = 48_000_000;

const CHECKSUM_PRESENT = 1 << 0;
const MORE_TO_COME = 1 << 1;
const EXHAUST_ALLOWED = 1 << 16;
/** Bits 0-15 are "required": a receiver must reject a message with a required bit it does not know. */
const KNOWN_REQUIRED_BITS = CHECKSUM_PRESENT | MORE_TO_COME;

/**
 * Commands are decoded without promoting numbers so that documents keep their exact BSON types
 * (int32 vs double vs int64); see values.ts for how the rest of the server reads them.
 */
export const DESERIALIZE: DeserializeOptions = { promoteValues: false, bsonRegExp: true };

export class ProtocolError extends Error {}

export interface Header {
  length: number;
  requestId: number;
  responseTo: number;
  opCode: number;
}

export type Request =
  | { kind: 'query'; header: Header; ns: string; query: Doc }
  | { kind: 'msg'; header: Header; moreToCome: boolean; command: Doc };

/** Splits a TCP byte stream into whole messages. */
export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  push(chunk: Buffer): Buffer[] {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    const frames: Buffer[] = [];
    for (;;) {
      if (this.buffered < 4) break;
      const head = this.peek(4);
      const length = head.readInt32LE(0);
      if (length < 16 || length > MAX_MESSAGE_SIZE_BYTES) {
        throw new ProtocolError(
          `recv(): message msgLen ${length} is invalid. Min 16 Max: ${MAX_MESSAGE_SIZE_BYTES}`,
        );
      }
      if (this.buffered < length) break;
      const all = Buffer.concat(this.chunks, this.buffered);
      frames.push(all.subarray(0, length));
      const rest = all.subarray(length);
      this.chunks = rest.length ? [rest] : [];
      this.buffered = rest.length;
    }
    return frames;
  }

  private peek(n: number): Buffer {
    const first = this.chunks[0] as Buffer;
    if (first.length >= n) return first;
    return Buffer.concat(this.chunks, this.buffered).subarray(0, n);
  }
}

function readCString(buf: Buffer, at: number): [string, number] {
  const end = buf.indexOf(0, at);
  if (end < 0) throw new ProtocolError('unterminated cstring');
  return [buf.toString('utf8', at, end), end + 1];
}

function readDoc(buf: Buffer, at: number, limit: number): [Doc, number] {
  if (at + 4 > limit) throw new ProtocolError('truncated BSON document');
  const size = buf.readInt32LE(at);
  if (size < 5 || at + size > limit) throw new ProtocolError('invalid BSON document length');
  return [deserialize(buf.subarray(at, at + size), DESERIALIZE) as Doc, at + size];
}

export function parseFrame(frame: Buffer): Request {
  const header: Header = {
    length: frame.readInt32LE(0),
    requestId: frame.readInt32LE(4),
    responseTo: frame.readInt32LE(8),
    opCode: frame.readInt32LE(12),
  };
  if (header.opCode === OP_QUERY) {
    let at = 20; // header + flags
    const [ns, next] = readCString(frame, at);
    at = next + 8; // numberToSkip, numberToReturn
    const [query] = readDoc(frame, at, frame.length);
    return { kind: 'query', header, ns, query };
  }
  if (header.opCode === OP_MSG) {
    const flags = frame.readUInt32LE(16);
    if (flags & 0xffff & ~KNOWN_REQUIRED_BITS) {
      throw new ProtocolError(`Unrecognized required bits in OP_MSG flags: ${flags}`);
    }
    let end = frame.length;
    if (flags & CHECKSUM_PRESENT) {
      end -= 4;
      const expected = frame.readUInt32LE(end);
      const actual = crc32c(frame, 0, end);
      if (expected !== actual) throw new ProtocolError(`OP_MSG checksum does not match contents`);
    }
    let at = 20;
    let body: Doc | undefined;
    const sequences = new Map<string, Doc[]>();
    while (at < end) {
      const kind = frame.readUInt8(at);
      at += 1;
      if (kind === 0) {
        if (body) throw new ProtocolError('Multiple body sections in message');
        [body, at] = readDoc(frame, at, end);
      } else if (kind === 1) {
        const size = frame.readInt32LE(at);
        const sectionEnd = at + size;
        if (sectionEnd > end) throw new ProtocolError('invalid document sequence size');
        const [identifier, docsAt] = readCString(frame, at + 4);
        if (sequences.has(identifier))
          throw new ProtocolError(`Duplicate document sequence: ${identifier}`);
        const docs: Doc[] = [];
        const keepBytes = identifier === 'documents';
        const bytes: Uint8Array[] = [];
        let p = docsAt;
        while (p < sectionEnd) {
          const [doc, next] = readDoc(frame, p, sectionEnd);
          // Insert's `documents` keep their bytes: stored as they came, they are sent back as
          // these bytes (raw.ts). A copy, so the frame itself is not held.
          if (keepBytes) bytes.push(Buffer.from(frame.subarray(p, next)));
          docs.push(doc);
          p = next;
        }
        if (keepBytes) attachSequenceBytes(docs, bytes);
        sequences.set(identifier, docs);
        at = sectionEnd;
      } else {
        throw new ProtocolError(`Unknown section kind ${kind}`);
      }
    }
    if (!body) throw new ProtocolError('OP_MSG messages must have a body');
    for (const [identifier, docs] of sequences) {
      if (identifier in body) {
        throw new ProtocolError(`Duplicate field ${identifier} in both body and document sequence`);
      }
      body[identifier] = docs;
    }
    return { kind: 'msg', header, moreToCome: (flags & MORE_TO_COME) !== 0, command: body };
  }
  if (header.opCode === OP_COMPRESSED) {
    throw new ProtocolError('OP_COMPRESSED received but no compressor was negotiated');
  }
  throw new ProtocolError(`Unsupported opCode ${header.opCode}`);
}

let nextRequestId = 1;

function header(length: number, responseTo: number, opCode: number): Buffer {
  const h = Buffer.alloc(16);
  h.writeInt32LE(length, 0);
  h.writeInt32LE(nextRequestId++ & 0x7fffffff, 4);
  h.writeInt32LE(responseTo, 8);
  h.writeInt32LE(opCode, 12);
  return h;
}

export function encodeMsg(responseTo: number, doc: Doc): Buffer {
  // The body is encoded after room for the header, flagBits (0) and section kind 0: one buffer.
  const out = encodeDocument(doc, 21);
  header(out.length, responseTo, OP_MSG).copy(out, 0);
  out.writeUInt32LE(0, 16);
  out[20] = 0;
  return out;
}

export function encodeReply(responseTo: number, doc: Doc): Buffer {
  const body = serialize(doc);
  const fields = Buffer.alloc(20);
  fields.writeInt32LE(8, 0); // AwaitCapable, as mongod sets it
  // cursorID (8 bytes) = 0, startingFrom = 0
  fields.writeInt32LE(1, 16); // numberReturned
  return Buffer.concat([header(16 + 20 + body.length, responseTo, OP_REPLY), fields, body]);
}

export { EXHAUST_ALLOWED };
