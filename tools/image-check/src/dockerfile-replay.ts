/**
 * Replays a Dockerfile's steps without Docker: each stage's file system is a folder, `COPY` copies
 * from the build context or another stage's folder, `RUN` runs its shell command in the stage's
 * working directory, with the stage's ARG and ENV values. The base image is not pulled (there is
 * no engine here): its name is returned so that the caller can check what it promises (the Node
 * release), and `RUN` uses this machine's tools with the given PATH first.
 *
 * It follows the Dockerfile itself rather than a copy of its steps, so a change to the recipe (a
 * step moved, a folder no longer copied) changes what is replayed. An instruction it does not know
 * fails the replay instead of being skipped.
 *
 * Why by hand: no library replays a Dockerfile without an engine; the parsing is dockerfile-ast's
 * (the parser of the Dockerfile language server).
 */
import { execFile } from 'node:child_process';
import { mkdir, stat } from 'node:fs/promises';
import { dirname, join, posix } from 'node:path';
import { promisify } from 'node:util';
import { Arg, Copy, DockerfileParser, Env, type Instruction } from 'dockerfile-ast';

const run = promisify(execFile);

export interface ReplayOptions {
  /** The build context: a folder holding exactly what `docker build` would send. */
  context: string;
  /** The Dockerfile's text. */
  dockerfile: string;
  /** `--build-arg` values. */
  buildArgs: Record<string, string>;
  /** Where the stages' folders go (one per stage and distinct ARG values). */
  workDir: string;
  /** The environment RUN steps start from (the image's own is not available), e.g. PATH. */
  baseEnv: Record<string, string>;
  /** Steps already replayed, by key, shared between replays as Docker's layer cache is. */
  cache?: Map<string, string>;
  /** Called before each step, e.g. to log progress. */
  onStep?: (stage: string, text: string) => void;
}

export interface ReplayedStage {
  name: string;
  /** The FROM image, its variables resolved. */
  image: string;
  /** The folder standing for the stage's `/`. */
  root: string;
  workdir: string;
  env: Record<string, string>;
  /** CMD in its exec form, if the stage has one. */
  cmd?: string[];
  /** USER, if set. */
  user?: string;
}

export interface Replay {
  /** Every stage in order; the last one is what `docker build` without `--target` produces. */
  stages: ReplayedStage[];
  final: ReplayedStage;
}

/** `$NAME` and `${NAME}` from `values`; unknown names become empty, as Docker makes them. */
function substitute(text: string, values: Record<string, string>): string {
  return text.replace(
    /\$(?:\{([A-Za-z_][A-Za-z0-9_]*)\}|([A-Za-z_][A-Za-z0-9_]*))/g,
    (_, braced: string | undefined, bare: string | undefined) => values[braced ?? bare ?? ''] ?? '',
  );
}

async function exists(path: string): Promise<boolean> {
  return stat(path).then(
    () => true,
    () => false,
  );
}

// Copies go through cp(1): node_modules trees are copied several times a replay, and cp keeps
// links and modes as Docker's COPY does, several times faster than fs.cp.
async function copyTree(from: string, to: string): Promise<void> {
  await mkdir(to, { recursive: true });
  await run('cp', ['-a', `${from}/.`, `${to}/`]);
}

/** COPY's rule for one source: a folder's contents go into the destination folder. */
async function copyInto(source: string, destination: string, intoFolder: boolean): Promise<void> {
  if ((await stat(source)).isDirectory()) return copyTree(source, destination);
  const target = intoFolder ? join(destination, posix.basename(source)) : destination;
  await mkdir(dirname(target), { recursive: true });
  await run('cp', ['-a', source, target]);
}

export async function replayDockerfile(options: ReplayOptions): Promise<Replay> {
  const parsed = DockerfileParser.parse(options.dockerfile);
  const cache = options.cache ?? new Map<string, string>();
  const globalArgs: Record<string, string> = {};
  for (const arg of parsed.getInitialARGs()) {
    const property = arg.getProperty();
    if (!property) continue;
    const name = property.getName();
    globalArgs[name] = options.buildArgs[name] ?? property.getValue() ?? '';
  }

  const stages: ReplayedStage[] = [];
  const byName = new Map<string, ReplayedStage>();
  let current: ReplayedStage | undefined;
  let scope: Record<string, string> = {};
  // What this stage has done so far, with the values it used: the cache key of its next step.
  let history: string[] = [];

  const stageRoot = (): string => {
    const key = JSON.stringify(history);
    const cached = cache.get(key);
    if (cached) return cached;
    const root = join(options.workDir, `stage-${cache.size}`);
    cache.set(key, root);
    return root;
  };

  for (const instruction of parsed.getInstructions()) {
    const keyword = instruction.getKeyword();
    const text = instruction.getArgumentsContent() ?? '';
    if (keyword === 'FROM') {
      const [image, as, name] = text.trim().split(/\s+/);
      if (!image) throw new Error(`FROM without an image (line ${lineOf(instruction)})`);
      scope = {};
      history = [`FROM ${substitute(image, globalArgs)}`];
      const stageName = as?.toUpperCase() === 'AS' && name ? name : String(stages.length);
      current = {
        name: stageName,
        image: substitute(image, globalArgs),
        root: '',
        workdir: '/',
        env: {},
      };
      stages.push(current);
      byName.set(stageName, current);
      continue;
    }
    if (!current) {
      if (keyword === 'ARG') continue; // the global ARGs, read above
      throw new Error(`${keyword} before FROM (line ${lineOf(instruction)})`);
    }
    const stage = current;
    const values = { ...globalArgs, ...scope, ...stage.env };
    options.onStep?.(stage.name, `${keyword} ${text}`);

    switch (keyword) {
      case 'ARG': {
        const property = (instruction as Arg).getProperty();
        if (!property) throw new Error(`ARG without a name (line ${lineOf(instruction)})`);
        const name = property.getName();
        const value =
          options.buildArgs[name] ?? property.getValue() ?? (globalArgs[name] as string) ?? '';
        scope[name] = value;
        history.push(`ARG ${name}=${value}`);
        break;
      }
      case 'ENV': {
        for (const property of (instruction as Env).getProperties()) {
          stage.env[property.getName()] = substitute(property.getValue() ?? '', values);
        }
        history.push(`ENV ${JSON.stringify(stage.env)}`);
        break;
      }
      case 'WORKDIR': {
        stage.workdir = posix.resolve(stage.workdir, substitute(text.trim(), values));
        history.push(`WORKDIR ${stage.workdir}`);
        break;
      }
      case 'COPY': {
        const copy = instruction as Copy;
        const from = copy.getFromFlag()?.getValue() ?? undefined;
        const args = copy
          .getArguments()
          .map((a) => a.getValue())
          .filter((a) => !a.startsWith('--'));
        const destinationText = substitute(args.pop() ?? '', values);
        const sources = args.map((a) => substitute(a, values));
        const step = `COPY ${from ? `--from=${from} ` : ''}${sources.join(' ')} ${destinationText}`;
        history.push(step);
        const before = stage.root;
        stage.root = stageRoot();
        if (await alreadyDone(stage.root)) break;
        await carryOver(before, stage.root);
        const destination = join(stage.root, posix.resolve(stage.workdir, destinationText));
        const intoFolder = destinationText.endsWith('/') || sources.length > 1;
        for (const source of sources) {
          let origin: string;
          if (from !== undefined) {
            const other = byName.get(from);
            if (!other) throw new Error(`COPY --from=${from}: no such stage before it`);
            origin = join(other.root, posix.resolve(other.workdir, source));
          } else {
            origin = join(options.context, posix.normalize(source));
          }
          if (!(await exists(origin))) {
            throw new Error(`${step}: ${source} does not exist (as docker build would fail)`);
          }
          await copyInto(origin, destination, intoFolder || source === '.');
        }
        await markDone(stage.root);
        break;
      }
      case 'RUN': {
        const command = text; // the shell expands its variables, as in a build
        history.push(`RUN ${JSON.stringify(scope)} ${JSON.stringify(stage.env)} ${command}`);
        const before = stage.root;
        stage.root = stageRoot();
        if (await alreadyDone(stage.root)) break;
        await carryOver(before, stage.root);
        const cwd = join(stage.root, stage.workdir);
        await mkdir(cwd, { recursive: true });
        await run('sh', ['-c', command], {
          cwd,
          env: { ...options.baseEnv, ...globalArgs, ...scope, ...stage.env },
          maxBuffer: 64 * 1024 * 1024,
        }).catch((error: Error & { stdout?: string; stderr?: string }) => {
          throw new Error(
            `RUN ${command} failed in stage ${stage.name}: ${error.message}\n${error.stdout ?? ''}\n${error.stderr ?? ''}`,
          );
        });
        await markDone(stage.root);
        break;
      }
      case 'CMD': {
        stage.cmd = JSON.parse(text) as string[];
        break;
      }
      case 'USER': {
        stage.user = substitute(text.trim(), values);
        break;
      }
      case 'LABEL':
      case 'EXPOSE':
        break;
      default:
        throw new Error(
          `${keyword} (line ${lineOf(instruction)}) is not replayed: teach tools/image-check what it means`,
        );
    }
  }
  const final = stages.at(-1);
  if (!final) throw new Error('the Dockerfile has no stage');
  return { stages, final };
}

function lineOf(instruction: Instruction): number {
  return instruction.getRange().start.line + 1;
}

// A step's folder is a copy of the stage's folder before it plus what the step did; a step whose
// key was seen before (the same stage, steps and values) reuses that folder, as Docker reuses a
// layer. Marked once complete, so an interrupted step is never taken for a done one.
const DONE = '.replayed';

async function alreadyDone(root: string): Promise<boolean> {
  return exists(`${root}${DONE}`);
}

async function markDone(root: string): Promise<void> {
  await mkdir(`${root}${DONE}`, { recursive: true });
}

async function carryOver(before: string, root: string): Promise<void> {
  if (before) await copyTree(before, root);
  else await mkdir(root, { recursive: true });
}
