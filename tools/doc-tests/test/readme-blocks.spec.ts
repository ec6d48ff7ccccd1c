/**
 * The READMEs' blocks for `npm start`, pasted as they stand against a real `npm start` (the dev
 * stack's own entry point, its processes: nats-server, the MongoDB-compatible server, the three
 * apps and the development issuer). Each block runs in a fresh bash, as pasted into a terminal,
 * and each promise in it (`# 200`, `# EPVK-101500`, `# endret`, ...) must hold; see
 * src/readme-blocks.ts for the markers and promises.
 *
 * So that it runs beside other tests, the stack gets free ports and its own data folder
 * (`PRIVACY_API_PORT`, ..., `DEV_DATA_DIR`), and the blocks are run with the README's ports and
 * `.data/` replaced by those: the only change made to the text.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stripVTControlCharacters } from 'node:util';
import { freePort, present, waitFor } from '@nhp/shared-testing';
import { layoutProblems } from '../src/page-layout';
import {
  docSteps,
  parseExpectation,
  splitCommands,
  unmet,
  type DocStep,
} from '../src/readme-blocks';

const ROOT = resolve(__dirname, '../../..');
/** The READMEs with blocks to paste while `npm start` runs, in the order a reader meets them. */
const READMES = [
  'README.md',
  'apps/privacy-api/README.md',
  'libs/privacy/client/README.md',
  'tools/privacy-token/README.md',
  'tools/privacy-mirror/README.md',
];
const DEFAULT_PORTS = { api: 3001, refsync: 3002, importer: 3003, issuer: 3004 };

const strip = (text: string) => stripVTControlCharacters(text);

interface Stack {
  child: ChildProcess;
  output: () => string;
  dataDir: string;
  ports: typeof DEFAULT_PORTS;
}

async function startStack(): Promise<Stack> {
  const dataDir = await mkdtemp(join(tmpdir(), 'doc-tests-'));
  const ports = {
    api: await freePort(),
    refsync: await freePort(),
    importer: await freePort(),
    issuer: await freePort(),
  };
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? tmpdir(),
      DEV_DATA_DIR: dataDir,
      PRIVACY_API_PORT: String(ports.api),
      REFSYNC_API_PORT: String(ports.refsync),
      REFSYNC_IMPORTER_PORT: String(ports.importer),
      PRIVACY_DEV_ISSUER_PORT: String(ports.issuer),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so that a Ctrl-C (SIGINT to the group) can be sent as a terminal does.
    detached: true,
  });
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (output += c));
  return { child, output: () => strip(output), dataDir, ports };
}

/**
 * As a terminal's Ctrl-C: SIGINT to the whole process group; resolves with the exit code, or the
 * signal's name when it ended the process.
 */
function interrupt(child: ChildProcess, timeoutMs: number): Promise<number | string | null> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve(child.exitCode ?? child.signalCode);
  }
  return new Promise((done) => {
    const kill = setTimeout(() => {
      process.kill(-(child.pid as number), 'SIGKILL');
    }, timeoutMs);
    child.once('exit', (code, signal) => {
      clearTimeout(kill);
      done(code ?? signal);
    });
    process.kill(-(child.pid as number), 'SIGINT');
  });
}

/** The block as it runs here: the stack's ports and data folder for the README's. */
function localise(script: string, stack: Stack): string {
  let text = script.replaceAll('.data/', `${stack.dataDir}/`);
  for (const [name, port] of Object.entries(DEFAULT_PORTS)) {
    const ours = stack.ports[name as keyof typeof DEFAULT_PORTS];
    text = text.replace(new RegExp(`(localhost|127\\.0\\.0\\.1):${port}\\b`, 'g'), `$1:${ours}`);
  }
  return text;
}

/**
 * The bash script for a block: each command between markers that carry its exit code; curl also
 * prints the status it got, for promises on `curl -s` (without `-i`).
 */
function instrument(step: DocStep, stack: Stack): string {
  const lines = [
    `curl() { command curl -w '\\n@@status %{http_code}@@\\n' "$@"; }`,
    ...step.commands.map(
      (c, i) =>
        `printf '\\n@@begin ${i}@@\\n'\n${localise(c.text, stack)}\nprintf '\\n@@end ${i} %s@@\\n' "$?"`,
    ),
  ];
  return lines.join('\n');
}

function bash(script: string, stack: Stack): ChildProcess {
  return spawn('bash', ['-c', script], {
    cwd: ROOT,
    env: {
      PATH: process.env['PATH'] ?? '',
      HOME: process.env['HOME'] ?? tmpdir(),
      DEV_DATA_DIR: stack.dataDir,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
}

function collect(child: ChildProcess): () => string {
  let output = '';
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (output += c));
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (output += c));
  return () => strip(output);
}

/** What was wrong with each command of a finished block (empty: every promise held). */
function problems(step: DocStep, output: string): string[] {
  const found: string[] = [];
  step.commands.forEach((command, i) => {
    const begin = output.indexOf(`@@begin ${i}@@`);
    const end = new RegExp(`@@end ${i} (\\d+)@@`).exec(output);
    const where = `${step.file}:${command.line} \`${command.text.split('\n')[0]}\``;
    if (begin < 0 || !end) {
      found.push(`${where}: did not run to its end`);
      return;
    }
    const own = output.slice(begin, end.index);
    const statuses = [...own.matchAll(/@@status (\d{3})@@/g)].map((m) => Number(m[1]));
    const printed = own.replace(/@@status \d{3}@@/g, '');
    if (end[1] !== '0') found.push(`${where}: exit status ${end[1]}:\n${printed.trim()}`);
    if (/^privacy-admin \w[\w-]*: warning/m.test(printed)) {
      found.push(`${where}: privacy-admin warned:\n${printed.trim()}`);
    }
    if (!command.expect) return;
    const miss = unmet(command.expect, printed, statuses.at(-1));
    if (miss) found.push(`${where}: ${miss}; it printed:\n${printed.trim().slice(0, 600)}`);
  });
  return found;
}

describe('reading the README blocks', () => {
  it('when a command has a trailing or a following promise, then it is parsed; a description is not a promise', () => {
    const commands = splitCommands(
      [
        `curl -si -X POST http://x -d '{"a":1,`,
        `   "b":2}'             # 201 {}`,
        'TOKEN=$(npm run -s privacy-token -- --scope write)   # client dev-client',
        'curl -s http://x \\',
        '  -d "$S"',
        '# {"code":"EPVK-100403",...}',
        '#   more of the body',
        'curl -s http://y    # 401: the proof was used before',
      ],
      1,
    );
    expect(commands.map((c) => [c.line, c.expect])).toEqual([
      [1, { status: 201, contains: ['{}'] }],
      [3, undefined],
      [4, { contains: ['{"code":"EPVK-100403",'] }],
      [8, { status: 401, contains: [] }],
    ]);
    expect(parseExpectation('ikkeEndret')).toEqual({ contains: ['"instansEndret":"ikkeEndret"'] });
    expect(parseExpectation('EPVK-101500')).toEqual({ contains: ['EPVK-101500'] });
  });

  it('when output misses a promise, then it says what was expected', () => {
    expect(unmet({ status: 200, contains: [] }, 'HTTP/1.1 200 OK\n{}')).toBeUndefined();
    expect(unmet({ status: 200, contains: [] }, '{"code":"EPVK-101500"}', 400)).toBe(
      'expected status 200, saw 400',
    );
    expect(unmet({ contains: ['{}'] }, '{"x":1}')).toBe('expected the output to contain {}');
  });
});

describe('laying a page out in Chromium', () => {
  it('when a table cell is narrower than a word, or a code block is cut off, then each is reported', async () => {
    const page = `<!doctype html><html><body>
      <table style="width:300px"><tr><td>a long description of the response that takes the room</td>
      <td id="h"><code>X-Request-Id</code></td></tr></table>
      <pre style="width:200px;overflow:auto">curl -i -H 'Authorization: Bearer &lt;token&gt;' 'http://localhost:3001/a/very/long/path'</pre>
      </body></html>`;
    const problems = await layoutProblems(page, { width: 1280 });
    expect(problems.map((p) => [p.kind, p.text.slice(0, 7)])).toEqual([
      ['broken-word', 'X-Reque'],
      ['overflowing-block', 'curl -i'],
    ]);
  });
});

describe('npm start, as the READMEs use it', () => {
  let stack: Stack | undefined;

  beforeAll(async () => {
    const started = await startStack();
    stack = started;
    await waitFor('npm start to be up', () => /stack is up/.test(started.output()), {
      timeoutMs: 180_000,
      intervalMs: 250,
    });
  }, 200_000);

  afterAll(async () => {
    if (stack) {
      await interrupt(stack.child, 20_000);
      await rm(stack.dataDir, { recursive: true, force: true });
    }
  });

  it('when the /docs pages are laid out at 1280 px in Chromium, then no table cell is narrower than a word and no code block is cut off', async () => {
    const started = present(stack, 'npm start');
    for (const port of [started.ports.api, started.ports.refsync]) {
      const res = await fetch(`http://127.0.0.1:${port}/docs`);
      expect(res.status).toBe(200);
      expect(await layoutProblems(await res.text(), { width: 1280 })).toEqual([]);
    }
  }, 120_000);

  // Last: it ends with Ctrl-C.
  it('when each marked block is pasted as it stands while npm start runs, then every promise holds, and Ctrl-C stops the stack quietly', async () => {
    const steps: DocStep[] = [];
    for (const file of READMES) {
      steps.push(...docSteps(file, await readFile(join(ROOT, file), 'utf8')));
    }
    expect(steps.length).toBeGreaterThan(10);
    const started = present(stack, 'npm start');
    const summaryAt = started.output().indexOf('stack is up');
    // The summary comes last: nothing of the apps' start-up after it.
    expect(started.output().slice(summaryAt)).not.toMatch(/^\[(privacy|refsync)-[a-z]+\]/m);

    const found: string[] = [];
    let background: { child: ChildProcess; output: () => string; step: DocStep } | undefined;
    const stopBackground = async () => {
      if (!background) return;
      const { child, output, step } = background;
      background = undefined;
      // bash itself may end by the SIGINT; what counts is that the follower stopped cleanly.
      const code = await interrupt(child, 15_000);
      if (![0, 130, 'SIGINT'].includes(code ?? -1) || /^privacy-[a-z]+: /m.test(output())) {
        found.push(`${step.file}:${step.line}: ended ${code} on Ctrl-C:\n${output()}`);
      }
    };
    let file: string | undefined;
    for (const step of steps) {
      if (step.file !== file) {
        await stopBackground();
        file = step.file;
      }
      if (step.marker.kind === 'prints') {
        const running = background;
        const text = step.marker.text;
        if (!running) throw new Error(`${step.file}:${step.line}: no block runs in the background`);
        await waitFor(`${step.file}:${step.line}: ${text}`, () => running.output().includes(text), {
          timeoutMs: 30_000,
        }).catch(() =>
          found.push(`${step.file}:${step.line}: never printed ${text}:\n${running.output()}`),
        );
        continue;
      }
      const child = bash(instrument(step, started), started);
      const output = collect(child);
      if (step.marker.kind === 'background') {
        const until = step.marker.until;
        background = { child, output, step };
        await waitFor(`${step.file}:${step.line}: ${until}`, () => output().includes(until), {
          timeoutMs: 90_000,
        }).catch(() =>
          found.push(`${step.file}:${step.line}: never printed ${until}:\n${output()}`),
        );
        // The commands before the one that keeps running have finished: check them.
        found.push(...problems({ ...step, commands: step.commands.slice(0, -1) }, output()));
        continue;
      }
      const code = await new Promise<number | null>((done) => {
        const timer = setTimeout(() => {
          found.push(`${step.file}:${step.line}: still running after 90 s`);
          process.kill(-(child.pid as number), 'SIGKILL');
        }, 90_000);
        child.once('exit', (c) => {
          clearTimeout(timer);
          done(c);
        });
      });
      if (code !== 0) found.push(`${step.file}:${step.line}: bash exited ${code}`);
      found.push(...problems(step, output()));
    }
    await stopBackground();
    expect(found).toEqual([]);

    // Ctrl-C: the stack stops everything, and no app complains of a second signal.
    const code = await interrupt(started.child, 60_000);
    stack = undefined;
    await rm(started.dataDir, { recursive: true, force: true });
    expect(started.output()).toMatch(/\[dev-stack\] stopped/);
    expect(started.output()).not.toContain('shutdown already in progress');
    expect(started.output().slice(started.output().indexOf('stopping…'))).not.toMatch(
      /nats disconnected/,
    );
    // npm ends itself by the SIGINT it was sent, after the stack has stopped.
    expect([0, 'SIGINT']).toContain(code);
    await expect(fetch(`http://127.0.0.1:${started.ports.api}/health`)).rejects.toThrow();
  }, 600_000);
});
