import { createServer } from 'node:net';

/**
 * A loopback port that was free a moment ago, for a child process that must be told its port up
 * front. Prefer port 0 where the listener is in-process; this has a small window for a race.
 */
export function freePort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => done(port));
    });
  });
}
