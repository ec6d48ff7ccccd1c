import { StringDecoder } from 'node:string_decoder';
import type { UpstreamRecord } from '@nhp/refsync-sync';
import { UpstreamError } from './upstream-error';

/**
 * Streams the items of an upstream file, which is either one JSON array or NDJSON (one JSON value
 * per line); the first non-blank character decides. Memory stays bounded by the largest item.
 *
 * Hand-written on purpose: the JSON array splitter only finds element boundaries and hands each
 * element to the native JSON.parse, which is several times faster on 100k-item files than the
 * token-by-token streaming parsers on npm, and it can say which element is broken. A syntax error
 * inside one element becomes a record with `error` (the sync reports it with the other bad
 * items); a broken array structure or a missing closing `]` throws, since nothing after it can be
 * trusted.
 */
export async function* parseUpstream(
  chunks: AsyncIterable<Buffer | string>,
): AsyncGenerator<UpstreamRecord> {
  const decoder = new StringDecoder('utf8');
  const iterator = chunks[Symbol.asyncIterator]();
  let head = '';
  // Read until the first significant character to choose the format.
  for (;;) {
    const next = await iterator.next();
    if (next.done) {
      head += decoder.end();
      break;
    }
    head += typeof next.value === 'string' ? next.value : decoder.write(next.value);
    if (/[^\s\uFEFF]/.test(head)) break;
  }
  head = head.replace(/^\uFEFF/, '');
  const first = /[^\s]/.exec(head);
  if (!first) {
    await iterator.return?.();
    return; // empty: the sync decides what an empty upstream means
  }

  const rest = (async function* () {
    yield head;
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      yield typeof next.value === 'string' ? next.value : decoder.write(next.value);
    }
    const tail = decoder.end();
    if (tail) yield tail;
  })();

  try {
    if (first[0] === '[') yield* splitJsonArray(rest);
    else yield* splitNdjson(rest);
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

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** True when the characters right before `end` (not before `from`) are an odd run of backslashes. */
function oddBackslashesBefore(s: string, end: number, from: number): boolean {
  let k = end - 1;
  while (k >= from && s.charCodeAt(k) === 0x5c) k--;
  return (end - 1 - k) % 2 === 1;
}

function record(index: number, line: number, text: string): UpstreamRecord {
  try {
    return { index, line, value: JSON.parse(text) as unknown };
  } catch (err) {
    return { index, line, error: `not valid JSON (${(err as Error).message})` };
  }
}

async function* splitJsonArray(texts: AsyncIterable<string>): AsyncGenerator<UpstreamRecord> {
  let state = State.BeforeOpen as State;
  let depth = 0;
  let inString = false;
  let escaped = false;
  let parts: string[] = [];
  let index = 0;
  let line = 1;
  let valueLine = 1;
  const malformed = (what: string) =>
    new UpstreamError('malformed', `the upstream JSON array is malformed at line ${line}: ${what}`);

  for await (const s of texts) {
    let valueStart = state === State.InValue ? 0 : -1;
    let i = 0;
    while (i < s.length) {
      const c = s.charCodeAt(i);
      switch (state) {
        case State.BeforeOpen:
          if (c === 0x5b /* [ */) state = State.ExpectFirst;
          else if (!isWhitespace(c)) throw malformed('expected "["');
          break;
        case State.ExpectFirst:
        case State.ExpectValue:
          if (isWhitespace(c)) break;
          if (c === 0x5d /* ] */ && state === State.ExpectFirst) {
            state = State.Done;
            break;
          }
          if (c === 0x2c /* , */ || c === 0x5d)
            throw malformed(`unexpected "${s[i]}" where an item was expected`);
          state = State.InValue;
          valueStart = i;
          valueLine = line;
          depth = 0;
          inString = false;
          escaped = false;
          continue; // look at the same character again as part of the value
        case State.InValue: {
          if (inString) {
            if (escaped) {
              escaped = false; // this character is escaped, whatever it is
              break;
            }
            // Strings are most of a JSON file: jump to the next unescaped quote with indexOf
            // instead of looking at every character (a quote preceded by an odd run of
            // backslashes is escaped).
            let q = s.indexOf('"', i);
            while (q !== -1 && oddBackslashesBefore(s, q, i)) q = s.indexOf('"', q + 1);
            if (q === -1) {
              // The string goes on in the next chunk; a dangling backslash escapes its first character.
              escaped = oddBackslashesBefore(s, s.length, i);
              i = s.length;
              continue;
            }
            inString = false;
            i = q + 1;
            continue;
          }
          if (c === 0x22) {
            inString = true;
            break;
          }
          if (c === 0x7b /* { */ || c === 0x5b) {
            depth++;
            break;
          }
          if (c === 0x7d /* } */ || c === 0x5d) {
            if (depth > 0) {
              depth--;
              if (depth === 0) {
                index++;
                yield record(index, valueLine, parts.join('') + s.slice(valueStart, i + 1));
                parts = [];
                state = State.AfterValue;
              }
              break;
            }
            if (c === 0x7d) throw malformed('unexpected "}"');
            // A scalar element closed by the array's own "]".
            index++;
            yield record(index, valueLine, parts.join('') + s.slice(valueStart, i));
            parts = [];
            state = State.Done;
            break;
          }
          if (depth === 0 && (c === 0x2c || isWhitespace(c))) {
            index++;
            yield record(index, valueLine, parts.join('') + s.slice(valueStart, i));
            parts = [];
            state = c === 0x2c ? State.ExpectValue : State.AfterValue;
          }
          break;
        }
        case State.AfterValue:
          if (c === 0x2c) state = State.ExpectValue;
          else if (c === 0x5d) state = State.Done;
          else if (!isWhitespace(c)) throw malformed(`expected "," or "]" after item ${index}`);
          break;
        case State.Done:
          if (!isWhitespace(c)) throw malformed('content after the closing "]"');
          break;
      }
      if (c === 0x0a) line++;
      i++;
    }
    if (state === State.InValue) parts.push(s.slice(valueStart));
  }
  if (state !== State.Done) {
    throw new UpstreamError(
      'truncated',
      `the upstream JSON array ends early (no closing "]" after ${index} complete items): the file looks truncated`,
    );
  }
}

async function* splitNdjson(texts: AsyncIterable<string>): AsyncGenerator<UpstreamRecord> {
  let pending = '';
  let index = 0;
  let line = 0;
  for await (const s of texts) {
    pending += s;
    let nl = pending.indexOf('\n');
    let from = 0;
    while (nl !== -1) {
      line++;
      const text = pending.slice(from, nl).trim();
      if (text) yield record(++index, line, text);
      from = nl + 1;
      nl = pending.indexOf('\n', from);
    }
    pending = pending.slice(from);
  }
  const last = pending.trim();
  if (last) {
    line++;
    const r = record(++index, line, last);
    // A last line without a newline that does not parse is most likely a cut-off file.
    yield r.error
      ? { ...r, error: `${r.error}; the last line has no line break, the file looks truncated` }
      : r;
  }
}
