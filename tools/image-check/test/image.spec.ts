/**
 * What the image would contain, checked without a Docker engine: the Dockerfile replayed step by
 * step from this checkout's build context (tools/image-check/src), then
 * - its base image runs the Node release the tests run on;
 * - every package in the runtime stage's node_modules is the one the tests ran against, file for
 *   file (so a patch in patches/ that the image lost, or a version resolved differently, fails);
 * - each app's bundle starts from the runtime stage as the image's CMD starts it, in production
 *   mode, with the NODE_OPTIONS docker-compose.yml gives its service (if any), on a real
 *   MongoDB-wire server and nats-server, becomes healthy and stops cleanly.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { trustedIssuer, type TrustedIssuer } from '@nhp/privacy-testing';
import {
  composeNodeOptions,
  startAppProcess,
  startTestInfra,
  type TestInfra,
} from '@nhp/shared-testing';
import { buildContext } from '../src/build-context';
import { replayDockerfile, type ReplayedStage } from '../src/dockerfile-replay';
import { compareWithTested } from '../src/installed-packages';

const ROOT = resolve(__dirname, '../../..');
const APPS = ['privacy-api', 'refsync-api', 'refsync-importer'] as const;
type App = (typeof APPS)[number];

jest.setTimeout(15 * 60_000);

let work: string;
let infra: TestInfra;
let issuer: TrustedIssuer | undefined;
const images = new Map<App, ReplayedStage>();

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'nhp-image-check-'));
  const context = join(work, 'context');
  await buildContext(ROOT, context);
  const dockerfile = await readFile(join(context, 'Dockerfile'), 'utf8');
  const cache = new Map<string, string>();
  for (const app of APPS) {
    const replay = await replayDockerfile({
      context,
      dockerfile,
      buildArgs: { APP: app },
      workDir: join(work, 'stages'),
      cache,
      // RUN steps use the project's Node (the image's own is not here) and nothing of the
      // environment the tests run in, as a build starts from the image's environment.
      baseEnv: {
        PATH: `${dirname(process.execPath)}:${process.env['PATH'] ?? ''}`,
        HOME: process.env['HOME'] ?? '/root',
        NX_DAEMON: 'false',
        NX_NO_CLOUD: 'true',
        ...machineNpmConfig(),
      },
    });
    images.set(app, replay.final);
  }
  infra = await startTestInfra();
});

afterAll(async () => {
  await infra?.stop();
  await issuer?.dispose();
  if (work) await rm(work, { recursive: true, force: true });
});

function image(app: App): ReplayedStage {
  const stage = images.get(app);
  if (!stage) throw new Error(`${app} was not replayed`);
  return stage;
}

describe('the image each app is built into', () => {
  it('when built, then its Node is the release the tests run on (.nvmrc and the node devDependency)', async () => {
    const nvmrc = (await readFile(join(ROOT, '.nvmrc'), 'utf8')).trim();
    const manifest = JSON.parse(await readFile(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    };
    expect(manifest.devDependencies['node']).toBe(nvmrc);
    expect(process.version).toBe(`v${nvmrc}`);
    for (const app of APPS) {
      expect(image(app).image).toMatch(new RegExp(`^node:${nvmrc.replaceAll('.', '\\.')}-`));
    }
  });

  it.each(APPS)(
    'when %s is built, then every package it ships is the tested one, patches included',
    async (app) => {
      const stage = image(app);
      const { compared, differences } = await compareWithTested(
        join(stage.root, stage.workdir, 'node_modules'),
        join(ROOT, 'node_modules'),
      );
      expect(differences).toEqual([]);
      // The production install is not empty, and holds the patched driver.
      expect(compared).toBeGreaterThan(50);
      const driver = JSON.parse(
        await readFile(
          join(stage.root, stage.workdir, 'node_modules/mongodb/package.json'),
          'utf8',
        ),
      ) as { version: string };
      expect(driver.version).toBe('7.8.0');
    },
  );

  it.each(APPS)(
    'when %s starts from its image as the CMD starts it, in production, with its NODE_OPTIONS from docker-compose.yml, then it gets healthy and stops cleanly',
    async (app) => {
      const stage = image(app);
      const [command, ...nodeArgs] = stage.cmd ?? [];
      expect(command).toBe('node');
      expect(stage.env['NODE_ENV']).toBe('production');
      const appDir = join(stage.root, stage.workdir);
      const common = { MONGO_URL: infra.mongoUri, NATS_URL: infra.natsUrl, LOG_LEVEL: 'warn' };
      const env = await productionEnv(app, appDir);
      const running = await startAppProcess({
        name: `${app} (image)`,
        entry: `${appDir}/main.js`,
        nodeArgs,
        cwd: appDir,
        portVariable: portVariable(app),
        healthPath: app === 'privacy-api' ? '/health' : '/readyz',
        // A value Node refuses in NODE_OPTIONS (a flag it does not allow there, a typo) stops the
        // app from starting.
        env: { ...stage.env, ...common, ...env, ...nodeOptionsOf(app) },
      });
      expect(await running.stop()).toEqual({ code: 0, signal: null });
    },
  );
});

/**
 * How this machine's npm reaches the registry (its CA file, cache, config files), as npm passes
 * them to the scripts it runs: npm started by the project's Node would otherwise look for its
 * global configuration beside that Node, not where this machine keeps it.
 */
function machineNpmConfig(): Record<string, string> {
  const names = ['cafile', 'globalconfig', 'userconfig', 'cache', 'registry', 'strict_ssl'];
  return Object.fromEntries(
    names.flatMap((name) => {
      const value = process.env[`npm_config_${name}`];
      return value === undefined ? [] : [[`npm_config_${name}`, value]];
    }),
  );
}

function portVariable(app: App): string {
  return {
    'privacy-api': 'PRIVACY_API_PORT',
    'refsync-api': 'REFSYNC_API_PORT',
    'refsync-importer': 'REFSYNC_IMPORTER_PORT',
  }[app];
}

/** The NODE_OPTIONS docker-compose.yml gives the app's service, as an environment. */
function nodeOptionsOf(app: App): Record<string, string> {
  const options = composeNodeOptions(app);
  return options === undefined ? {} : { NODE_OPTIONS: options };
}

/** What each app requires in production (no development keys or tokens), on loopback. */
async function productionEnv(app: App, appDir: string): Promise<Record<string, string>> {
  switch (app) {
    case 'privacy-api': {
      issuer ??= await trustedIssuer();
      return { PRIVACY_API_HOST: '127.0.0.1', ...issuer.env };
    }
    case 'refsync-api':
      return {
        REFSYNC_API_HOST: '127.0.0.1',
        // sha256 of "image-check-key"; any well-formed entry will do.
        REFSYNC_API_KEYS:
          'image-check:7d9c7d1e1f1ea3a1a8c0c5b1a4e0b2c7e3f8e1c2b9a7d6e5f4c3b2a1d0e9f8a7',
      };
    case 'refsync-importer':
      // The sample data the image carries for trying the importer, as compose points at it.
      return {
        REFSYNC_IMPORTER_HOST: '127.0.0.1',
        REFSYNC_IMPORTER_ADMIN_TOKEN: 'image-check-admin-token',
        REFSYNC_SOURCE_TREATMENT_GROUP: pathToFileURL(
          join(appDir, 'sample-data/v1/treatment-groups.json'),
        ).href,
        REFSYNC_SOURCE_REIMBURSEMENT_GROUP: pathToFileURL(
          join(appDir, 'sample-data/v1/reimbursement-groups.json'),
        ).href,
        REFSYNC_SCHEDULE: '0 0 1 1 *',
      };
  }
}
