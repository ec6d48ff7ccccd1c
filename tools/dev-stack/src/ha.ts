/**
 * `npm start -- --ha`: the highly available topology on one machine.
 * - NATS: NATS_URL, or a three-node JetStream cluster spawned here (routes between the nodes, each
 *   node's store in <DEV_DATA_DIR>/nats-ha/n1..n3), streams with three replicas.
 * - MongoDB: as plain `npm start` (MONGO_URL, or the project's MongoDB-compatible server: one
 *   process, no replica set).
 * - Two instances of each app: the first on the app's port, the second ten above it (3001 and
 *   3011, ...). privacy-api shares DPoP proofs' jtis in NATS (PRIVACY_DPOP_REPLAY_STORE=nats); the
 *   two importers share one lease in MongoDB, so only one of them syncs.
 * There is no load balancer: each instance answers on its own port. An instance that exits is
 * reported and the others go on; the stack stops when no instance of an app is left, or on Ctrl-C.
 */
import { type ChildProcess } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { removeDevStack, writeDevStack } from '@nhp/shared-config';
import { startNatsCluster, type NatsCluster } from '@nhp/shared-testing';
import {
  appLogLevelNote,
  apps,
  dataDir,
  portOf,
  privacyApiApp,
  devIssuerApp,
  startPrivacyIssuer,
  say,
  seedPrivacySampleData,
  spawnApp,
  startMongo,
  stopChild,
  tracingHint,
  waitHealthy,
  type AppSpec,
} from './common';

/** Instances of each app, and how far apart their ports are. */
const INSTANCES = 2;
const PORT_STEP = 10;

interface Instance {
  app: AppSpec;
  label: string;
  port: number;
  child: ChildProcess;
}

export async function startHaStack(startedInfra: Array<() => Promise<void>>): Promise<void> {
  let cluster: NatsCluster | undefined;
  let natsUrl = process.env['NATS_URL'];
  const natsStore = join(dataDir, 'nats-ha');
  if (!natsUrl) {
    await mkdir(natsStore, { recursive: true });
    // The cluster name and node names stay the same from run to run: the stores hold them.
    cluster = await startNatsCluster({ nodes: 3, storeDir: natsStore, clusterName: 'nhp-dev-ha' });
    startedInfra.push(() => (cluster ? cluster.dispose() : Promise.resolve()));
    natsUrl = cluster.url;
    say(`NATS JetStream cluster of 3 nodes (stores ${natsStore}/n1..n3) on ${natsUrl}`);
  } else {
    say('using NATS at NATS_URL');
  }
  const mongo = await startMongo(startedInfra);

  const common: Record<string, string> = {
    MONGO_URL: mongo.url,
    NATS_URL: natsUrl,
    NATS_STREAM_REPLICAS: process.env['NATS_STREAM_REPLICAS'] ?? '3',
  };
  const instances: Instance[] = [];
  let stopping = false;
  // Set once the issuer runs; stopAll, defined before, stops it.
  const issuer: { child?: ChildProcess } = {};
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    say('stopping…');
    await removeDevStack(dataDir);
    await Promise.all(instances.map((i) => stopChild(i.child, 15_000)));
    if (issuer.child) await stopChild(issuer.child, 15_000);
    await mongo.stop();
    await cluster?.dispose();
    say('stopped');
    process.exit(code);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(signal, () => void stopAll(0));
  }

  // The instances of privacy-api trust the development issuer as npm start's does.
  const privacyIssuer = await startPrivacyIssuer((code, signal) => {
    if (stopping) return;
    say(`${devIssuerApp.name} exited (${signal ?? code}); stopping the stack`);
    void stopAll(1);
  });
  issuer.child = privacyIssuer.child;
  const appEnv: Record<string, Record<string, string>> = {
    'privacy-api': { ...privacyIssuer.env, PRIVACY_DPOP_REPLAY_STORE: 'nats' },
  };

  const start = (app: AppSpec, n: number): Instance => {
    const port = portOf(app) + (n - 1) * PORT_STEP;
    const label = `${app.name}#${n}`;
    const child = spawnApp(app, port, label, { ...common, ...appEnv[app.name] });
    const instance = { app, label, port, child };
    child.once('exit', (code, signal) => {
      if (stopping) return;
      const left = instances.filter(
        (i) => i.app === app && i.child.exitCode === null && i.child.signalCode === null,
      );
      if (left.length > 0) {
        say(
          `${label} exited (${signal ?? code}); still running: ${left.map((i) => i.label).join(', ')}`,
        );
        return;
      }
      say(`${label} exited (${signal ?? code}), the last ${app.name}; stopping the stack`);
      void stopAll(1);
    });
    instances.push(instance);
    return instance;
  };
  const healthy = (i: Instance) =>
    waitHealthy(`http://127.0.0.1:${i.port}/health`, i.child, 90_000);

  // The first instance of each app alone first: it builds the indexes and the built-in data.
  const status = new Map<Instance, boolean>();
  for (const instance of apps.map((app) => start(app, 1))) {
    status.set(instance, await healthy(instance));
    if (instance.app.name === 'privacy-api' && status.get(instance)) {
      await seedPrivacySampleData(mongo.url);
    }
  }
  const more = apps.flatMap((app) =>
    Array.from({ length: INSTANCES - 1 }, (_, k) => start(app, k + 2)),
  );
  for (const instance of more) status.set(instance, await healthy(instance));

  const lines = apps.map((app) => {
    const mine = instances.filter((i) => i.app === app);
    const urls = mine.map((i) => `http://localhost:${i.port}`).join('  ');
    const state = mine.every((i) => status.get(i)) ? 'healthy' : 'NOT all healthy yet';
    const pids = mine.map((i) => i.child.pid).join(', ');
    return `  ${app.name.padEnd(17)} ${urls}  ${state} (pids ${pids})`;
  });
  const nats = cluster
    ? cluster.nodes.map(
        (n) =>
          `  NATS ${n.name}           ${n.url}  monitoring http://127.0.0.1:${n.monitorPort}  (pid ${n.pid})`,
      )
    : [`  NATS              ${natsUrl}`];
  const stackFile = await writeDevStack(dataDir, {
    mongoUrl: mongo.url,
    natsUrl,
    privacyApiUrl: `http://localhost:${portOf(privacyApiApp)}`,
    privacyAuthIssuer: privacyIssuer.env['PRIVACY_AUTH_ISSUER'],
  });
  say(
    [
      'highly available stack is up (Ctrl-C stops everything):',
      ...lines,
      ...(privacyIssuer.summaryLine ? [privacyIssuer.summaryLine] : []),
      `  MongoDB           ${mongo.url}  (one server: no replica set locally)`,
      ...nats,
      `  streams and the DPoP bucket have ${common['NATS_STREAM_REPLICAS']} replicas; no load balancer: each instance answers on its own port`,
      `  tools             npm run privacy-admin, privacy-mirror, privacy-token use this stack (${stackFile})`,
      tracingHint(),
      `  logs              the apps log at ${appLogLevelNote()}`,
    ].join('\n'),
  );
}
