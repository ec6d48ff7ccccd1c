import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { createConnection } from 'node:net';
import { jetstream, StorageType } from '@nats-io/jetstream';
import { connect } from '@nats-io/transport-node';
import { startNatsCluster, type NatsCluster, type NatsClusterNode } from '../src';

function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

describe('a NATS JetStream cluster of three processes', () => {
  let cluster: NatsCluster;
  afterEach(async () => {
    await cluster?.dispose();
  });

  it('when it starts, then JetStream has a meta leader, NATS_URL lists every node, a stream gets three replicas, one per node, and its leadership can be moved', async () => {
    cluster = await startNatsCluster({ nodes: 3 });
    expect(cluster.url.split(',')).toEqual(cluster.nodes.map((n) => n.url));
    expect(new Set(cluster.nodes.map((n) => n.storeDir)).size).toBe(3);
    expect(cluster.nodes).toContain(await cluster.waitForMetaLeader());

    const jsm = await cluster.jsm();
    await jsm.streams.add({
      name: 'CLUSTER_TEST',
      subjects: ['cluster-test.>'],
      storage: StorageType.File,
      num_replicas: 3,
    });
    const leader = await cluster.waitForStreamLeader('CLUSTER_TEST');
    const info = await jsm.streams.info('CLUSTER_TEST');
    expect(
      [info.cluster?.leader, ...(info.cluster?.replicas ?? []).map((r) => r.name)].sort(),
    ).toEqual(['n1', 'n2', 'n3']);
    expect(cluster.node(info.cluster?.leader ?? '')).toBe(leader);

    const other = cluster.nodes.find((n) => n !== leader) as NatsClusterNode;
    await cluster.moveStreamLeader('CLUSTER_TEST', other);
    expect(await cluster.streamLeader('CLUSTER_TEST')).toBe(other);
  });

  it('when a node that does not lead the stream is killed, then publishing goes on, and once it is restarted on the same ports and store it holds every message again', async () => {
    cluster = await startNatsCluster();
    const jsm = await cluster.jsm();
    await jsm.streams.add({
      name: 'CLUSTER_TEST',
      subjects: ['cluster-test.>'],
      storage: StorageType.File,
      num_replicas: 3,
    });
    const leader = await cluster.waitForStreamLeader('CLUSTER_TEST');
    const follower = cluster.nodes.find((n) => n !== leader);
    if (!follower) throw new Error('no follower');
    const nc = await connect({ servers: cluster.url });
    try {
      const js = jetstream(nc);
      await js.publish('cluster-test.a', 'before', { msgID: 'one' });
      const { port, clusterPort, monitorPort } = follower;

      await follower.kill('SIGKILL');
      expect(follower.running).toBe(false);
      expect(await portOpen(port)).toBe(false);
      await js.publish('cluster-test.a', 'while one node is down', { msgID: 'two' });
      expect((await js.publish('cluster-test.a', 'again', { msgID: 'two' })).duplicate).toBe(true);

      await follower.restart();
      expect([follower.port, follower.clusterPort, follower.monitorPort]).toEqual([
        port,
        clusterPort,
        monitorPort,
      ]);
      await cluster.waitForConverged(['CLUSTER_TEST'], 30_000);
      const own = (await follower.jsz({ streams: true })).account_details
        ?.flatMap((a) => a.stream_detail ?? [])
        .find((s) => s.name === 'CLUSTER_TEST');
      expect(own?.state.messages).toBe(2);
    } finally {
      await nc.close();
    }
  }, 60_000);

  it('when it is disposed, then no node listens any more and the temporary store is gone', async () => {
    cluster = await startNatsCluster();
    const ports = cluster.nodes.flatMap((n) => [n.port, n.clusterPort, n.monitorPort]);
    const root = dirname(cluster.nodes[0]?.storeDir ?? '');
    expect(existsSync(root)).toBe(true);
    await cluster.dispose();
    expect(existsSync(root)).toBe(false);
    for (const port of ports) expect(await portOpen(port)).toBe(false);
    expect(cluster.nodes.every((n) => !n.running)).toBe(true);
  });
});
