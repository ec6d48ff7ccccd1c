import type { Server } from 'node:http';
import type { Definition } from '@nhp/privacy-domain';
import { newDpopKey, syntheticFnr, type DpopKey } from '@nhp/privacy-testing';
import { closeServer, listen, serverPort } from '@nhp/shared-http';
import request, { type Response } from 'supertest';
import { createPrivacyApp, type PrivacyApp } from '../src/app';
import { PATHS } from './settings-fixtures';
import { TEST_CLIENT, TEMPLATES, usePrivacyHarness } from './support/harness';

/**
 * The status check's fast path behind a load balancer (HTTP_TRUST_PROXY, as docker-compose.ha.yml
 * runs privacy-api): it must answer, and accept or refuse a DPoP proof, exactly as the Express route
 * does with the same "trust proxy" setting. Each case goes once through the fast path and once
 * straight to Express on the same server; status, headers and bytes must be the same.
 */
const PUBLIC_HOST = 'personvern.helse.example';
const h = usePrivacyHarness({ options: { trustProxy: 'loopback' } });

interface Served {
  app: PrivacyApp;
  server: Server;
  origin: string;
  via: 'fast' | 'express';
}
const servers: Served[] = [];

/** privacy-api on loopback with `trustProxy` (the harness's context otherwise). */
async function serve(trustProxy: boolean | number | string): Promise<Served> {
  const { context, health, auth } = h.get();
  const app = createPrivacyApp({
    context: { ...context, options: { ...context.options, trustProxy } },
    health,
    auth,
  });
  const served = { app, origin: '', via: 'fast' } as Served;
  served.server = await listen(
    (req, res) => (served.via === 'fast' ? app(req, res) : app.express(req, res)),
    0,
    '127.0.0.1',
    { errorsFrom: app.express },
  );
  served.origin = `http://127.0.0.1:${serverPort(served.server)}`;
  servers.push(served);
  return served;
}

afterAll(async () => {
  for (const s of servers) await closeServer(s.server, 1000);
});

interface Case {
  /** The URL the DPoP proof names (default: the public https one the forwarded headers describe). */
  proofUrl?: (origin: string) => string;
  auth: 'bearer' | { dpop: DpopKey; token: string };
  forwarded?: Record<string, string>;
}

const FORWARDED = {
  'X-Forwarded-Proto': 'https',
  'X-Forwarded-Host': PUBLIC_HOST,
  'X-Forwarded-For': '203.0.113.7',
};
const publicUrl = () => `https://${PUBLIC_HOST}${PATHS.status}`;

async function send(s: Served, c: Case, body: object): Promise<Response> {
  const req = request(s.origin).post(PATHS.status).set('X-Request-Id', 'behind-a-proxy');
  if (c.auth === 'bearer') {
    req.set('Authorization', `Bearer ${await h.get().token({ scopes: ['read'] })}`);
  } else {
    const proof = await h.get().issuer.dpopProof({
      key: c.auth.dpop,
      method: 'POST',
      url: (c.proofUrl ?? publicUrl)(s.origin),
      accessToken: c.auth.token,
    });
    req.set('Authorization', `DPoP ${c.auth.token}`).set('DPoP', proof);
  }
  for (const [name, value] of Object.entries(c.forwarded ?? FORWARDED)) req.set(name, value);
  return req.set('Content-Type', 'application/json').send(JSON.stringify(body));
}

const answerOf = (res: Response) => {
  const headers: Record<string, unknown> = { ...res.headers };
  delete headers['date'];
  delete headers['connection'];
  delete headers['keep-alive'];
  return { status: res.status, headers, body: res.text };
};

/** The case through the fast path and through Express: the fast path's answer and what it answered. */
async function both(s: Served, c: Case, body: object) {
  const before = s.app.fastPathStats();
  s.via = 'fast';
  const fast = await send(s, c, body);
  const after = s.app.fastPathStats();
  s.via = 'express';
  const express = await send(s, c, body);
  s.via = 'fast';
  expect(answerOf(fast)).toEqual(answerOf(express));
  return { fast, answered: after.answered - before.answered };
}

let definition: Definition;
let fnrSeq = 8100;
const statusBody = () => ({
  innbyggerFnr: syntheticFnr(fnrSeq++),
  definisjonGuid: definition.definisjonGuid,
  partKode: definition.partKode,
});
const dpop = async () => {
  const key = await newDpopKey();
  return { dpop: key, token: await h.get().token({ scopes: ['read'], dpopKey: key }) };
};

beforeAll(async () => {
  definition = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
  await h.get().grant(TEST_CLIENT, definition.partKode);
});

describe('the status check fast path behind a trusted proxy', () => {
  it('when a Bearer request comes through the proxy with X-Forwarded-*, then the fast path answers it as Express does', async () => {
    const s = await serve('loopback');
    const { fast, answered } = await both(s, { auth: 'bearer' }, statusBody());
    expect(fast.status).toBe(200);
    expect(answered).toBe(1);
  });

  it('when a DPoP proof names the public URL the forwarded headers describe, then the fast path accepts it as Express does', async () => {
    const s = await serve('loopback');
    const { fast, answered } = await both(s, { auth: await dpop() }, statusBody());
    expect(fast.status).toBe(200);
    expect(answered).toBe(1);
  });

  it('when the forwarded headers carry several values, then the first of each counts, as in Express', async () => {
    const s = await serve(1);
    const forwarded = {
      'X-Forwarded-Proto': 'https, http',
      'X-Forwarded-Host': `${PUBLIC_HOST}, internal.example`,
      'X-Forwarded-For': '203.0.113.7, 127.0.0.1',
    };
    const { fast, answered } = await both(s, { auth: await dpop(), forwarded }, statusBody());
    expect(fast.status).toBe(200);
    expect(answered).toBe(1);
  });

  it('when a DPoP proof names the address the proxy called, then the fast path refuses it as Express does', async () => {
    const s = await serve('loopback');
    const { fast, answered } = await both(
      s,
      { auth: await dpop(), proofUrl: (origin) => `${origin}${PATHS.status}` },
      statusBody(),
    );
    expect(fast.status).toBe(401);
    expect(answered).toBe(0);
  });

  it('when the peer is not one the setting trusts, then forwarded headers do not count, in the fast path as in Express', async () => {
    const s = await serve('10.0.0.0/8');
    const refused = await both(s, { auth: await dpop() }, statusBody());
    expect(refused.fast.status).toBe(401);
    const direct = await both(
      s,
      { auth: await dpop(), proofUrl: (origin) => `${origin}${PATHS.status}` },
      statusBody(),
    );
    expect(direct.fast.status).toBe(200);
    expect(direct.answered).toBe(1);
  });
});
