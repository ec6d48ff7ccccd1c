import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import { brotliCompressSync, deflateSync, gzipSync } from 'node:zlib';
import type { Definition } from '@nhp/privacy-domain';
import { newDpopKey, syntheticFnr, type DpopKey } from '@nhp/privacy-testing';
import { closeServer, listen, serverPort } from '@nhp/shared-http';
import request, { type Response } from 'supertest';
import { createPrivacyApp, type PrivacyApp } from '../src/app';
import { PATHS } from './settings-fixtures';
import { LogCapture, TEST_CLIENT, TEMPLATES, usePrivacyHarness } from './support/harness';

/**
 * The status check's fast path (src/http/status-fast-path.ts) must answer exactly as the Express
 * route does. Each case sends the same request twice to one server: once through the fast path,
 * once straight to the Express app behind it, and compares status, headers and body bytes; the
 * fast path's counters tell which requests it answered itself.
 */
const BASE_PATH = '/personvern';
const NOW = new Date('2026-03-01T12:00:00.000Z');
const log = new LogCapture('info');
const h = usePrivacyHarness({
  options: { basePath: BASE_PATH },
  clock: () => NOW,
  logger: log.logger,
});

let app: PrivacyApp;
let server: Server;
let origin: string;
let via: 'fast' | 'express' = 'fast';

beforeAll(async () => {
  const { context, health, auth } = h.get();
  app = createPrivacyApp({ context, health, auth });
  server = await listen(
    (req, res) => (via === 'fast' ? app(req, res) : app.express(req, res)),
    0,
    '127.0.0.1',
    { errorsFrom: app.express },
  );
  origin = `http://127.0.0.1:${serverPort(server)}`;
});

afterAll(async () => {
  await closeServer(server, 1000);
});

let fnrSeq = 7000;
const nextFnr = () => syntheticFnr(fnrSeq++);
let requestSeq = 0;

interface Case {
  path?: string;
  /** A Buffer is sent as it is (a compressed body, with its Content-Encoding in `headers`). */
  body?: string | object | Buffer;
  contentType?: string;
  headers?: Record<string, string>;
  /** Bearer (default), a DPoP key (a fresh proof per request), or no Authorization at all. */
  auth?: { bearer: string } | { dpop: DpopKey; token: string } | 'none';
}

async function send(c: Case, requestId: string): Promise<Response> {
  const path = c.path ?? PATHS.status;
  const req = request(origin).post(path).set('X-Request-Id', requestId);
  const auth = c.auth ?? { bearer: await h.get().token({ scopes: ['read'] }) };
  if (auth !== 'none' && 'bearer' in auth) req.set('Authorization', `Bearer ${auth.bearer}`);
  if (auth !== 'none' && 'dpop' in auth) {
    const proof = await h.get().issuer.dpopProof({
      key: auth.dpop,
      method: 'POST',
      url: `${origin}${path}`,
      accessToken: auth.token,
    });
    req.set('Authorization', `DPoP ${auth.token}`).set('DPoP', proof);
  }
  for (const [name, value] of Object.entries(c.headers ?? {})) req.set(name, value);
  req.set('Content-Type', c.contentType ?? 'application/json');
  const body = c.body ?? {};
  if (Buffer.isBuffer(body)) {
    const bytes = body as unknown as string;
    return req.serialize(() => bytes).send(bytes);
  }
  return req.send(typeof body === 'string' ? body : JSON.stringify(body));
}

/** What a client sees of an answer: status, headers (but the connection's and the date), bytes. */
function answerOf(res: Response) {
  const headers: Record<string, unknown> = { ...res.headers };
  delete headers['date'];
  delete headers['connection'];
  delete headers['keep-alive'];
  return { status: res.status, headers, body: res.text };
}

/** Sends the case through the fast path and through Express; both answers, and the fast path's counts. */
async function both(c: Case) {
  const id = `fast-path-${++requestSeq}`;
  const before = app.fastPathStats();
  via = 'fast';
  const fast = await send(c, id);
  const after = app.fastPathStats();
  via = 'express';
  const express = await send(c, id);
  via = 'fast';
  expect(answerOf(fast)).toEqual(answerOf(express));
  return {
    fast,
    answered: after.answered - before.answered,
    handedOver: after.handedOver - before.handedOver,
  };
}

async function seeded(): Promise<Definition> {
  const definition = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
  await h.get().grant(TEST_CLIENT, definition.partKode);
  return definition;
}

const statusBody = (definition: Definition, fnr: string, extra: Record<string, unknown> = {}) => ({
  innbyggerFnr: fnr,
  definisjonGuid: definition.definisjonGuid,
  partKode: definition.partKode,
  ...extra,
});

async function withSetting(): Promise<{ definition: Definition; fnr: string }> {
  const definition = await seeded();
  const fnr = nextFnr();
  const set = await request(h.get().app)
    .post(PATHS.set)
    .set('Authorization', `Bearer ${await h.get().token()}`)
    .send({ ...statusBody(definition, fnr), typePi: definition.typePi, aktiv: true });
  expect(set.status).toBe(200);
  return { definition, fnr };
}

describe('the status check fast path', () => {
  it('when a valid Bearer request asks for a stored setting, then the fast path answers it exactly as Express does', async () => {
    const { definition, fnr } = await withSetting();
    const { fast, answered } = await both({ body: statusBody(definition, fnr) });
    expect(answered).toBe(1);
    expect(fast.status).toBe(200);
    expect(fast.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(fast.headers['x-request-id']).toMatch(/^fast-path-/);
    expect(fast.body).toMatchObject({ definisjonGuid: definition.definisjonGuid, aktiv: true });
  });

  it('when a setting was never made, then the fast path answers the default as Express does', async () => {
    const definition = await seeded();
    const { fast, answered } = await both({ body: statusBody(definition, nextFnr()) });
    expect(answered).toBe(1);
    expect(fast.status).toBe(200);
  });

  it('when a valid DPoP-bound request comes, then the fast path answers it, and its proof cannot be replayed', async () => {
    const { definition, fnr } = await withSetting();
    const key = await newDpopKey();
    const token = await h.get().token({ scopes: ['read'], dpopKey: key });
    const { fast, answered } = await both({
      body: statusBody(definition, fnr),
      auth: { dpop: key, token },
    });
    expect(answered).toBe(1);
    expect(fast.status).toBe(200);

    const path = PATHS.status;
    const proof = await h.get().issuer.dpopProof({
      key,
      method: 'POST',
      url: `${origin}${path}`,
      accessToken: token,
    });
    const once = () =>
      request(origin)
        .post(path)
        .set('Authorization', `DPoP ${token}`)
        .set('DPoP', proof)
        .send(statusBody(definition, fnr));
    expect((await once()).status).toBe(200);
    const replayed = await once();
    expect(replayed.status).toBe(401);
  });

  it('when a DPoP-bound request fails in the use case, then Express answers it without checking the proof again', async () => {
    const definition = await seeded();
    const key = await newDpopKey();
    const token = await h.get().token({ scopes: ['read'], dpopKey: key });
    const { fast, handedOver } = await both({
      body: statusBody(definition, '12345678901'),
      auth: { dpop: key, token },
    });
    expect(handedOver).toBe(1);
    expect(fast.status).toBe(400);
  });

  it('when the use case fails in the fast path, then Express answers that error without running the use case again', async () => {
    const definition = await seeded();
    const settings = h.get().context.useCases.settings;
    const original = settings.checkStatus;
    let runs = 0;
    // The use case as the app has it, counted (the database and the driver stay real).
    settings.checkStatus = (...args) => {
      runs++;
      return original(...args);
    };
    try {
      // A definition that does not exist: the use case's own refusal, after the body and scope
      // passed.
      const missing = { ...statusBody(definition, nextFnr()), definisjonGuid: randomUUID() };
      // `both` also checks that the answer is the one Express gives straight.
      const { fast, handedOver } = await both({ body: missing });
      expect(handedOver).toBe(1);
      expect(fast.status).toBe(400);
      expect(fast.body).toMatchObject({ code: 'EPVK-101500' });
      // Once through the fast path (handed over, not run again), once straight to Express.
      expect(runs).toBe(2);
    } finally {
      settings.checkStatus = original;
    }
  });

  it('when the path is in PascalCase or under the base path, then the fast path answers it as Express does', async () => {
    const { definition, fnr } = await withSetting();
    const pascal = await both({
      path: '/Personverninnstillinger/SjekkInnbyggersPiStatus/v2',
      body: statusBody(definition, fnr),
    });
    expect(pascal.answered).toBe(1);
    expect(pascal.fast.status).toBe(200);
    const based = await both({
      path: `${BASE_PATH}${PATHS.status}`,
      body: statusBody(definition, fnr),
    });
    expect(based.answered).toBe(1);
    expect(based.fast.status).toBe(200);
    const slash = await both({ path: `${PATHS.status}/`, body: statusBody(definition, fnr) });
    expect(slash.answered).toBe(1);
  });

  it('when the body has a charset or a +json type, then the fast path answers it as Express does', async () => {
    const { definition, fnr } = await withSetting();
    for (const contentType of [
      'application/json; charset=UTF-8',
      'application/problem+json',
      'text/json',
    ]) {
      const { fast, answered } = await both({ body: statusBody(definition, fnr), contentType });
      expect(answered).toBe(1);
      expect(fast.status).toBe(200);
    }
  });

  it('when the request carries X-hn-isdebug, then it goes to Express untouched', async () => {
    const definition = await seeded();
    for (const value of ['true', 'false', 'perhaps']) {
      const { answered, handedOver } = await both({
        body: statusBody(definition, nextFnr()),
        headers: { 'X-hn-isdebug': value },
      });
      expect(answered + handedOver).toBe(0);
    }
  });

  it('when the body breaks the contract, the number or the rules, then the answer is the route’s refusal', async () => {
    const definition = await seeded();
    const unknownProperty = await both({ body: statusBody(definition, nextFnr(), { extra: 1 }) });
    expect(unknownProperty.fast.status).toBe(400);
    expect(unknownProperty.handedOver).toBe(1);

    const badFnr = await both({ body: statusBody(definition, '12345678901') });
    expect(badFnr.fast.status).toBe(400);
    expect(badFnr.handedOver).toBe(1);

    const unknownDefinition = await both({
      body: {
        ...statusBody(definition, nextFnr()),
        definisjonGuid: '0f0f0f0f-0000-4000-8000-000000000000',
      },
    });
    expect(unknownDefinition.fast.status).toBeGreaterThanOrEqual(400);
    expect(unknownDefinition.handedOver).toBe(1);

    const notAnArray = await both({ body: '[1]' });
    expect(notAnArray.fast.status).toBe(400);
  });

  it('when the client has no grant on the party, or no read scope, then the answer is the route’s refusal', async () => {
    const definition = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
    const noGrant = await both({ body: statusBody(definition, nextFnr()) });
    expect(noGrant.fast.status).toBeGreaterThanOrEqual(400);
    expect(noGrant.handedOver).toBe(1);

    const writeOnly = await h.get().token({ scopes: ['write'] });
    const noScope = await both({
      body: statusBody(await seeded(), nextFnr()),
      auth: { bearer: writeOnly },
    });
    expect(noScope.fast.status).toBe(401);
    expect(noScope.handedOver).toBe(1);
  });

  it('when a citizen’s token asks for the citizen or a represented child, then the fast path answers; for anyone else, the refusal is the route’s', async () => {
    const { definition, fnr: stranger } = await withSetting();
    const [citizen, child] = [nextFnr(), nextFnr()];
    await h.get().context.representation.replaceRelationships(
      new Map([
        [
          citizen,
          [
            {
              annenFnr: child,
              eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
              fornavn: 'Emma',
              mellomnavn: null,
              etternavn: 'Nordmann',
              representasjonsforholdType: 'foreldre',
              annenAdresse: false,
            },
          ],
        ],
      ]),
      { importId: 'test', at: NOW, actorId: 'test' },
    );
    const key = await newDpopKey();
    const bearer = await h.get().token({ scopes: ['read'], pid: citizen });
    const dpop = await h.get().token({ scopes: ['read'], pid: citizen, dpopKey: key });
    for (const auth of [{ bearer }, { dpop: key, token: dpop }]) {
      for (const fnr of [citizen, child]) {
        const allowed = await both({ body: statusBody(definition, fnr), auth });
        expect(allowed.answered).toBe(1);
        expect(allowed.fast.status).toBe(200);
      }
      const refused = await both({ body: statusBody(definition, stranger), auth });
      expect(refused.handedOver).toBe(1);
      expect(refused.fast.status).toBe(401);
      expect(refused.fast.body).toEqual({
        code: 'EPVK-100403',
        message: expect.any(String),
        errorCategory: 'ClientValidationError',
      });
      expect(refused.fast.headers['www-authenticate']).toContain('insufficient_scope');
    }
  });

  it('when the token is missing or invalid, then Express checks it and answers the refusal', async () => {
    const definition = await seeded();
    const missing = await both({ body: statusBody(definition, nextFnr()), auth: 'none' });
    expect(missing.fast.status).toBe(401);
    expect(missing.fast.headers['www-authenticate']).toBeDefined();
    const invalid = await both({
      body: statusBody(definition, nextFnr()),
      auth: { bearer: 'not.a.token' },
    });
    expect(invalid.fast.status).toBe(401);
    expect(invalid.answered).toBe(0);
  });

  it('when two Authorization headers come, then the refusal is Express’s, whichever would pass', async () => {
    const definition = await seeded();
    const good = `Bearer ${await h.get().token({ scopes: ['read'] })}`;
    for (const target of ['fast', 'express'] as const) {
      via = target;
      const before = app.fastPathStats();
      const res = await request(origin)
        .post(PATHS.status)
        // An array is sent as one header line per value.
        .set('Authorization', [good, 'Bearer other'] as unknown as string)
        .send(statusBody(definition, nextFnr()));
      via = 'fast';
      expect(res.status).toBe(401);
      expect(res.body.message).toMatch(/one Authorization header/);
      expect(app.fastPathStats().answered).toBe(before.answered);
    }
  });

  it('when the content type is not JSON or the body is not JSON, then the answer is Express’s refusal', async () => {
    const definition = await seeded();
    const wrongType = await both({
      body: JSON.stringify(statusBody(definition, nextFnr())),
      contentType: 'text/plain',
    });
    expect(wrongType.fast.status).toBe(415);
    expect(wrongType.answered + wrongType.handedOver).toBe(0);

    const malformed = await both({ body: '{"innbyggerFnr": ' });
    expect(malformed.fast.status).toBe(400);
    expect(malformed.handedOver).toBe(1);

    // Without a token the body is not read at all: the token is checked first.
    const malformedNoToken = await both({ body: '{"innbyggerFnr": ', auth: 'none' });
    expect(malformedNoToken.fast.status).toBe(401);

    const notJsonAtAll = await both({ body: 'innbyggerFnr' });
    expect(notJsonAtAll.fast.status).toBe(400);
  });

  it('when the body is gzip, br or deflate, then Express inflates and answers it; bytes that do not inflate are its 400', async () => {
    const { definition, fnr } = await withSetting();
    const json = Buffer.from(JSON.stringify(statusBody(definition, fnr)));
    for (const [encoding, compress] of [
      ['gzip', gzipSync],
      ['br', brotliCompressSync],
      ['deflate', deflateSync],
    ] as const) {
      const inflated = await both({
        body: compress(json),
        headers: { 'Content-Encoding': encoding },
      });
      expect(inflated.fast.status).toBe(200);
      expect(inflated.fast.body).toMatchObject({ definisjonGuid: definition.definisjonGuid });
      expect(inflated.answered + inflated.handedOver).toBe(0);

      const notCompressed = await both({ body: json, headers: { 'Content-Encoding': encoding } });
      expect(notCompressed.fast.status).toBe(400);
      expect(notCompressed.fast.body).toEqual({
        code: 'EPVK-100400',
        message: expect.any(String),
        errorCategory: 'ClientValidationError',
      });
      expect(notCompressed.answered + notCompressed.handedOver).toBe(0);
    }
  });

  it('when a string of the body holds an unpaired surrogate, then the answer is Express’s 400', async () => {
    const { definition, fnr } = await withSetting();
    for (const body of [
      `{"innbyggerFnr":"${fnr}","definisjonGuid":"${definition.definisjonGuid}","partKode":"\\ud800"}`,
      `{"innbyggerFnr":"${fnr}","definisjonGuid":"${definition.definisjonGuid}","partKode":"${definition.partKode}","definisjonNavn":"a\\udfffb"}`,
    ]) {
      const refused = await both({ body });
      expect(refused.fast.status).toBe(400);
      expect(refused.fast.body).toEqual({
        code: 'EPVK-100400',
        message: expect.stringContaining('surrogate'),
        errorCategory: 'ClientValidationError',
      });
      expect(refused.answered).toBe(0);
    }
    // A surrogate pair is text: answered as usual.
    const paired = await both({
      body: `{"innbyggerFnr":"${fnr}","definisjonGuid":"${definition.definisjonGuid}","partKode":"${definition.partKode}","definisjonNavn":"\\ud83d\\ude00"}`,
    });
    expect(paired.fast.status).toBe(200);
    expect(paired.answered).toBe(1);
  });

  it('when another operation or method is called, then it goes to Express untouched', async () => {
    const before = app.fastPathStats();
    via = 'fast';
    const get = await request(origin)
      .get(PATHS.status)
      .set('Authorization', `Bearer ${await h.get().token()}`);
    expect(get.status).toBe(405);
    const other = await request(origin)
      .post(PATHS.forPart)
      .set('Authorization', `Bearer ${await h.get().token()}`)
      .send({ innbyggerFnr: nextFnr(), partKode: 'none' });
    expect(other.status).toBe(200);
    expect(app.fastPathStats()).toEqual(before);
  });

  it('when the fast path answers at info, then it writes the request line Express writes', async () => {
    const { definition, fnr } = await withSetting();
    const lines = () =>
      log.lines.filter((line) => line['msg'] === 'request completed' && line['res']);
    const before = lines().length;
    await both({ body: statusBody(definition, fnr) });
    // The line is written once the response has finished; give the event loop a turn.
    await new Promise((resolve) => setImmediate(resolve));
    const [fastLine, expressLine] = lines().slice(before);
    expect(fastLine).toBeDefined();
    expect(expressLine).toBeDefined();
    const comparable = (line: Record<string, unknown> | undefined) => {
      const { time: _time, responseTime: _rt, ...rest } = line ?? {};
      const req = { ...(rest['req'] as Record<string, unknown>) };
      delete req['remotePort'];
      return { ...rest, req };
    };
    expect(comparable(fastLine)).toEqual(comparable(expressLine));
    expect(JSON.stringify(fastLine)).not.toContain(fnr);
  });
});
