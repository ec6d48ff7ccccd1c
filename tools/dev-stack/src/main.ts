/**
 * `npm start`: the whole stack on one machine with embedded defaults.
 * - NATS: NATS_URL, or a nats-server spawned here (JetStream store in .data/nats).
 * - MongoDB: MONGO_URL, or the project's MongoDB-compatible server (data file in .data/mongo).
 * - The three apps, each as its own Node process (as in production), with readable logs.
 * - The development OpenID provider (tools/privacy-dev-issuer) on http://localhost:3004, which
 *   privacy-api trusts through its JWKS URL, unless PRIVACY_AUTH_ISSUER / PRIVACY_AUTH_JWKS_* are
 *   set. It signs with the development key (.data/), as `npm run privacy-token` does.
 * Ctrl-C (or SIGTERM) stops the apps first, then the infrastructure, and leaves no child behind.
 *
 * `npm start -- --ha`: the highly available topology instead (src/ha.ts).
 */
import { type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { startNatsServer, type NatsServerProcess } from '@nhp/shared-testing';
import {
  apps,
  dataDir,
  devIssuerApp,
  portOf,
  say,
  tracingHint,
  seedPrivacySampleData,
  spawnApp,
  startMongo,
  startPrivacyIssuer,
  stopChild,
  waitHealthy,
  type AppSpec,
} from './common';
import { startHaStack } from './ha';

const USAGE = 'usage: npm start [-- --ha]';

/** What main() has started so far, stopped in reverse if start-up fails half way. */
const startedInfra: Array<() => Promise<void>> = [];

async function main(): Promise<void> {
  await mkdir(join(dataDir, 'nats'), { recursive: true });

  let nats: NatsServerProcess | undefined;
  let natsUrl = process.env['NATS_URL'];
  if (!natsUrl) {
    nats = await startNatsServer({ storeDir: join(dataDir, 'nats') });
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
    await Promise.all([...children.values()].map((c) => stopChild(c, 15_000)));
    if (issuer.child) await stopChild(issuer.child, 15_000);
    await mongo.stop();
    await nats?.dispose();
    say('stopped');
    process.exit(code);
  };
  process.on('SIGINT', () => void stopAll(0));
  process.on('SIGTERM', () => void stopAll(0));

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
  say(
    `stack is up (Ctrl-C stops everything):\n${summary.join('\n')}\n  MongoDB           ${mongoUrl}\n  NATS              ${natsUrl}\n${tracingHint()}`,
  );
}

const args = process.argv.slice(2);
if (args.some((arg) => arg !== '--ha')) {
  process.stderr.write(`${USAGE}\n`);
  process.exit(2);
}

(args.includes('--ha') ? startHaStack(startedInfra) : main()).catch((err: unknown) => {
  process.stderr.write(
    `[dev-stack] failed to start: ${err instanceof Error ? err.message : String(err)}\n`,
  );
  void Promise.allSettled(startedInfra.reverse().map((stop) => stop())).then(() => process.exit(1));
});
