// The TCP side: one FrameReader per connection, requests handled in arrival order, replies written
// back on the same socket. A protocol violation (bad length, checksum mismatch, unknown opcode)
// closes the connection, as mongod does.
import net from 'node:net';
import type { Logger } from 'pino';
import type { ServerInfo } from './commands/context';
import { CursorRegistry } from './cursors';
import { commandName, dispatch } from './dispatch';
import { MongoServerError } from './errors';
import type { Store } from './store';
import { isPlainObject, type Doc } from './values';
import { encodeMsg, encodeReply, FrameReader, parseFrame, ProtocolError } from './wire';

export interface WireServerOptions {
  store: Store;
  logger: Logger;
  host: string;
  /** The journal, when there is a data file (see DispatchDeps.durability). */
  durability?: { sync(): Promise<void> };
}

export class WireServer {
  readonly cursors = new CursorRegistry();
  private readonly sockets = new Set<net.Socket>();
  private readonly server: net.Server;
  private nextConnectionId = 1;
  private readonly startedAt = new Date();
  private port = 0;

  constructor(private readonly opts: WireServerOptions) {
    this.server = net.createServer((socket) => this.accept(socket));
  }

  async listen(port: number): Promise<number> {
    await new Promise<void>((resolve, reject) => {
      this.server.once('error', reject);
      this.server.listen(port, this.opts.host, () => {
        this.server.off('error', reject);
        resolve();
      });
    });
    this.port = (this.server.address() as net.AddressInfo).port;
    return this.port;
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const s of this.sockets) s.destroy();
    this.sockets.clear();
    this.cursors.clear();
    await closed;
  }

  private accept(socket: net.Socket): void {
    const connectionId = this.nextConnectionId++;
    const log = this.opts.logger.child({ connectionId });
    const info: ServerInfo = {
      connectionId,
      host: this.opts.host,
      port: this.port,
      startedAt: this.startedAt,
    };
    const reader = new FrameReader();
    this.sockets.add(socket);
    socket.setNoDelay(true);
    log.debug({ remote: `${socket.remoteAddress}:${socket.remotePort}` }, 'connection accepted');
    // Replies go out in request order; one that waits (a write acknowledged once durable) holds
    // back the replies after it until it is sent.
    let queue: Promise<void> | undefined;
    const send = (out: Buffer | undefined): void => {
      if (out && !socket.destroyed) socket.write(out);
    };
    socket.on('data', (chunk) => {
      try {
        for (const frame of reader.push(chunk)) {
          const out = this.handle(frame, info, log);
          if (!queue && !(out instanceof Promise)) {
            send(out);
            continue;
          }
          const next: Promise<void> = (queue ?? Promise.resolve())
            .then(() => out)
            .then(send)
            .catch((err: unknown) => {
              log.warn(
                { err: err instanceof Error ? err.message : String(err) },
                'reply failed; closing connection',
              );
              socket.destroy();
            })
            .finally(() => {
              if (queue === next) queue = undefined;
            });
          queue = next;
        }
      } catch (err) {
        log.warn(
          { err: err instanceof Error ? err.message : String(err) },
          'protocol error; closing connection',
        );
        socket.destroy();
      }
    });
    socket.on('error', (err) => log.debug({ err: err.message }, 'socket error'));
    socket.on('close', () => {
      this.sockets.delete(socket);
      log.debug('connection closed');
    });
  }

  private handle(
    frame: Buffer,
    info: ServerInfo,
    log: Logger,
  ): Buffer | undefined | Promise<Buffer | undefined> {
    const request = parseFrame(frame);
    const deps = {
      store: this.opts.store,
      cursors: this.cursors,
      logger: log,
      durability: this.opts.durability,
    };
    if (request.kind === 'query') {
      // Drivers only use OP_QUERY for the first hello/isMaster; MongoDB 8 refuses anything else.
      let query = request.query;
      if (isPlainObject(query['$query'])) query = query['$query'] as Doc;
      const name = commandName(query) ?? '';
      const db = request.ns.split('.')[0] ?? 'admin';
      let reply: Doc;
      if (request.ns.endsWith('.$cmd') && ['hello', 'isMaster', 'ismaster'].includes(name)) {
        const { $readPreference: _rp, ...rest } = query;
        // hello/isMaster are not writes: their reply is never deferred.
        reply = dispatch(deps, info, { ...rest, $db: db }) as Doc;
      } else {
        reply = new MongoServerError(
          'UnsupportedOpQueryCommand',
          `Unsupported OP_QUERY command: ${name}. The client driver may require an upgrade. For more details see https://dochub.mongodb.org/core/legacy-opcode-removal`,
        ).toReply();
      }
      return encodeReply(request.header.requestId, reply);
    }
    const reply = dispatch(deps, info, request.command);
    // With moreToCome (unacknowledged writes, w: 0) the client expects no reply.
    if (request.moreToCome) return undefined;
    const requestId = request.header.requestId;
    if (reply instanceof Promise) return reply.then((r) => encodeMsg(requestId, r));
    return encodeMsg(requestId, reply);
  }
}

export { ProtocolError };
