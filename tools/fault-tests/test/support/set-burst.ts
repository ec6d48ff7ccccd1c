/**
 * A burst of citizens' sets cut short by a crash, and what must hold afterwards: every set answered
 * `endret` is stored, in order; the one set per citizen whose answer was lost is applied whole or
 * not at all; state and history agree; the API answers from that state; and, once the journal has
 * relayed everything, there is exactly one event and one audit record per stored change, and none
 * of a change the database does not hold. Used by the database crash (crash.spec.ts) and the
 * privacy-api crash (app-crash.spec.ts).
 */
import { MongoClient } from 'mongodb';
import { PRIVACY_EVENTS_STREAM, settingChangedSubject } from '@nhp/privacy-contracts';
import { waitFor } from '@nhp/shared-testing';
import { lastLines } from './fault';
import type { PrivacyClient, SetAnswer } from './privacy';
import { duplicates, readStream } from './stream';

export interface SetBurst {
  /** fnr -> its sets answered 200, in the order sent. */
  acked: Map<string, Array<{ aktiv: boolean; answer: SetAnswer['instansEndret'] }>>;
  /** fnr -> `aktiv` of the one set whose fate is unknown (no 200; the citizen's sequence ended). */
  unanswered: Map<string, boolean>;
}

/**
 * `clients` concurrent clients take the citizens in turn; each citizen's `sets` sets (true, false,
 * true, ...) are sent one after the other through `clientFor(citizen index)` (asked when the
 * citizen is taken up), and a citizen's sequence ends at its first set that is not answered 200.
 * `onAcked` is called after every 200 (the test's crash trigger).
 */
export async function runSetBurst(options: {
  citizens: string[];
  sets: number;
  clients: number;
  clientFor: (index: number) => PrivacyClient;
  onAcked?: () => void;
}): Promise<SetBurst> {
  const { citizens, sets } = options;
  const burst: SetBurst = { acked: new Map(), unanswered: new Map() };
  let next = 0;
  const client = async () => {
    for (let i = next++; i < citizens.length; i = next++) {
      const fnr = citizens[i] as string;
      const privacy = options.clientFor(i);
      burst.acked.set(fnr, []);
      for (let k = 0; k < sets; k++) {
        const aktiv = k % 2 === 0;
        const answer = await privacy.set(fnr, aktiv, 10_000).catch(() => undefined);
        if (answer?.status !== 200) {
          burst.unanswered.set(fnr, aktiv);
          break;
        }
        burst.acked.get(fnr)?.push({ aktiv, answer: answer.body.instansEndret });
        options.onAcked?.();
      }
    }
  };
  await Promise.all(Array.from({ length: options.clients }, client));
  return burst;
}

interface StoredSetting {
  innbyggerFnr: string;
  definisjonGuid: string;
  aktiv: boolean;
  sekvensnummer: number;
  history: Array<{ sekvensnummer: number; applied: boolean; aktiv: boolean }>;
  journal?: unknown[];
}

interface SettingChanged {
  id: string;
  data: { innbyggerFnr: string; definisjonGuid: string; sekvensnummer: number; aktiv: boolean };
}

/** The number of acknowledged changes (`endret` answers) of a burst. */
export function changesAcked(burst: SetBurst): number {
  return [...burst.acked.values()].flat().filter((a) => a.answer === 'endret').length;
}

/**
 * Asserts what must hold after the burst (see the top of this file), reading the database at
 * `mongoUri` and the stream on `natsUrl`, and checking the API's answers through `privacy` (a
 * live instance). `logOf` is the app whose last lines explain a journal that never drains.
 */
export async function expectBurstStoredWhole(options: {
  burst: SetBurst;
  citizens: string[];
  privacy: PrivacyClient;
  mongoUri: string;
  natsUrl: string;
  logOf: { name: string; lines: ReadonlyArray<Record<string, unknown>> };
}): Promise<void> {
  const { burst, citizens, privacy } = options;
  const client = await new MongoClient(options.mongoUri).connect();
  try {
    const settings = client.db().collection<StoredSetting>('privacy_settings');
    const stored = new Map(
      (await settings.find({ definisjonGuid: privacy.definisjonGuid }).toArray()).map((doc) => [
        doc.innbyggerFnr,
        doc,
      ]),
    );

    for (const fnr of citizens) {
      const mine = burst.acked.get(fnr) ?? [];
      const doc = stored.get(fnr);
      const applied = (doc?.history ?? []).filter((h) => h.applied);
      // Each acknowledged change is there, in order; the one set whose answer was lost may or may
      // not have been applied, but nothing else.
      const expectedAcked = mine.filter((a) => a.answer === 'endret').map((a) => a.aktiv);
      const lost = burst.unanswered.get(fnr);
      const possible =
        lost === undefined ? [expectedAcked] : [expectedAcked, [...expectedAcked, lost]];
      expect(possible.map((p) => ({ fnr, applied: p }))).toContainEqual({
        fnr,
        applied: applied.map((h) => h.aktiv),
      });
      if (applied.length === 0) {
        expect(doc).toBeUndefined();
        continue;
      }
      // Whole, not half: the state is the last applied change, numbered 1..n without a gap.
      expect({ fnr, numbers: applied.map((h) => h.sekvensnummer) }).toEqual({
        fnr,
        numbers: applied.map((_, i) => i + 1),
      });
      const last = { aktiv: applied[applied.length - 1]?.aktiv, sekvensnummer: applied.length };
      expect({ fnr, aktiv: doc?.aktiv, sekvensnummer: doc?.sekvensnummer }).toEqual({
        fnr,
        ...last,
      });
      // The API answers from the same state.
      const status = await privacy.status(fnr);
      expect(status.status).toBe(200);
      expect({ fnr, aktiv: status.body.aktiv, sekvensnummer: status.body.sekvensnummer }).toEqual({
        fnr,
        ...last,
      });
    }

    // Once the journal has relayed everything (the sweeper runs every 5 s): exactly one event and
    // one audit record per stored change, and none of a change the database does not hold.
    const storedChanges = new Set<string>();
    for (const doc of stored.values()) {
      for (const h of doc.history.filter((e) => e.applied)) {
        storedChanges.add(`${doc.innbyggerFnr}/${doc.definisjonGuid}/${h.sekvensnummer}`);
      }
    }
    await waitFor(
      'the journal to relay every change',
      async () =>
        (await settings.countDocuments({
          definisjonGuid: privacy.definisjonGuid,
          'journal.0': { $exists: true },
        })) === 0,
      { timeoutMs: 60_000, intervalMs: 500 },
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${lastLines(options.logOf)}`);
    });
    const events = (
      await readStream<SettingChanged>(options.natsUrl, PRIVACY_EVENTS_STREAM)
    ).filter((m) => m.subject === settingChangedSubject(privacy.partKode));
    const eventKeys = events.map(
      (e) =>
        `${e.body.data.innbyggerFnr}/${e.body.data.definisjonGuid}/${e.body.data.sekvensnummer}`,
    );
    expect(eventKeys.filter((k) => !storedChanges.has(k))).toEqual([]);
    expect(duplicates(eventKeys)).toEqual({});
    expect(duplicates(events.map((e) => e.body.id))).toEqual({});
    expect(eventKeys.length).toBe(storedChanges.size);

    // The audit trail names the same changes: one record (by entry id) per event.
    const audited = await client
      .db()
      .collection<{ _id: string; eventId?: string }>('privacy_audit')
      .find({ 'target.definisjonGuid': privacy.definisjonGuid, eventId: { $exists: true } })
      .toArray();
    expect(audited.map((r) => r.eventId).sort()).toEqual(events.map((e) => e.body.id).sort());
  } finally {
    await client.close();
  }
}
