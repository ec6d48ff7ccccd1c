import { connect } from '@nats-io/transport-node';
import { startNatsServer } from '../src';

describe('startNatsServer', () => {
  it('when the server is killed and restarted, then it listens on the same port with the same store', async () => {
    const nats = await startNatsServer();
    try {
      const pid = nats.pid;
      expect(pid).toBeDefined();
      await nats.kill('SIGKILL');
      expect(nats.pid).toBeUndefined();
      await expect(
        connect({ servers: nats.url, reconnect: false, timeout: 500 }),
      ).rejects.toThrow();
      await nats.restart();
      expect(nats.pid).not.toBe(pid);
      const nc = await connect({ servers: nats.url });
      await nc.flush();
      await nc.close();
    } finally {
      await nats.dispose();
    }
  });
});
