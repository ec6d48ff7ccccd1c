import { hash } from 'node:crypto';
import type { UpstreamRecord } from '@nhp/refsync-sync';
import { upstreamError } from './upstream-error';

/**
 * One element of an upstream file: its exact bytes, hashed and parsed only when asked. A nightly
 * run finds almost every element byte-for-byte as it was imported last time by `sourceHash` alone,
 * so it never decodes, parses, validates or canonicalises those (see the sync's README section).
 */
class UpstreamElement implements UpstreamRecord {
  #sourceHash: string | undefined;
  #parsed: { value?: unknown; error?: string } | undefined;

  constructor(
    readonly index: number,
    readonly line: number,
    private readonly bytes: Buffer,
    /** Set on the last NDJSON line when it has no line break: a parse error then means truncation. */
    private readonly unterminated = false,
  ) {}

  get sourceHash(): string {
    // One-shot hash (Node >= 20.12): half the cost of createHash().update().digest() per item.
    this.#sourceHash ??= hash('sha256', this.bytes, 'base64');
    return this.#sourceHash;
  }

  get value(): unknown {
    return this.parsed().value;
  }

  get error(): string | undefined {
    return this.parsed().error;
  }

  private parsed(): { value?: unknown; error?: string } {
    if (this.#parsed) return this.#parsed;
    try {
      this.#parsed = { value: JSON.parse(this.bytes.toString('utf8')) as unknown };
    } catch (err) {
      const reason = `not valid JSON (${(err as Error).message})`;
      this.#parsed = {
        error: this.unterminated
          ? `${reason}; the last line has no line break, the file looks truncated`
          : reason,
      };
    }
    return this.#parsed;
  }
}

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const COMMA = 0x2c;
const BACKSLASH = 0x5c;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const BOM = [0xef, 0xbb, 0xbf];

function isWhitespace(c: number): boolean {
  return c === SPACE || c === LF || c === CR || c === TAB;
}

/**
 * Streams the items of an upstream file, which is either one JSON array or NDJSON (one JSON value
 * per line); the first significant byte decides. Memory stays bounded by the largest item.
 *
 * Hand-written on purpose: the splitter only finds element boundaries, on the raw bytes (UTF-8
 * never puts a byte below 0x80 inside a multi-byte character, so quotes, brackets and backslashes
 * can be found byte by byte), and hands each element's bytes on untouched. That is what lets a
 * nightly run recognise unchanged elements by a hash of their bytes without decoding or parsing
 * them, and it is several times faster on 100k-item files than the token-by-token streaming
 * parsers on npm, which also cannot say which element is broken. A syntax error inside one element
 * becomes a record with `error` (the sync reports it with the other bad items); a broken array
 * structure or a missing closing `]` throws, since nothing after it can be trusted.
 */
export async function* parseUpstream(
  chunks: AsyncIterable<Buffer | string>,
): AsyncGenerator<UpstreamRecord> {
  const iterator = chunks[Symbol.asyncIterator]();
  const next = async (): Promise<Buffer | undefined> => {
    const step = await iterator.next();
    if (step.done) return undefined;
    return typeof step.value === 'string' ? Buffer.from(step.value, 'utf8') : step.value;
  };

  // Read until the first significant byte to choose the format (a leading BOM is skipped).
  let head: Buffer = Buffer.alloc(0);
  let start = -1;
  let ended = false;
  while (start === -1 && !ended) {
    const chunk = await next();
    if (chunk === undefined) ended = true;
    else head = head.length === 0 ? chunk : Buffer.concat([head, chunk]);
    if (head.length < BOM.length && !ended) continue; // a BOM may still be arriving
    let i = BOM.every((b, k) => head[k] === b) ? BOM.length : 0;
    while (i < head.length && isWhitespace(head[i] as number)) i++;
    if (i < head.length) start = i;
  }
  if (start === -1) {
    await iterator.return?.();
    return; // empty: the sync decides what an empty upstream means
  }

  // Line numbers count from the file's start, so count the newlines skipped so far.
  let skippedLines = 0;
  for (let i = 0; i < start; i++) if (head[i] === LF) skippedLines++;
  const first = head.subarray(start);
  const rest = (async function* () {
    yield first;
    for (let chunk = await next(); chunk !== undefined; chunk = await next()) yield chunk;
  })();

  try {
    if (first[0] === OPEN_BRACKET) yield* splitJsonArray(rest, skippedLines + 1);
    else yield* splitNdjson(rest, skippedLines);
  } finally {
    // A reader that stops early (it found what it needed) releases the underlying stream.
    await iterator.return?.();
  }
}

const enum State {
  BeforeOpen,
  ExpectFirst,
  ExpectValue,
  InValue,
  AfterValue,
  Done,
}

/** True when the bytes right before `end` (not before `from`) are an odd run of backslashes. */
function oddBackslashesBefore(b: Buffer, end: number, from: number): boolean {
  let k = end - 1;
  while (k >= from && b[k] === BACKSLASH) k--;
  return (end - 1 - k) % 2 === 1;
}

function joined(parts: Buffer[], last: Buffer): Buffer {
  return parts.length === 0 ? last : Buffer.concat([...parts, last]);
}

async function* splitJsonArray(
  chunks: AsyncIterable<Buffer>,
  firstLine: number,
): AsyncGenerator<UpstreamRecord> {
  let state = State.BeforeOpen as State;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: Buffer[] = [];
  let index = 0;
  let line = firstLine;
  let valueLine = firstLine;
  const malformed = (what: string) =>
    upstreamError('malformed', `the upstream JSON array is malformed at line ${line}: ${what}`);
  const element = (bytes: Buffer) => new UpstreamElement(++index, valueLine, bytes);

  for await (const b of chunks) {
    let valueStart = state === State.InValue ? 0 : -1;
    let i = 0;
    while (i < b.length) {
      const c = b[i] as number;
      switch (state) {
        case State.BeforeOpen:
          if (c === OPEN_BRACKET) state = State.ExpectFirst;
          else if (!isWhitespace(c)) throw malformed('expected "["');
          break;
        case State.ExpectFirst:
        case State.ExpectValue:
          if (isWhitespace(c)) break;
          if (c === CLOSE_BRACKET && state === State.ExpectFirst) {
            state = State.Done;
            break;
          }
          if (c === COMMA || c === CLOSE_BRACKET)
            throw malformed(`unexpected "${String.fromCharCode(c)}" where an item was expected`);
          state = State.InValue;
          valueStart = i;
          valueLine = line;
          depth = 0;
          inString = false;
          escaped = false;
          continue; // look at the same byte again as part of the value
        case State.InValue: {
          if (inString) {
            if (escaped) {
              escaped = false; // this byte is escaped, whatever it is
              if (c === LF) line++;
              i++;
              continue;
            }
            // Strings are most of a JSON file: jump to the next unescaped quote with the native
            // indexOf instead of looking at every byte (a quote after an odd run of backslashes
            // is escaped). Valid JSON has no raw line break inside a string, so no line is skipped.
            let q = b.indexOf(QUOTE, i);
            while (q !== -1 && oddBackslashesBefore(b, q, i)) q = b.indexOf(QUOTE, q + 1);
            if (q === -1) {
              // The string goes on in the next chunk; a dangling backslash escapes its first byte.
              escaped = oddBackslashesBefore(b, b.length, i);
              i = b.length;
              continue;
            }
            inString = false;
            i = q + 1;
            continue;
          }
          if (c === QUOTE) {
            inString = true;
            break;
          }
          if (c === OPEN_BRACE || c === OPEN_BRACKET) {
            depth++;
            break;
          }
          if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
            if (depth > 0) {
              depth--;
              if (depth === 0) {
                yield element(joined(parts, b.subarray(valueStart, i + 1)));
                parts = [];
                state = State.AfterValue;
              }
              break;
            }
            if (c === CLOSE_BRACE) throw malformed('unexpected "}"');
            // A scalar element closed by the array's own "]".
            yield element(joined(parts, b.subarray(valueStart, i)));
            parts = [];
            state = State.Done;
            break;
          }
          if (depth === 0 && (c === COMMA || isWhitespace(c))) {
            yield element(joined(parts, b.subarray(valueStart, i)));
            parts = [];
            state = c === COMMA ? State.ExpectValue : State.AfterValue;
          }
          break;
        }
        case State.AfterValue:
          if (c === COMMA) state = State.ExpectValue;
          else if (c === CLOSE_BRACKET) state = State.Done;
          else if (!isWhitespace(c)) throw malformed(`expected "," or "]" after item ${index}`);
          break;
        case State.Done:
          if (!isWhitespace(c)) throw malformed('content after the closing "]"');
          break;
      }
      if (c === LF) line++;
      i++;
    }
    if (state === State.InValue) parts.push(b.subarray(valueStart));
  }
  if (state !== State.Done) {
    throw upstreamError(
      'truncated',
      `the upstream JSON array ends early (no closing "]" after ${index} complete items): the file looks truncated`,
    );
  }
}

/** The line without surrounding JSON whitespace, or undefined when it is blank. */
function trimmed(b: Buffer): Buffer | undefined {
  let from = 0;
  let to = b.length;
  while (from < to && isWhitespace(b[from] as number)) from++;
  while (to > from && isWhitespace(b[to - 1] as number)) to--;
  return from === to ? undefined : b.subarray(from, to);
}

async function* splitNdjson(
  chunks: AsyncIterable<Buffer>,
  skippedLines: number,
): AsyncGenerator<UpstreamRecord> {
  let pending: Buffer[] = [];
  let index = 0;
  let line = skippedLines;
  for await (const b of chunks) {
    let from = 0;
    let nl = b.indexOf(LF);
    while (nl !== -1) {
      line++;
      const text = trimmed(joined(pending, b.subarray(from, nl)));
      pending = [];
      if (text) yield new UpstreamElement(++index, line, text);
      from = nl + 1;
      nl = b.indexOf(LF, from);
    }
    if (from < b.length) pending.push(b.subarray(from));
  }
  const last = pending.length > 0 ? trimmed(Buffer.concat(pending)) : undefined;
  // A last line without a line break that does not parse is most likely a cut-off file.
  if (last) yield new UpstreamElement(++index, line + 1, last, true);
}
