/**
 * The READMEs' shell blocks that are meant to be pasted while `npm start` runs, and what each
 * promises. A block is marked by an HTML comment (invisible on the rendered page) before its
 * fence:
 *
 * - `<!-- doc-test -->`: run the block; every promise in it must hold.
 * - `<!-- doc-test: background until "TEXT" -->`: the block's last command runs until stopped (a
 *   mirror, a follower): start it, and go on once its output shows TEXT.
 * - `<!-- doc-test: background prints "TEXT" -->` (anywhere after): the running background block
 *   prints TEXT.
 *
 * A promise is a comment after a command, on its line or on the next line alone, that starts with
 * an HTTP status (`# 200`, `# 401: the proof was used before`), an error code (`# EPVK-101500`), a
 * JSON body (`# {}`, `# {"code":"EPVK-100403",...}`: the text before an ellipsis must appear) or
 * a settings answer (`# endret`, `# ikkeEndret`). Other comments describe and are not checked.
 */

export type Marker =
  { kind: 'run' } | { kind: 'background'; until: string } | { kind: 'prints'; text: string };

export interface Expectation {
  status?: number;
  /** Texts the command's output must contain. */
  contains: string[];
}

export interface Command {
  /** The command as written, continuation lines included. */
  text: string;
  /** 1-based line in the README where it starts. */
  line: number;
  expect?: Expectation;
}

export interface DocStep {
  file: string;
  line: number;
  marker: Marker;
  /** The block's text (none for `prints`). */
  script?: string;
  commands: Command[];
}

const MARKER = /^<!--\s*doc-test(?::\s*(.*?))?\s*-->\s*$/;

function parseMarker(body: string | undefined, where: string): Marker {
  if (body === undefined) return { kind: 'run' };
  const background = /^background until "(.*)"$/.exec(body);
  if (background?.[1]) return { kind: 'background', until: background[1] };
  const prints = /^background prints "(.*)"$/.exec(body);
  if (prints?.[1]) return { kind: 'prints', text: prints[1] };
  throw new Error(`${where}: unknown doc-test marker "${body}"`);
}

/** Every marked block of a README, in order. */
export function docSteps(file: string, markdown: string): DocStep[] {
  const lines = markdown.split('\n');
  const steps: DocStep[] = [];
  for (let i = 0; i < lines.length; i++) {
    const m = MARKER.exec(lines[i] ?? '');
    if (!m) continue;
    const where = `${file}:${i + 1}`;
    const marker = parseMarker(m[1], where);
    if (marker.kind === 'prints') {
      steps.push({ file, line: i + 1, marker, commands: [] });
      continue;
    }
    let start = i + 1;
    while (start < lines.length && (lines[start] ?? '').trim() === '') start++;
    if (lines[start] !== '```sh')
      throw new Error(`${where}: the marker is not followed by a sh block`);
    const end = lines.indexOf('```', start + 1);
    if (end < 0) throw new Error(`${where}: the block does not end`);
    const body = lines.slice(start + 1, end);
    steps.push({
      file,
      line: start + 2,
      marker,
      script: body.join('\n'),
      commands: splitCommands(body, start + 2),
    });
    i = end;
  }
  return steps;
}

/**
 * The block's top-level commands: a command goes on over lines ending in a backslash and over
 * quotes left open (a JSON body written over several lines). A quote-aware scan rather than a
 * shell parser: the blocks are written for people, and this is what they contain.
 */
export function splitCommands(lines: string[], firstLine: number): Command[] {
  const commands: Command[] = [];
  let current: string[] = [];
  let startLine = firstLine;
  let quote: "'" | '"' | undefined;
  let pendingComment: Command | undefined;
  lines.forEach((line, index) => {
    if (current.length === 0 && quote === undefined) {
      const trimmed = line.trim();
      if (trimmed.startsWith('#') || trimmed === '') {
        // A comment alone on the line after a command may be that command's promise.
        if (pendingComment && trimmed.startsWith('#') && !pendingComment.expect) {
          pendingComment.expect = parseExpectation(trimmed.slice(1).trim());
        }
        pendingComment = undefined;
        return;
      }
      startLine = firstLine + index;
    }
    current.push(line);
    let comment: string | undefined;
    for (let c = 0; c < line.length; c++) {
      const ch = line[c];
      if (quote) {
        if (ch === quote) quote = undefined;
        else if (ch === '\\' && quote === '"') c++;
      } else if (ch === "'" || ch === '"') {
        quote = ch;
      } else if (ch === '\\') {
        c++;
      } else if (ch === '#' && (c === 0 || /\s/.test(line[c - 1] ?? ''))) {
        comment = line.slice(c + 1).trim();
        break;
      }
    }
    const continues = quote !== undefined || (comment === undefined && /\\$/.test(line));
    if (continues) return;
    const command: Command = { text: current.join('\n'), line: startLine };
    const expect = comment === undefined ? undefined : parseExpectation(comment);
    if (expect) command.expect = expect;
    commands.push(command);
    pendingComment = command;
    current = [];
  });
  return commands;
}

/** A promise, or undefined for a comment that only describes. */
export function parseExpectation(comment: string): Expectation | undefined {
  const status = /^([1-5]\d\d)\b:?\s*(.*)$/.exec(comment);
  const rest = status ? (status[2] ?? '') : comment;
  const contains: string[] = [];
  const json = /^(\{.*)$/.exec(rest.trim());
  if (json?.[1]) {
    const text = json[1];
    const cut = text.search(/\.\.\.|…/);
    contains.push(cut < 0 ? text : text.slice(0, cut));
  } else if (/^EPVK-\d{6}\b/.test(rest.trim())) {
    contains.push(...(rest.match(/EPVK-\d{6}/g) ?? []));
  } else if (/^(endret|ikkeEndret)$/.test(rest.trim())) {
    contains.push(`"instansEndret":"${rest.trim()}"`);
  } else if (!status) {
    return undefined;
  }
  return status ? { status: Number(status[1]), contains } : { contains };
}

/** What a command printed meets its promise: undefined, or what is wrong. */
export function unmet(expect: Expectation, output: string, status?: number): string | undefined {
  if (expect.status !== undefined) {
    const seen = new Set<number>();
    if (status !== undefined) seen.add(status);
    for (const m of output.matchAll(/^HTTP\/[\d.]+ (\d{3})/gm)) seen.add(Number(m[1]));
    if (!seen.has(expect.status)) {
      return `expected status ${expect.status}, saw ${[...seen].join(', ') || 'none'}`;
    }
  }
  const compact = output.replace(/\s+/g, '');
  for (const text of expect.contains) {
    if (!compact.includes(text.replace(/\s+/g, '')))
      return `expected the output to contain ${text}`;
  }
  return undefined;
}
