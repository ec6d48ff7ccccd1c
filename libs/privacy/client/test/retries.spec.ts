/**
 * Retries against a real HTTP server on loopback that answers as privacy-api does when it is in
 * trouble (500 EPVK-100503) or refuses a request (400): reads and sets are sent again on a 5xx,
 * nothing is sent again on a 4xx, and a write that is not idempotent is never sent twice.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createPrivacyClient, PrivacyApiError } from '../src';

const DOWN = {
  code: 'EPVK-100503',
  message: 'database unreachable',
  errorCategory: 'EndpointIsDown',
};
const BAD = { code: 'EPVK-100400', message: 'bad', errorCategory: 'ClientValidationError' };

let server: Server;
let baseUrl: string;
let answers: Array<{ status: number; body: unknown }> = [];
let received: Array<{ method: string; url: string; authorization: string | undefined }> = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    received.push({
      method: req.method ?? '',
      url: req.url ?? '',
      authorization: req.headers.authorization,
    });
    req.resume();
    const answer = answers.shift() ?? { status: 500, body: DOWN };
    res.writeHead(answer.status, { 'content-type': 'application/json', 'x-request-id': 'req-1' });
    res.end(JSON.stringify(answer.body));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

beforeEach(() => {
  answers = [];
  received = [];
});

const client = () =>
  createPrivacyClient({
    baseUrl,
    auth: { accessToken: () => 'a-token' },
    retry: { retries: 3, minDelayMs: 1, maxDelayMs: 2 },
  });

describe('retries', () => {
  it('when a read answers 500 twice and then 200, then it is sent three times and resolves', async () => {
    answers = [
      { status: 500, body: DOWN },
      { status: 500, body: DOWN },
      { status: 200, body: { partKode: 'p', definisjoner: [] } },
    ];
    await expect(client().hentInnstillingDefinisjoner({ partKode: 'p' })).resolves.toEqual({
      partKode: 'p',
      definisjoner: [],
    });
    expect(received).toHaveLength(3);
    expect(received[0]?.authorization).toBe('Bearer a-token');
  });

  it('when a read answers 5xx every time, then it gives up after the retries with the last ErrorResponse', async () => {
    const err = await client()
      .hentInnstillingDefinisjoner({ partKode: 'p' })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(PrivacyApiError);
    expect(err).toMatchObject({
      code: 'EPVK-100503',
      errorCategory: 'EndpointIsDown',
      requestId: 'req-1',
    });
    expect(received).toHaveLength(4);
  });

  it('when a read answers 400, then it is not sent again', async () => {
    answers = [{ status: 400, body: BAD }];
    await expect(client().hentInnstillingDefinisjoner({ partKode: 'p' })).rejects.toMatchObject({
      code: 'EPVK-100400',
      httpStatus: 400,
    });
    expect(received).toHaveLength(1);
  });

  it('when a set answers 500, then it is sent again with the same tidspunkt (an exact repeat)', async () => {
    const bodies: unknown[] = [];
    const capturing: typeof fetch = async (input, init) => {
      bodies.push(JSON.parse(String(init?.body)));
      return fetch(input, init);
    };
    answers = [
      { status: 500, body: DOWN },
      { status: 200, body: { returKode: 'ok', instansEndret: 'endret' } },
    ];
    const c = createPrivacyClient({
      baseUrl,
      fetch: capturing,
      auth: { accessToken: () => 'a-token' },
      retry: { retries: 3, minDelayMs: 1, maxDelayMs: 2 },
    });
    await c.settInnbyggersPersonvernInnstilling({
      innbyggerFnr: '13116900216',
      definisjonGuid: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4eaa',
      partKode: 'p',
      aktiv: true,
    });
    expect(bodies).toHaveLength(2);
    expect((bodies[0] as { tidspunkt?: string }).tidspunkt).toBeDefined();
    expect(bodies[1]).toEqual(bodies[0]);
  });

  it('when an inclusion answers 500, then it is not sent again', async () => {
    await expect(
      client().settInnbyggersInkludering({
        innbyggerFnr: '13116900216',
        partKode: 'p',
        personvernInnstillingDefinisjonId: '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4eaa',
        inkluderingType: 'Inkludert',
        aktiv: true,
      }),
    ).rejects.toMatchObject({ code: 'EPVK-100503' });
    expect(received).toHaveLength(1);
  });

  it('when privacy-api cannot be reached, then a read fails as PRIVACY_CLIENT_UNREACHABLE after its retries', async () => {
    const unreachable = createPrivacyClient({
      baseUrl: 'http://127.0.0.1:1',
      auth: { accessToken: () => 'a-token' },
      retry: { retries: 1, minDelayMs: 1, maxDelayMs: 2 },
    });
    await expect(unreachable.hentInnstillingDefinisjoner({ partKode: 'p' })).rejects.toMatchObject({
      code: 'PRIVACY_CLIENT_UNREACHABLE',
      errorCategory: 'EndpointIsDown',
      transient: true,
    });
  });

  it('when an answer breaks the contract, then it fails as PRIVACY_CLIENT_PROTOCOL', async () => {
    answers = [{ status: 200, body: { partKode: 'p' } }];
    await expect(client().hentInnstillingDefinisjoner({ partKode: 'p' })).rejects.toMatchObject({
      code: 'PRIVACY_CLIENT_PROTOCOL',
    });
  });
});
