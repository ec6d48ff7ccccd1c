// The wire protocol at byte level, where the driver cannot be used to provoke the cases. Expected
// behaviour from the MongoDB manual, "MongoDB Wire Protocol":
// https://www.mongodb.com/docs/manual/reference/mongodb-wire-protocol/
// (OP_MSG flagBits: checksumPresent = bit 0, moreToCome = bit 1; the checksum is CRC-32C over the
// message; section kind 0 = body, kind 1 = document sequence; OP_QUERY/OP_REPLY for the legacy handshake;
// maxMessageSizeBytes from hello bounds a message.)
import net from 'node:net';
import { deserialize, serialize, type Document } from 'bson';
import pino from 'pino';
import { crc32c } from '../src/crc32c';
import { start, type RunningMongoServer } from '../src/index';

const OP_REPLY = 1;
const OP_QUERY = 2004;
const OP_MSG = 2013;

function header(length: number, requestId: number, opCode: number): Buffer {
  const h = Buffer.alloc(16);
  h.writeInt32LE(length, 0);
  h.writeInt32LE(requestId, 4);
  h.writeInt32LE(0, 8);
  h.writeInt32LE(opCode, 12);
  return h;
}

function opMsg(
  requestId: number,
  body: Document,
  opts: { flags?: number; sequence?: [string, Document[]]; checksum?: 'good' | 'bad' } = {},
): Buffer {
  const parts: Buffer[] = [Buffer.from([0]), Buffer.from(serialize(body))];
  if (opts.sequence) {
    const [id, docs] = opts.sequence;
    const payload = Buffer.concat([
      Buffer.from(`${id}\0`),
      ...docs.map((d) => Buffer.from(serialize(d))),
    ]);
    const size = Buffer.alloc(4);
    size.writeInt32LE(4 + payload.length, 0);
    parts.push(Buffer.from([1]), size, payload);
  }
  let flags = opts.flags ?? 0;
  if (opts.checksum) flags |= 1;
  const flagBuf = Buffer.alloc(4);
  flagBuf.writeUInt32LE(flags, 0);
  const bodyLen = 16 + 4 + parts.reduce((n, p) => n + p.length, 0) + (opts.checksum ? 4 : 0);
  const msg = Buffer.concat([header(bodyLen, requestId, OP_MSG), flagBuf, ...parts]);
  if (!opts.checksum) return msg;
  const crc = Buffer.alloc(4);
  crc.writeUInt32LE(opts.checksum === 'good' ? crc32c(msg) : (crc32c(msg) ^ 1) >>> 0, 0);
  return Buffer.concat([msg, crc]);
}

function opQuery(requestId: number, ns: string, query: Document): Buffer {
  const body = Buffer.concat([
    Buffer.alloc(4),
    Buffer.from(`${ns}\0`),
    Buffer.from([0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff]),
    Buffer.from(serialize(query)),
  ]);
  return Buffer.concat([header(16 + body.length, requestId, OP_QUERY), body]);
}

class RawClient {
  private buf = Buffer.alloc(0);
  private waiters: Array<() => void> = [];
  closed = false;
  constructor(readonly socket: net.Socket) {
    socket.on('data', (d) => {
      this.buf = Buffer.concat([this.buf, d]);
      this.waiters.splice(0).forEach((w) => w());
    });
    socket.on('close', () => {
      this.closed = true;
      this.waiters.splice(0).forEach((w) => w());
    });
  }
  static connect(port: number): Promise<RawClient> {
    return new Promise((resolve, reject) => {
      const s = net.connect(port, '127.0.0.1', () => resolve(new RawClient(s)));
      s.once('error', reject);
    });
  }
  async reply(): Promise<{ opCode: number; responseTo: number; doc: Document }> {
    for (;;) {
      if (this.buf.length >= 4 && this.buf.length >= this.buf.readInt32LE(0)) {
        const len = this.buf.readInt32LE(0);
        const frame = this.buf.subarray(0, len);
        this.buf = this.buf.subarray(len);
        const opCode = frame.readInt32LE(12);
        const responseTo = frame.readInt32LE(8);
        const docAt = opCode === OP_REPLY ? 36 : 21;
        return { opCode, responseTo, doc: deserialize(frame.subarray(docAt)) };
      }
      if (this.closed) throw new Error('connection closed');
      await new Promise<void>((r) => this.waiters.push(r));
    }
  }
  async waitClosed(): Promise<boolean> {
    while (!this.closed) await new Promise<void>((r) => this.waiters.push(r));
    return true;
  }
}

describe('wire protocol', () => {
  let server: RunningMongoServer;
  let client: RawClient;
  beforeEach(async () => {
    // Protocol violations are logged at warn; keep the test output quiet.
    server = await start({ port: 0, logger: pino({ level: 'silent' }) });
    client = await RawClient.connect(server.port);
  });
  afterEach(async () => {
    client.socket.destroy();
    await server.stop();
  });

  it('when CRC-32C is computed, then it gives the standard check value', () => {
    expect(crc32c(Buffer.from('123456789'))).toBe(0xe3069283);
  });

  it('when CRC-32C is computed eight bytes a step, then it equals the byte-at-a-time definition for any range and any split', () => {
    // The definition (RFC 3720 B.4's reflected polynomial 0x82F63B78), one bit at a time.
    const bitwise = (bytes: Uint8Array, start: number, end: number, previous = 0): number => {
      let crc = ~previous >>> 0;
      for (let i = start; i < end; i++) {
        crc ^= bytes[i] as number;
        for (let k = 0; k < 8; k++) crc = crc & 1 ? (0x82f63b78 ^ (crc >>> 1)) >>> 0 : crc >>> 1;
      }
      return ~crc >>> 0;
    };
    const bytes = Buffer.alloc(1000);
    let seed = 7;
    for (let i = 0; i < bytes.length; i++)
      bytes[i] = (seed = (seed * 1103515245 + 12345) >>> 0) >>> 24;
    for (const [start, end] of [
      [0, 0],
      [0, 1],
      [3, 10],
      [1, 17],
      [5, 999],
      [0, 1000],
    ] as const) {
      expect(crc32c(bytes, start, end)).toBe(bitwise(bytes, start, end));
      const mid = start + Math.floor((end - start) / 3);
      expect(crc32c(bytes, mid, end, crc32c(bytes, start, mid))).toBe(bitwise(bytes, start, end));
    }
  });

  it('when the legacy OP_QUERY isMaster arrives, then an OP_REPLY answers it without topologyVersion', async () => {
    client.socket.write(
      opQuery(7, 'admin.$cmd', { isMaster: 1, helloOk: true, client: { driver: { name: 'raw' } } }),
    );
    const reply = await client.reply();
    expect(reply.opCode).toBe(OP_REPLY);
    expect(reply.responseTo).toBe(7);
    expect(reply.doc).toMatchObject({ ismaster: true, helloOk: true, ok: 1 });
    expect(reply.doc['topologyVersion']).toBeUndefined();
  });

  it('when OP_QUERY carries any other command, then it is refused with UnsupportedOpQueryCommand (352)', async () => {
    client.socket.write(opQuery(8, 'test.$cmd', { find: 'c' }));
    const reply = await client.reply();
    expect(reply.doc).toMatchObject({ ok: 0, code: 352 });
  });

  it('when OP_MSG carries a valid checksum, then the command runs; a wrong checksum closes the connection', async () => {
    client.socket.write(opMsg(9, { ping: 1, $db: 'admin' }, { checksum: 'good' }));
    const reply = await client.reply();
    expect(reply).toMatchObject({ opCode: OP_MSG, responseTo: 9, doc: { ok: 1 } });
    client.socket.write(opMsg(10, { ping: 1, $db: 'admin' }, { checksum: 'bad' }));
    expect(await client.waitClosed()).toBe(true);
  });

  it('when a document sequence (kind 1) carries the documents, then insert uses them', async () => {
    client.socket.write(
      opMsg(11, { insert: 'seq', $db: 'test' }, { sequence: ['documents', [{ a: 1 }, { a: 2 }]] }),
    );
    expect((await client.reply()).doc).toMatchObject({ n: 2, ok: 1 });
    client.socket.write(opMsg(12, { count: 'seq', $db: 'test' }));
    expect((await client.reply()).doc).toMatchObject({ n: 2, ok: 1 });
  });

  it('when a document over 16 MiB arrives, then the insert reports a write error and stores nothing', async () => {
    const big = { s: 'x'.repeat(16 * 1024 * 1024 + 10) };
    client.socket.write(
      opMsg(13, { insert: 'big', $db: 'test' }, { sequence: ['documents', [big]] }),
    );
    const reply = (await client.reply()).doc;
    expect(reply['n']).toBe(0);
    expect(reply['writeErrors'][0]).toMatchObject({ index: 0, code: 2 });
    expect(reply['writeErrors'][0].errmsg).toContain('object to insert too large');
  });

  it('when moreToCome is set (w: 0), then no reply is sent and the next request is answered', async () => {
    client.socket.write(
      opMsg(
        14,
        { insert: 'quiet', documents: [{ a: 1 }], writeConcern: { w: 0 }, $db: 'test' },
        { flags: 2 },
      ),
    );
    client.socket.write(opMsg(15, { count: 'quiet', $db: 'test' }));
    const reply = await client.reply();
    expect(reply.responseTo).toBe(15);
    expect(reply.doc).toMatchObject({ n: 1 });
  });

  it('when a message declares a length over maxMessageSizeBytes, then the connection is closed', async () => {
    const h = header(48_000_001, 16, OP_MSG);
    client.socket.write(h);
    expect(await client.waitClosed()).toBe(true);
  });

  it('when OP_MSG has no $db, then the command fails with 40571', async () => {
    client.socket.write(opMsg(17, { ping: 1 }));
    expect((await client.reply()).doc).toMatchObject({ ok: 0, code: 40571 });
  });
});
