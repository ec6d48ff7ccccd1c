/**
 * A regression test for the MongoDB driver patch in patches/ (see patches/README.md): a heartbeat
 * written to a connection whose socket the server has just closed (destroyed, its 'close' event not
 * yet delivered) used to wait for a 'drain' that never comes, so the driver's server monitor
 * stopped for good and the app never saw the server again after a restart.
 */
import { MongoClient, type ServerHeartbeatFailedEvent } from 'mongodb';
import type { Socket } from 'node:net';
import { useTestInfra } from '@nhp/shared-testing';

const infra = useTestInfra();

/** The driver's monitor of the one server (internal, reached only to provoke the race). */
interface MonitorInternals {
  connection: { socket: Socket } | null;
  s: { state: string };
  requestCheck(): void;
}

function monitorOf(client: MongoClient): MonitorInternals {
  const topology = (client as unknown as { topology: { s: { servers: Map<string, unknown> } } })
    .topology;
  const server = [...topology.s.servers.values()][0] as { monitor: MonitorInternals };
  return server.monitor;
}

describe('the driver server monitor (patched)', () => {
  it('when the monitor checks over a socket that was destroyed before its close event, then the check fails and the monitor goes on', async () => {
    const client = new MongoClient(infra.get().mongoUri, {
      heartbeatFrequencyMS: 2000,
      minHeartbeatFrequencyMS: 50,
      serverMonitoringMode: 'poll',
    });
    try {
      await client.connect();
      const monitor = monitorOf(client);
      // Wait until the monitor holds its own connection (after its first heartbeat) and rests
      // between checks for longer than minHeartbeatFrequencyMS, so that a requested check runs
      // at once, in the same turn as the socket's destruction.
      const resting = async () => {
        await new Promise((r) => setTimeout(r, 200));
        return monitor.connection !== null && monitor.s.state === 'idle';
      };
      for (let i = 0; i < 50 && !(await resting()); i++);
      const connection = monitor.connection;
      expect(connection).not.toBeNull();

      const failed = new Promise<ServerHeartbeatFailedEvent>((resolve) =>
        client.once('serverHeartbeatFailed', resolve),
      );
      // What a server closing the connection does: the socket is destroyed, and in the same turn
      // (an operation failed on another connection) the monitor is asked to check at once.
      connection?.socket.destroy();
      monitor.requestCheck();
      expect(monitor.s.state).toBe('monitoring');

      const failure = await failed;
      expect(failure.failure.message).toMatch(/closed/);
      // The monitor goes on: its next heartbeat, over a new connection, succeeds.
      const succeeded = await new Promise<boolean>((resolve) =>
        client.once('serverHeartbeatSucceeded', () => resolve(true)),
      );
      expect(succeeded).toBe(true);
      await expect(client.db('admin').command({ ping: 1 })).resolves.toMatchObject({ ok: 1 });
    } finally {
      await client.close();
    }
  }, 30_000);
});
