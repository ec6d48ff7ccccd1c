import {
  PRIVACY_EVENTS_STREAM,
  SETTING_CHANGED_EVENT_TYPE,
  settingChangedEventDataSchema,
} from '@nhp/privacy-contracts';
import { jetstreamManager } from '@nats-io/jetstream';
import { createSettingEventPublisher, privacyEventsStreamSpec } from '@nhp/privacy-data-access';
import { createLogger } from '@nhp/shared-logger';
import { AsyncApiContract } from '@nhp/shared-testing';
import { syntheticFnr } from '@nhp/privacy-testing';
import { present } from '@nhp/shared-testing';
import request from 'supertest';
import { TEMPLATES, TEST_CLIENT, usePrivacyHarness } from './support/harness';
import { PATHS } from './settings-fixtures';

const h = usePrivacyHarness();
/**
 * The events' contract as the repository holds it (docs/asyncapi, what downstream teams generate
 * their models from): every event read from the stream must fit it, headers and payload.
 */
const contract = AsyncApiContract.fromFile('docs/asyncapi/privacy-api.json');

interface StoredEvent {
  subject: string;
  msgId: string | undefined;
  event: { id: string; type: string; source: string; data: unknown };
}

async function streamEvents(): Promise<StoredEvent[]> {
  const jsm = await jetstreamManager(h.get().nats);
  const info = await jsm.streams.info(PRIVACY_EVENTS_STREAM).catch(() => undefined);
  if (!info) return [];
  const out: StoredEvent[] = [];
  for (
    let seq = info.state.first_seq;
    info.state.messages > 0 && seq <= info.state.last_seq;
    seq++
  ) {
    const msg = await jsm.streams.getMessage(PRIVACY_EVENTS_STREAM, { seq }).catch(() => null);
    if (!msg) continue;
    const headers = Object.fromEntries([...msg.header.keys()].map((k) => [k, msg.header.get(k)]));
    expect(contract.problems({ subject: msg.subject, headers, payload: msg.json() })).toEqual([]);
    out.push({
      subject: msg.subject,
      msgId: msg.header.get('Nats-Msg-Id') || undefined,
      event: msg.json(),
    });
  }
  return out;
}

async function eventually(check: () => Promise<boolean>, what: string, attempts = 150) {
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`gave up waiting for ${what}`);
}

let fnrSeq = 5000;
const nextFnr = () => syntheticFnr(fnrSeq++);

async function replicated(replikering = true) {
  const def = await h.get().seedDefinition({ template: TEMPLATES.reservasjon, replikering });
  await h.get().grant(TEST_CLIENT, def.partKode);
  return def;
}

describe('setting-changed events', () => {
  it('when a setting of a replicated definition changes, then one CloudEvent per change reaches PRIVACY_EVENTS on the party subject; ikkeEndret publishes nothing', async () => {
    const def = await replicated();
    const fnr = nextFnr();
    const auth = h.get().bearer(await h.get().token());
    const body = {
      innbyggerFnr: fnr,
      definisjonGuid: def.definisjonGuid,
      partKode: def.partKode,
      typePi: 'reservasjon',
      aktiv: true,
    };
    expect(
      (await request(h.get().app).post(PATHS.set).set('Authorization', auth).send(body)).body
        .instansEndret,
    ).toBe('endret');
    expect(
      (await request(h.get().app).post(PATHS.set).set('Authorization', auth).send(body)).body
        .instansEndret,
    ).toBe('ikkeEndret');
    await h.get().journalIdle();

    const mine = (await streamEvents()).filter(
      (e) => (e.event.data as { innbyggerFnr?: string }).innbyggerFnr === fnr,
    );
    expect(mine).toHaveLength(1);
    const stored = present(mine[0], 'the citizen’s event');
    expect(stored.subject).toBe(`privacy.events.setting-changed.${def.partKode}`);
    expect(stored.msgId).toBe(stored.event.id);
    expect(stored.event.type).toBe(SETTING_CHANGED_EVENT_TYPE);
    expect(settingChangedEventDataSchema.parse(stored.event.data)).toEqual({
      definisjonGuid: def.definisjonGuid,
      partKode: def.partKode,
      typePi: 'reservasjon',
      innbyggerFnr: fnr,
      aktiv: true,
      sekvensnummer: 1,
      sistEndretTidspunkt: expect.any(String),
    });
  });

  it('when the definition is not replicated, then its changes publish nothing', async () => {
    const def = await replicated(false);
    const fnr = nextFnr();
    const auth = h.get().bearer(await h.get().token());
    await request(h.get().app)
      .post(PATHS.set)
      .set('Authorization', auth)
      .send({
        innbyggerFnr: fnr,
        definisjonGuid: def.definisjonGuid,
        partKode: def.partKode,
        aktiv: true,
      })
      .expect(200);
    await h.get().journalIdle();
    const mine = (await streamEvents()).filter(
      (e) => (e.event.data as { innbyggerFnr?: string }).innbyggerFnr === fnr,
    );
    expect(mine).toHaveLength(0);
  });

  it('when the same event is published twice (a retry after a lost ack), then the stream holds it once, and the stream is provisioned as documented', async () => {
    const publish = createSettingEventPublisher({
      nats: () => h.get().nats,
      logger: createLogger({ name: 'events-test', level: 'silent' }),
    });
    const event = {
      id: `retry-${Date.now()}`,
      subject: 'privacy.events.setting-changed.retry',
      type: SETTING_CHANGED_EVENT_TYPE,
      time: new Date().toISOString(),
      data: {
        definisjonGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
        partKode: 'retry',
        typePi: 'samtykke',
        innbyggerFnr: nextFnr(),
        aktiv: true,
        sekvensnummer: 1,
        sistEndretTidspunkt: new Date().toISOString(),
      },
    };
    await publish(event);
    await publish(event);
    const copies = (await streamEvents()).filter((e) => e.event.id === event.id);
    expect(copies).toHaveLength(1);
    const info = await (await jetstreamManager(h.get().nats)).streams.info(PRIVACY_EVENTS_STREAM);
    expect(info.config.subjects).toEqual(privacyEventsStreamSpec.subjects);
    expect(info.config.storage).toBe('file');
    expect(info.config.duplicate_window).toBe(
      privacyEventsStreamSpec.duplicateWindowMs * 1_000_000,
    );
  });

  it('when an event does not fit the setting-changed contract, then it is refused before it is sent', async () => {
    const publish = createSettingEventPublisher({
      nats: () => h.get().nats,
      logger: createLogger({ name: 'events-test', level: 'silent' }),
    });
    await expect(
      publish({
        id: `bad-${Date.now()}`,
        subject: 'privacy.events.setting-changed.bad',
        type: SETTING_CHANGED_EVENT_TYPE,
        time: new Date().toISOString(),
        data: { partKode: 'bad' },
      }),
    ).rejects.toThrow();
  });

  it('when NATS is down during writes, then every write is acknowledged, and once NATS is back each event is in the stream exactly once', async () => {
    const def = await replicated();
    const auth = h.get().bearer(await h.get().token());
    const citizens = Array.from({ length: 5 }, nextFnr);
    const expected: string[] = [];
    await h.get().infra.stopNats();
    try {
      for (const [i, fnr] of citizens.entries()) {
        for (const aktiv of [true, false]) {
          const res = await request(h.get().app)
            .post(PATHS.set)
            .set('Authorization', auth)
            .send({
              innbyggerFnr: fnr,
              definisjonGuid: def.definisjonGuid,
              partKode: def.partKode,
              aktiv,
              tidspunkt: new Date(Date.now() - 60_000 + i * 10 + (aktiv ? 0 : 5)).toISOString(),
            });
          expect(res.body).toEqual({ returKode: 'ok', instansEndret: 'endret' });
          expected.push(`${fnr}/${aktiv ? 1 : 2}`);
        }
      }
      await h.get().journalIdle();
    } finally {
      await h.get().infra.startNats();
    }

    const keysInStream = async () =>
      (await streamEvents())
        .map(
          (e) =>
            e.event.data as { innbyggerFnr: string; sekvensnummer: number; definisjonGuid: string },
        )
        .filter((d) => d.definisjonGuid === def.definisjonGuid)
        .map((d) => `${d.innbyggerFnr}/${d.sekvensnummer}`);
    await eventually(async () => {
      await h
        .get()
        .context.journal.sweep()
        .catch(() => 0);
      await h.get().journalIdle();
      const keys = await keysInStream().catch((): string[] => []);
      return expected.every((k) => keys.includes(k));
    }, 'every event in the stream after NATS is back');

    // Another sweep (as after a crash between the ack and pulling the entry) adds nothing.
    await h.get().context.journal.sweep();
    const keys = await keysInStream();
    expect([...keys].sort()).toEqual([...expected].sort());
  }, 60_000);
});
