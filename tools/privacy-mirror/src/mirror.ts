import {
  AckPolicy,
  DeliverPolicy,
  jetstream,
  jetstreamManager,
  type JsMsg,
} from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import type { PrivacyClient } from '@nhp/privacy-client';
import {
  PRIVACY_EVENTS_STREAM,
  settingChangedEventDataSchema,
  settingChangedSubject,
  type SettingChangedEventData,
} from '@nhp/privacy-contracts';
import { REDACTED } from '@nhp/shared-logger';
import { MIRROR_FORMAT, type MirrorEntry, type MirrorState, type MirrorStore } from './store';

export interface PrivacyMirrorOptions {
  client: PrivacyClient;
  /** For the copy's header: the privacy-api the client talks to. */
  api: string;
  /** NATS server(s), comma-separated. */
  nats: string;
  partKode: string;
  store: MirrorStore;
  /** The durable consumer's name; default privacy-mirror-<partKode>. */
  consumer?: string;
  /** Walk (if needed), catch up with every event waiting, then return. */
  once?: boolean;
  /** Stops a running mirror (after the batch in hand is saved and acknowledged). */
  signal?: AbortSignal;
  /** Events per batch: applied, saved, then acknowledged together. Default 500. */
  batchSize?: number;
  /** Seconds before an event fetched but not acknowledged is delivered again. Default 30. */
  ackWaitSec?: number;
  /**
   * What happens, a line at a time: each change applied (the citizen masked as the logs mask an
   * identity number), when it follows the events, when NATS is lost and when it is back.
   */
  report?: (line: string) => void;
  /** How long to wait for NATS at start before saying that it waits. Default 2000. */
  natsWaitNoticeMs?: number;
}

export interface MirrorRunSummary {
  walked: boolean;
  applied: number;
  ignored: number;
  gapsFetched: number;
  /** Of the applied changes, those that left the setting active / inactive. */
  activated: number;
  deactivated: number;
  activeSettings: number;
}

const keyOf = (definisjonGuid: string, innbyggerFnr: string) => `${definisjonGuid}|${innbyggerFnr}`;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function isConsumerNotFound(err: unknown): boolean {
  return /consumer not found/i.test((err as Error | null)?.message ?? '');
}

/**
 * Keeps a local copy of one party's settings current: on the first run a durable consumer on
 * `privacy.events.setting-changed.<partKode>` is created *before* the walk of every readable
 * definition's active citizens, so that no change between the two is missed; then events are
 * applied by `sekvensnummer` (older ones ignored, a gap fetches that setting's status). Later
 * runs resume from the consumer's position without a walk. Events are acknowledged only after
 * the copy that includes them is saved.
 */
export async function runPrivacyMirror(options: PrivacyMirrorOptions): Promise<MirrorRunSummary> {
  const { client, partKode, store } = options;
  const consumerName = options.consumer ?? `privacy-mirror-${partKode}`;
  const subject = settingChangedSubject(partKode);
  const report = options.report ?? (() => undefined);
  const batchSize = options.batchSize ?? 500;
  const summary: MirrorRunSummary = {
    walked: false,
    applied: 0,
    ignored: 0,
    gapsFetched: 0,
    activated: 0,
    deactivated: 0,
    activeSettings: 0,
  };

  const nc = await connectWhenThere(options, report);
  if (!nc) {
    report('stopped before NATS was reached');
    return summary;
  }
  void reportNatsStatus(nc, report);
  try {
    const jsm = await jetstreamManager(nc);
    let state = await store.load();
    if (state && (state.partKode !== partKode || state.consumer !== consumerName)) {
      throw new Error(
        `the store holds a copy of ${state.partKode} followed by consumer ${state.consumer}, not ${partKode} / ${consumerName}: use another store`,
      );
    }
    let consumerExists = await jsm.consumers.info(PRIVACY_EVENTS_STREAM, consumerName).then(
      () => true,
      (err: unknown) => {
        if (isConsumerNotFound(err)) return false;
        throw err;
      },
    );
    if (state?.walkedAt && !consumerExists) {
      report(`consumer ${consumerName} is gone (NATS lost it?): walking again`);
      state = undefined;
    }
    if (!state?.walkedAt) {
      // A new copy starts from a new consumer: one made for an earlier copy holds a position
      // that means nothing for this one.
      if (consumerExists) await jsm.consumers.delete(PRIVACY_EVENTS_STREAM, consumerName);
      await jsm.consumers.add(PRIVACY_EVENTS_STREAM, {
        durable_name: consumerName,
        filter_subject: subject,
        ack_policy: AckPolicy.Explicit,
        deliver_policy: DeliverPolicy.New,
        max_ack_pending: 10_000,
        // Events fetched but not acknowledged (the mirror was killed, NATS went away) come again.
        ack_wait: (options.ackWaitSec ?? 30) * 1_000_000_000,
      });
      consumerExists = true;
      state = await walk(options, consumerName, report);
      await store.save(state);
      summary.walked = true;
    }

    const settings = new Map<string, MirrorEntry>(
      state.settings.map((e) => [keyOf(e.definisjonGuid, e.innbyggerFnr), e]),
    );
    const followed = new Set(state.definitions.map((d) => d.definisjonGuid));
    const definitionNames = new Map(state.definitions.map((d) => [d.definisjonGuid, d.navn]));
    const current = state;

    async function apply(event: SettingChangedEventData): Promise<void> {
      if (!followed.has(event.definisjonGuid)) {
        summary.ignored += 1;
        return;
      }
      const key = keyOf(event.definisjonGuid, event.innbyggerFnr);
      const held = settings.get(key);
      const heldSeq = held?.sekvensnummer ?? 0;
      if (event.sekvensnummer <= heldSeq) {
        summary.ignored += 1;
        return;
      }
      let next: MirrorEntry = {
        definisjonGuid: event.definisjonGuid,
        innbyggerFnr: event.innbyggerFnr,
        aktiv: event.aktiv,
        sekvensnummer: event.sekvensnummer,
        sistEndretTidspunkt: event.sistEndretTidspunkt,
      };
      if (event.sekvensnummer !== heldSeq + 1) {
        // A gap: a change we did not see (or a citizen the walk did not show). The setting's
        // status says where it stands now.
        summary.gapsFetched += 1;
        const status = await client.sjekkInnbyggersPiStatus({
          innbyggerFnr: event.innbyggerFnr,
          definisjonGuid: event.definisjonGuid,
          partKode,
        });
        if ((status.sekvensnummer ?? 0) >= event.sekvensnummer) {
          next = {
            ...next,
            aktiv: status.aktiv,
            sekvensnummer: status.sekvensnummer ?? event.sekvensnummer,
            sistEndretTidspunkt: status.sistEndretTidspunkt ?? next.sistEndretTidspunkt,
          };
        }
      }
      settings.set(key, next);
      summary.applied += 1;
      if (next.aktiv) summary.activated += 1;
      else summary.deactivated += 1;
      report(describeChange(next, definitionNames.get(next.definisjonGuid)));
    }

    async function save(streamSequence: number): Promise<void> {
      current.streamSequence = Math.max(current.streamSequence, streamSequence);
      current.settings = [...settings.values()].sort(compareEntries);
      await store.save(current);
    }

    const js = jetstream(nc);
    report(
      options.once
        ? `catching up with ${subject} (consumer ${consumerName}, after stream sequence ${current.streamSequence})`
        : `following ${subject} (consumer ${consumerName}, after stream sequence ${current.streamSequence}); Ctrl-C stops`,
    );
    while (!options.signal?.aborted) {
      const batch: JsMsg[] = [];
      try {
        const info = await jsm.consumers.info(PRIVACY_EVENTS_STREAM, consumerName);
        if (options.once && info.num_pending === 0 && info.num_ack_pending === 0) break;
        // Ask for what is waiting (the fetch then returns at once), or wait up to a second.
        const max = info.num_pending > 0 ? Math.min(batchSize, info.num_pending) : batchSize;
        const consumer = await js.consumers.get(PRIVACY_EVENTS_STREAM, consumerName);
        const messages = await consumer.fetch({ max_messages: max, expires: 1000 });
        for await (const m of messages) batch.push(m);
      } catch (err) {
        if (isConsumerNotFound(err)) throw err;
        // NATS is away (a restart, a failover): the connection comes back by itself. Messages
        // fetched but not acknowledged are delivered again.
        await sleep(250);
        continue;
      }
      if (batch.length === 0) continue;
      const ignoredBefore = summary.ignored;
      let lastSeq = 0;
      for (const m of batch) {
        lastSeq = Math.max(lastSeq, m.seq);
        const parsed = settingChangedEventDataSchema.safeParse(
          (m.json() as { data?: unknown }).data,
        );
        if (!parsed.success) {
          summary.ignored += 1;
          continue;
        }
        await apply(parsed.data);
      }
      await save(lastSeq);
      for (const m of batch) m.ack();
      await nc.flush().catch(() => undefined);
      const ignored = summary.ignored - ignoredBefore;
      if (ignored > 0) {
        report(
          `${ignored} of ${batch.length} events ignored: older than the copy, or of a definition it does not follow`,
        );
      }
    }
    summary.activeSettings = [...settings.values()].filter((e) => e.aktiv).length;
    report(`copy of ${partKode}: ${summary.activeSettings} active settings of ${settings.size}`);
    return summary;
  } finally {
    await nc.drain().catch(() => undefined);
  }
}

/** One applied change, as the mirror prints it: never the identity number itself. */
export function describeChange(entry: MirrorEntry, navn?: string | null): string {
  const definition = navn ? `${entry.definisjonGuid} (${navn})` : entry.definisjonGuid;
  return `changed: innbyggerFnr ${REDACTED}, definisjon ${definition}, aktiv ${entry.aktiv}, sekvensnummer ${entry.sekvensnummer}`;
}

/**
 * Connects, waiting for a NATS that is not there yet (and saying so once) until `signal` stops
 * the wait: undefined then. A first attempt at a time, rather than the client's own
 * waitOnFirstConnect, whose retries nothing can cancel. Once connected, the client reconnects by
 * itself for as long as it takes.
 */
async function connectWhenThere(
  options: PrivacyMirrorOptions,
  report: (line: string) => void,
): Promise<NatsConnection | undefined> {
  const noticeAt = Date.now() + (options.natsWaitNoticeMs ?? 2000);
  let noticed = false;
  while (!options.signal?.aborted) {
    try {
      return await connect({
        servers: options.nats.split(',').map((s) => s.trim()),
        name: `privacy-mirror ${options.partKode}`,
        maxReconnectAttempts: -1,
        reconnectTimeWait: 250,
      });
    } catch {
      if (!noticed && Date.now() >= noticeAt) {
        noticed = true;
        report(`waiting for NATS at ${options.nats}…`);
      }
      await sleep(250);
    }
  }
  return undefined;
}

/** Says when NATS goes away and when it is back (the client reconnects by itself). */
async function reportNatsStatus(nc: NatsConnection, report: (line: string) => void): Promise<void> {
  let lost = false;
  for await (const status of nc.status()) {
    if (status.type === 'disconnect' && !lost) {
      lost = true;
      report(`NATS lost (${status.server}): waiting for it; changes wait in the stream meanwhile`);
    } else if (status.type === 'reconnect' && lost) {
      lost = false;
      report(`NATS is back (${status.server}): following again`);
    }
  }
}

function compareEntries(a: MirrorEntry, b: MirrorEntry): number {
  return a.definisjonGuid < b.definisjonGuid
    ? -1
    : a.definisjonGuid > b.definisjonGuid
      ? 1
      : a.innbyggerFnr < b.innbyggerFnr
        ? -1
        : a.innbyggerFnr > b.innbyggerFnr
          ? 1
          : 0;
}

/** The first walk: every readable definition of the party, every active citizen of each. */
async function walk(
  options: PrivacyMirrorOptions,
  consumer: string,
  report: (line: string) => void,
): Promise<MirrorState> {
  const { client, partKode } = options;
  const listing = await client.hentInnstillingDefinisjoner({ partKode });
  const settings: MirrorEntry[] = [];
  for (const definition of listing.definisjoner) {
    if (!definition.replikering) {
      report(
        `warning: ${definition.definisjonGuid} (${definition.navn ?? 'no name'}) publishes no events (replikering false): the copy of it is only as new as this walk`,
      );
    }
    let count = 0;
    for await (const page of client.activeCitizens({
      definisjonGuid: definition.definisjonGuid,
      partKode,
    })) {
      for (const entry of page.personvernInnstillinger) {
        if (entry.innbyggerFnr == null) continue;
        settings.push({
          definisjonGuid: definition.definisjonGuid,
          innbyggerFnr: entry.innbyggerFnr,
          aktiv: true,
          sekvensnummer: entry.sekvensnummer,
          sistEndretTidspunkt: entry.sistEndretTidspunkt ?? null,
        });
        count += 1;
      }
    }
    report(
      `walked ${definition.definisjonGuid} (${definition.navn ?? 'no name'}): ${count} active`,
    );
  }
  return {
    format: MIRROR_FORMAT,
    api: options.api,
    partKode,
    consumer,
    walkedAt: new Date().toISOString(),
    streamSequence: 0,
    definitions: listing.definisjoner.map((d) => ({
      definisjonGuid: d.definisjonGuid,
      navn: d.navn,
      typePi: d.typePi,
      status: d.status,
      replikering: d.replikering,
    })),
    settings: settings.sort(compareEntries),
  };
}
