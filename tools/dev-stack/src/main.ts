/**
 * `npm start`: the whole stack on one machine with embedded defaults.
 * - NATS: NATS_URL, or a nats-server spawned here (JetStream store in .data/nats).
 * - MongoDB: MONGO_URL, or the project's MongoDB-compatible server (data file in .data/mongo).
 * - The three apps, each as its own Node process (as in production), with readable logs.
 * - The development OpenID provider (tools/privacy-dev-issuer) on http://localhost:3004, which
 *   privacy-api trusts through its JWKS URL, unless PRIVACY_AUTH_ISSUER / PRIVACY_AUTH_JWKS_* are
 *   set. It signs with the development key (.data/), as `npm run privacy-token` does.
 * Ctrl-C (or SIGTERM, SIGHUP) stops the apps first, then the infrastructure, and leaves no child
 * behind.
 *
 * The apps log at `warn` (`--verbose`: `info`), and the summary comes last. Once the stack is up,
 * `<DEV_DATA_DIR>/dev-stack.json` says where its MongoDB, NATS and privacy-api are, so the
 * operators' tools (privacy-admin, privacy-mirror, privacy-token) find them without the user
 * copying URLs (libs/shared/config, dev-stack-file.ts); it is removed on stop.
 *
 * `npm start -- --ha`: the highly available topology instead (src/ha.ts).
 */
import { type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDevStack, writeDevStack } from '@nhp/shared-config';
import { startNatsServer, type NatsServerProcess } from '@nhp/shared-testing';
import {
  appLogLevelNote,
  apps,
  dataDir,
  devIssuerApp,
  portOf,
  privacyApiApp,
  say,
  tracingHint,
  seedPrivacySampleData,
  spawnApp,
  stackOptions,
  startMongo,
  startPrivacyIssuer,
  stopChild,
  waitHealthy,
  type AppSpec,
} from './common';
import { startHaStack } from './ha';

const USAGE = `usage: npm start [-- [--ha] [--verbose]]
  --ha        the highly available topology (README, "Running highly available")
  --verbose   the apps log at info (default warn; LOG_LEVEL, when set, wins)`;

/** What main() has started so far, stopped in reverse if start-up fails half way. */
const startedInfra: Array<() => Promise<void>> = [];

async function main(): Promise<void> {
  await mkdir(join(dataDir, 'nats'), { recursive: true });

  let nats: NatsServerProcess | undefined;
  let natsUrl = process.env['NATS_URL'];
  if (!natsUrl) {
    nats = await startNatsServer({ storeDir: join(dataDir, 'nats'), detached: true });
    startedInfra.push(() => (nats ? nats.dispose() : Promise.resolve()));
    natsUrl = nats.url;
    say(`nats-server (JetStream, store ${join(dataDir, 'nats')}) on ${natsUrl}`);
  } else {
    say(`using NATS at NATS_URL`);
  }

  const mongo = await startMongo(startedInfra);
  const mongoUrl = mongo.url;

  const children = new Map<string, ChildProcess>();
  // Set once the issuer runs; stopAll, defined before, stops it.
  const issuer: { child?: ChildProcess } = {};
  let stopping = false;

  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    await removeDevStack(dataDir);
    await Promise.all([...children.values()].map((c) => stopChild(c, 15_000)));
    if (issuer.child) await stopChild(issuer.child, 15_000);
    await mongo.stop();
    await nats?.dispose();
    say('stopped');
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => void stopAll(0));
  }

  const privacyIssuer = await startPrivacyIssuer((code, signal) => {
    if (stopping) return;
    say(`${devIssuerApp.name} exited (${signal ?? code}); stopping the stack`);
    void stopAll(1);
  });
  issuer.child = privacyIssuer.child;
  const appEnv: Record<string, Record<string, string>> = { 'privacy-api': privacyIssuer.env };

  for (const app of apps) {
    const child = spawnApp(app, portOf(app), app.name, {
      MONGO_URL: mongoUrl,
      NATS_URL: natsUrl,
      ...appEnv[app.name],
    });
    child.once('exit', (code, signal) => {
      if (stopping) return;
      say(`${app.name} exited (${signal ?? code}); stopping the stack`);
      void stopAll(1);
    });
    children.set(app.name, child);
  }

  const summary: string[] = [];
  for (const [name, child] of children) {
    const app = apps.find((a) => a.name === name) as AppSpec;
    const port = portOf(app);
    const healthy = await waitHealthy(`http://127.0.0.1:${port}/health`, child, 90_000);
    summary.push(
      `  ${app.name.padEnd(17)} http://localhost:${port}  ${healthy ? 'healthy' : 'NOT healthy yet'}`,
    );
    // privacy-api has created its built-in data: add the sample data (idempotent, dev only).
    if (name === 'privacy-api' && healthy) await seedPrivacySampleData(mongoUrl);
  }
  if (privacyIssuer.summaryLine) summary.push(privacyIssuer.summaryLine);
  const stackFile = await writeDevStack(dataDir, {
    mongoUrl,
    natsUrl,
    privacyApiUrl: `http://localhost:${portOf(privacyApiApp)}`,
    privacyAuthIssuer: privacyIssuer.env['PRIVACY_AUTH_ISSUER'],
  });
  say(
    [
      'stack is up (Ctrl-C stops everything):',
      ...summary,
      `  MongoDB           ${mongoUrl}`,
      `  NATS              ${natsUrl}`,
      `  tools             npm run privacy-admin, privacy-mirror, privacy-token use this stack (${stackFile})`,
      tracingHint(),
      `  logs              the apps log at ${appLogLevelNote()}`,
    ].join('\n'),
  );
}

const args = process.argv.slice(2);
if (args.some((arg) => arg !== '--ha' && arg !== '--verbose')) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}
stackOptions.verbose = args.includes('--verbose');

(args.includes('--ha') ? startHaStack(startedInfra) : main()).catch((err: unknown) => {
  process.stderr.write(
    `[dev-stack] failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  void Promise.allSettled(startedInfra.reverse().map((stop) => stop())).then(() => process.exit(1));
});
