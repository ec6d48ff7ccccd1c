import { createServer, type IncomingMessage, type Server } from 'node:http';
import net from 'node:net';
import {
  closeServer,
  jsonBodyReaderOutsideExpress,
  listen,
  serverPort,
  toClientError,
} from '../src';

/**
 * The reader a fast path uses before Express reads a plain JSON request (application/json, UTF-8,
 * a Content-Length) by hand and every other request with body-parser. Each case sends the same
 * bytes twice: once as a plain request (the hand-written reading) and once with a Content-Type
 * that only body-parser reads (`application/json; charset=UTF-8 ; x=1`, the same media type and
 * charset), and the two outcomes must be the same: the body, or the refusal the app answers.
 */
const LIMIT = 1024;

interface Seen {
  read: boolean;
  body: unknown;
  bodyOnRequest: unknown;
  refusal?: { code: string; status: number } | string;
}

describe('the JSON body reader outside Express', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    const read = jsonBodyReaderOutsideExpress(LIMIT);
    server = await listen(
      (req, res) => {
        void read(req, res).then((outcome) => {
          const refusal =
            outcome.refusal === undefined
              ? undefined
              : (() => {
                  const mapped = toClientError(outcome.refusal);
                  return mapped ? { code: mapped.code, status: mapped.status } : 'unmapped';
                })();
          const seen: Seen = {
            read: outcome.read,
            body: outcome.body,
            bodyOnRequest: (req as IncomingMessage & { body?: unknown }).body,
            ...(refusal === undefined ? {} : { refusal }),
          };
          res.setHeader('content-type', 'application/json');
          res.end(JSON.stringify(seen) ?? 'null');
        });
      },
      0,
      '127.0.0.1',
    );
    port = serverPort(server);
  });
  afterAll(() => closeServer(server, 0));

  async function send(contentType: string, body: Buffer): Promise<Seen> {
    const res = await fetch(`http://127.0.0.1:${port}/`, {
      method: 'POST',
      headers: { 'content-type': contentType },
      body,
    });
    return (await res.json()) as Seen;
  }

  const bodies: Array<[string, Buffer]> = [
    ['an object', Buffer.from('{"innbyggerFnr":"13116900216","aktiv":true}')],
    ['an array after whitespace', Buffer.from(' \r\n\t[1,2,{"a":null}]')],
    ['a byte order mark before the object', Buffer.from('\ufeff{"a":1}')],
    [
      'invalid UTF-8 inside a string',
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0x22, 0x7d]),
    ],
    ['a string, not an object', Buffer.from('"text"')],
    ['a number', Buffer.from('42')],
    ['broken JSON', Buffer.from('{"a":')],
    ['an unpaired surrogate escape', Buffer.from('{"partKode":"\\ud800"}')],
    ['text after the object', Buffer.from('{"a":1} x')],
    ['whitespace only', Buffer.from('   ')],
  ];

  it.each(bodies)(
    'when the body is %s, then the hand-written reading and body-parser agree',
    async (_name, body) => {
      const plain = await send('application/json', body);
      const viaBodyParser = await send('application/json; charset=UTF-8 ; x=1', body);
      expect(plain).toEqual(viaBodyParser);
      expect(plain.read).toBe(true);
    },
  );

  it('when a plain request says charset=utf-8, then it is read as one that says nothing', async () => {
    const body = Buffer.from('{"a":"æøå"}');
    expect(await send('Application/JSON; charset=utf-8', body)).toEqual(
      await send('application/json', body),
    );
    expect((await send('application/json', body)).body).toEqual({ a: 'æøå' });
  });

  it('when the body is over the limit, then body-parser refuses it as the app does (413)', async () => {
    const seen = await send('application/json', Buffer.from(`{"a":"${'x'.repeat(LIMIT)}"}`));
    expect(seen.refusal).toEqual({ code: 'PAYLOAD_TOO_LARGE', status: 413 });
  });

  it('when the client goes away in the middle of the body, then the reading ends (no request is left waiting)', async () => {
    const read = jsonBodyReaderOutsideExpress(LIMIT);
    let resolveOutcome: (outcome: unknown) => void = () => undefined;
    const outcome = new Promise<unknown>((resolve) => (resolveOutcome = resolve));
    // A bare node:http server: shared-http's `listen` answers a body cut short itself (its
    // 'clientError' listener ends the response), and Node then tells the request nothing more.
    const probe = createServer(
      (req, res) =>
        void read(req, res).then((o) => {
          resolveOutcome(o);
          res.destroy();
        }),
    );
    await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
    const socket = net.connect((probe.address() as net.AddressInfo).port, '127.0.0.1', () => {
      socket.write(
        'POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 20\r\n\r\n{"a":',
      );
      setTimeout(() => socket.destroy(), 50);
    });
    const result = (await outcome.finally(() => probe.close())) as {
      read: boolean;
      refusal?: unknown;
    };
    expect(result.read).toBe(true);
    expect(toClientError(result.refusal)).toMatchObject({ status: 400 });
  });
});
