import type { Server } from 'node:http';
import { jetstreamManager } from '@nats-io/jetstream';
import { PRIVACY_EVENTS_STREAM } from '@nhp/privacy-contracts';
import { syntheticFnr } from '@nhp/privacy-testing';
import { closeServer, listen, serverPort } from '@nhp/shared-http';
import {
  AsyncApiContract,
  recordSpans,
  sensitiveAttributes,
  type RecordedSpan,
} from '@nhp/shared-testing';
import request from 'supertest';
import { createPrivacyApp } from '../src/app';
import { createPrivacyContext, type PrivacyContext } from '../src/context';
import { PATHS } from './settings-fixtures';
import { TEMPLATES, TEST_CLIENT, usePrivacyHarness } from './support/harness';

/**
 * Traces through privacy-api with the SDK's in-memory exporter: a set, the journal relay that
 * publishes its event (at once, or after a restart), and the event itself. Tracing is on before
 * the harness connects (MongoDB's command spans are chosen at connect).
 */
const recorder = recordSpans('privacy-api');
const h = usePrivacyHarness();

const PRODUCER = 4;
const SERVER = 2;
const CLIENT = 3;
const TRACE_A = '4bf92f3577b34da6a3ce929d0e0e4736';
const TRACE_B = '5cf92f3577b34da6a3ce929d0e0e4737';
const CALLER_SPAN = '00f067aa0ba902b7';

/** NATS as a switch: off, the journal's publish fails and the entry waits in its document. */
let natsOn = true;
let context: PrivacyContext;
let server: Server;
let origin: string;
const tokens: string[] = [];
const fnrs: string[] = [];

beforeAll(async () => {
  const { connection, nats, health, auth, context: harnessContext } = h.get();
  context = createPrivacyContext({
    logger: harnessContext.logger,
    connection,
    nats: () => (natsOn ? nats : undefined),
    cacheTtlMs: 0,
  });
  const app = createPrivacyApp({ context, health, auth });
  server = await listen(app, 0, '127.0.0.1', { errorsFrom: app.express });
  origin = `http://127.0.0.1:${serverPort(server)}`;
});

afterAll(async () => {
  await closeServer(server, 1000);
  await context.journal.stop();
  // Every span of this file, whatever test made it: no identity number, no credential.
  expect(recorder.spans().length).toBeGreaterThan(10);
  expect(sensitiveAttributes(recorder.spans(), [...tokens, ...fnrs])).toEqual([]);
  await recorder.shutdown();
});

let fnrSeq = 7100;
async function setSetting(traceId: string): Promise<{ fnr: string; requestId: string }> {
  const def = await h.get().seedDefinition({ template: TEMPLATES.reservasjon, replikering: true });
  await h.get().grant(TEST_CLIENT, def.partKode);
  const token = await h.get().token();
  const fnr = syntheticFnr(fnrSeq++);
  tokens.push(token);
  fnrs.push(fnr);
  const res = await request(origin)
    .post(PATHS.set)
    .set('Authorization', `Bearer ${token}`)
    .set('traceparent', `00-${traceId}-${CALLER_SPAN}-01`)
    .send({
      innbyggerFnr: fnr,
      definisjonGuid: def.definisjonGuid,
      partKode: def.partKode,
      typePi: 'reservasjon',
      aktiv: true,
    })
    .expect(200);
  return { fnr, requestId: res.headers['x-request-id'] as string };
}

/** The events' contract as the repository holds it (docs/asyncapi). */
const contract = AsyncApiContract.fromFile('docs/asyncapi/privacy-api.json');

async function storedEvent(fnr: string): Promise<Record<string, unknown> | undefined> {
  const jsm = await jetstreamManager(h.get().nats);
  const info = await jsm.streams.info(PRIVACY_EVENTS_STREAM).catch(() => undefined);
  if (!info) return undefined;
  for (let seq = info.state.first_seq; seq <= info.state.last_seq; seq++) {
    const msg = await jsm.streams.getMessage(PRIVACY_EVENTS_STREAM, { seq }).catch(() => null);
    const event = msg?.json<Record<string, unknown>>();
    if ((event?.['data'] as { innbyggerFnr?: string } | undefined)?.innbyggerFnr === fnr) {
      // With tracing on the event carries the extension attributes: still what the contract says.
      const headers = Object.fromEntries(
        [...(msg?.header.keys() ?? [])].map((k) => [k, msg?.header.get(k) ?? '']),
      );
      expect(contract.problems({ subject: msg?.subject ?? '', headers, payload: event })).toEqual(
        [],
      );
      return { ...event, natsTraceparent: msg?.header.get('traceparent') };
    }
  }
  return undefined;
}

const inTrace = (traceId: string) => recorder.spans().filter((s) => s.traceId === traceId);
const serverSpan = (traceId: string): RecordedSpan | undefined =>
  inTrace(traceId).find((s) => s.kind === SERVER);

describe('traces of a setting change', () => {
  it('when a setting is set, then the request, its MongoDB commands and the publish of its event are one trace, and the event carries that trace and the request id', async () => {
    const { fnr, requestId } = await setSetting(TRACE_A);
    await context.journal.idle();

    const request = serverSpan(TRACE_A);
    expect(request).toMatchObject({
      name: `POST ${PATHS.set}`,
      parentSpanId: CALLER_SPAN,
      attributes: { 'http.route': PATHS.set, 'http.response.status_code': 200 },
    });
    const commands = inTrace(TRACE_A).filter(
      (s) => s.kind === CLIENT && s.attributes['db.system.name'] === 'mongodb',
    );
    expect(commands.map((s) => s.attributes['db.operation.name'])).toEqual(
      expect.arrayContaining(['update']),
    );
    const publish = inTrace(TRACE_A).find((s) => s.kind === PRODUCER);
    expect(publish).toMatchObject({
      name: expect.stringMatching(/^publish privacy\.events\.setting-changed\./),
      parentSpanId: request?.spanId,
      attributes: { 'messaging.system': 'nats' },
    });

    const event = await storedEvent(fnr);
    expect(event).toMatchObject({
      traceparent: `00-${TRACE_A}-${request?.spanId}-01`,
      requestid: requestId,
      natsTraceparent: `00-${TRACE_A}-${publish?.spanId}-01`,
    });
  });

  it('when the event is published only after a restart, then the publish is a new trace linked to the request that set it, and the event still carries the request trace', async () => {
    natsOn = false;
    const { fnr } = await setSetting(TRACE_B);
    await context.journal.idle();
    natsOn = true;
    expect(await storedEvent(fnr)).toBeUndefined();

    // The restarted process: a new journal on the same database sweeps what was left.
    const restarted = createPrivacyContext({
      logger: h.get().context.logger,
      connection: h.get().connection,
      nats: h.get().nats,
      cacheTtlMs: 0,
    });
    expect(await restarted.journal.sweep()).toBeGreaterThanOrEqual(1);

    const request = serverSpan(TRACE_B);
    const publish = recorder
      .spans()
      .find((s) => s.kind === PRODUCER && s.links.some((l) => l.spanId === request?.spanId));
    expect(publish).toBeDefined();
    expect(publish?.traceId).not.toBe(TRACE_B);
    expect(publish?.links).toEqual([{ traceId: TRACE_B, spanId: request?.spanId }]);
    expect(await storedEvent(fnr)).toMatchObject({
      traceparent: `00-${TRACE_B}-${request?.spanId}-01`,
    });
  });

  it('when a status check is answered by the fast path, then its span names the route template', async () => {
    const def = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
    await h.get().grant(TEST_CLIENT, def.partKode);
    const token = await h.get().token({ scopes: ['read'] });
    const fnr = syntheticFnr(fnrSeq++);
    tokens.push(token);
    fnrs.push(fnr);
    const trace = '6df92f3577b34da6a3ce929d0e0e4738';
    await request(origin)
      .post(PATHS.status)
      .set('Authorization', `Bearer ${token}`)
      .set('traceparent', `00-${trace}-${CALLER_SPAN}-01`)
      .send({ innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode })
      .expect(200);
    expect(serverSpan(trace)).toMatchObject({
      name: `POST ${PATHS.status}`,
      attributes: { 'http.route': PATHS.status },
    });
    // Its read of the setting (coalesced with others or alone) is a span in its trace.
    expect(inTrace(trace).filter((s) => s.kind === CLIENT)).toContainEqual(
      expect.objectContaining({
        name: 'find privacy_settings',
        attributes: expect.objectContaining({ 'db.operation.name': 'find' }),
      }),
    );
  });

  it('when status checks arrive together, then each sampled one has the read of its setting in its own trace', async () => {
    const def = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
    await h.get().grant(TEST_CLIENT, def.partKode);
    const token = await h.get().token({ scopes: ['read'] });
    tokens.push(token);
    const checks = Array.from({ length: 8 }, (_, i) => {
      const fnr = syntheticFnr(fnrSeq++);
      fnrs.push(fnr);
      const traceId = `7ef92f3577b34da6a3ce929d0e0e47${String(10 + i)}`;
      // Every other one sampled by its caller.
      const flags = i % 2 === 0 ? '01' : '00';
      return { fnr, traceId, sampled: i % 2 === 0, flags };
    });
    await Promise.all(
      checks.map((c) =>
        request(origin)
          .post(PATHS.status)
          .set('Authorization', `Bearer ${token}`)
          .set('traceparent', `00-${c.traceId}-${CALLER_SPAN}-${c.flags}`)
          .send({ innbyggerFnr: c.fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode })
          .expect(200),
      ),
    );
    for (const c of checks) {
      const reads = inTrace(c.traceId).filter(
        (s) => s.kind === CLIENT && s.name === 'find privacy_settings',
      );
      expect({ trace: c.traceId, reads: reads.length }).toEqual({
        trace: c.traceId,
        reads: c.sampled ? 1 : 0,
      });
      if (c.sampled) expect(reads[0]?.parentSpanId).toBe(serverSpan(c.traceId)?.spanId);
    }
  });
});
