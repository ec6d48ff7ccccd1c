/**
 * The proofs' `jti`s this instance has accepted, each until its proof leaves the `iat` window, in
 * one typed array bounded in bytes: 16 bytes a slot (96 bits of SHA-256(jkt:jti) and the second it
 * expires), open addressing with linear probing. No object per entry, so the garbage collector
 * never walks it and the memory is the array's. It starts at 256 KiB and, when three quarters of
 * its slots are used, is rebuilt without its expired entries, twice as large if the live ones
 * would still fill half of it, up to `maxBytes` (during a rebuild the old array is held too).
 *
 * Full: at `maxBytes`, a rebuild that would leave live entries in more than 11/16 of the slots
 * does not happen, and `claim` answers `full` (the caller refuses the proof, 503-class, "try
 * again") until entries expire; a sweep is tried again at most once a second. A live entry is
 * never evicted, so a proof replayed within its window is never accepted. What fits: `maxBytes /
 * 16 × 11/16` live proofs; at 8 MiB, 360 000, which at a 60 s window (a proof is remembered from
 * its arrival until its `iat` + 60 s) is 6,000 proofs a second, sustained.
 *
 * 96 bits of a hash for the key: a new proof shares one with a live entry with a probability of
 * about n / 2^96 for n live entries (n = 360 000: 5e-24), and what that would cost is one good
 * proof refused as a replay, never a replay accepted.
 */

const WORDS_PER_SLOT = 4;
export const REPLAY_SLOT_BYTES = WORDS_PER_SLOT * 4;
const MIN_SLOTS = 4096;
/** Live entries may fill this share of the slots; above it the table sweeps, grows or is full. */
const MAX_LOAD = 0.75;

export type ClaimResult = 'fresh' | 'replay' | 'full';

export interface ReplayTableStats {
  /** Slots in use (live, or expired and not yet swept). */
  occupied: number;
  slots: number;
  bytes: number;
  maxBytes: number;
}

function slotsFor(bytes: number): number {
  let slots = MIN_SLOTS;
  while (slots * 2 * REPLAY_SLOT_BYTES <= bytes) slots *= 2;
  return slots;
}

export class ReplayTable {
  private words: Uint32Array;
  private mask: number;
  private occupied = 0;
  private readonly maxSlots: number;
  /**
   * Seconds are stored relative to this (ms since the epoch), so that they fit 32 bits: an hour
   * before the first claim, so that a clock set back by less than that still counts forward.
   */
  private epochMs: number | undefined;
  /** The second of the last sweep that left the table full: at most one such sweep a second. */
  private fullSince = -1;

  constructor(
    /** Largest size of the table, in bytes (rounded down to a power of two of slots; at least 64 KiB). */
    readonly maxBytes: number,
    initialBytes = 256 * 1024,
  ) {
    this.maxSlots = slotsFor(maxBytes);
    const slots = Math.min(this.maxSlots, slotsFor(initialBytes));
    this.words = new Uint32Array(slots * WORDS_PER_SLOT);
    this.mask = slots - 1;
  }

  /** The 96-bit key of a proof: the first 12 bytes of `digest`, SHA-256 of `jkt:jti`. */
  static keyOf(digest: Buffer): Uint32Array {
    return Uint32Array.of(digest.readUInt32LE(0), digest.readUInt32LE(4), digest.readUInt32LE(8));
  }

  /**
   * Remembers `key` until `untilMs` unless a live entry has it: `fresh` (remembered now),
   * `replay` (live already), or `full` (not remembered: no room without dropping a live entry).
   */
  claim(key: Uint32Array, untilMs: number, nowMs: number): ClaimResult {
    this.epochMs ??= nowMs - 3_600_000;
    const now = this.secondsOf(nowMs);
    // Rounded up: an entry never expires before its proof does (and never is 0, an empty slot).
    const until = Math.max(now + 1, Math.ceil((untilMs - this.epochMs) / 1000));
    const found = this.find(key, now);
    if (found.live) return 'replay';
    if (found.reusable >= 0) {
      this.write(found.reusable, key, until);
      return 'fresh';
    }
    if (this.occupied + 1 > this.slots * MAX_LOAD) {
      if (!this.makeRoom(now)) return 'full';
      return this.claim(key, untilMs, nowMs);
    }
    this.write(found.empty, key, until);
    this.occupied += 1;
    return 'fresh';
  }

  /** Forgets `key` (a proof remembered but then not accepted, so that its retry is not a replay). */
  release(key: Uint32Array, nowMs: number): void {
    const found = this.find(key, this.secondsOf(nowMs));
    // Expired rather than emptied: emptying a slot would cut the probe chains that run through it.
    if (found.live) this.words[found.index * WORDS_PER_SLOT + 3] = 1;
  }

  /** Live proofs the table holds at most (at `maxBytes`, the share a full sweep leaves). */
  get capacity(): number {
    return Math.floor(this.maxSlots * (MAX_LOAD - 1 / 16));
  }

  stats(): ReplayTableStats {
    return {
      occupied: this.occupied,
      slots: this.slots,
      bytes: this.words.byteLength,
      maxBytes: this.maxSlots * REPLAY_SLOT_BYTES,
    };
  }

  private get slots(): number {
    return this.mask + 1;
  }

  /** Seconds since epochMs, at least 1: a clock set back further sees every entry as live. */
  private secondsOf(ms: number): number {
    return Math.max(1, Math.floor((ms - (this.epochMs ?? ms)) / 1000));
  }

  /**
   * The probe chain of `key`: whether a live entry has it (and where), the first expired slot on
   * the chain (-1: none), and the empty slot that ends the chain.
   */
  private find(key: Uint32Array, now: number) {
    const words = this.words;
    const k0 = key[0] as number;
    const k1 = key[1] as number;
    const k2 = key[2] as number;
    let reusable = -1;
    for (let i = k0 & this.mask; ; i = (i + 1) & this.mask) {
      const at = i * WORDS_PER_SLOT;
      const until = words[at + 3] as number;
      if (until === 0) return { live: false, index: -1, reusable, empty: i };
      if (until > now) {
        if (words[at] === k0 && words[at + 1] === k1 && words[at + 2] === k2) {
          return { live: true, index: i, reusable, empty: -1 };
        }
      } else if (reusable < 0) {
        reusable = i;
      }
    }
  }

  private write(index: number, key: Uint32Array, until: number): void {
    const at = index * WORDS_PER_SLOT;
    this.words[at] = key[0] as number;
    this.words[at + 1] = key[1] as number;
    this.words[at + 2] = key[2] as number;
    this.words[at + 3] = until;
  }

  /**
   * Rebuilds the table without its expired entries, twice as large when the live ones would still
   * fill more than half of it (up to maxSlots). False when the live entries leave no room.
   */
  private makeRoom(now: number): boolean {
    if (this.fullSince === now) return false;
    const words = this.words;
    let live = 0;
    for (let at = 3; at < words.length; at += WORDS_PER_SLOT) {
      if ((words[at] as number) > now) live += 1;
    }
    // Grown until the live entries fill at most half of it, so the next rebuild is far off; at
    // full size, a sweep that would leave less than 1/16 of the slots free counts as full, so
    // that sweeps (a pass over every slot) stay rare even then.
    let slots = this.slots;
    while (live + 1 > slots / 2 && slots < this.maxSlots) slots *= 2;
    if (live + 1 > slots * (MAX_LOAD - 1 / 16)) {
      this.fullSince = now;
      return false;
    }
    this.fullSince = -1;
    this.words = new Uint32Array(slots * WORDS_PER_SLOT);
    this.mask = slots - 1;
    this.occupied = 0;
    for (let at = 0; at < words.length; at += WORDS_PER_SLOT) {
      const until = words[at + 3] as number;
      if (until <= now) continue;
      const key = words.subarray(at, at + 3);
      this.write(this.find(key, now).empty, key, until);
      this.occupied += 1;
    }
    return true;
  }
}

/**
 * Each DPoP key's share of the replay table: how many proofs one key may have remembered at once.
 * Without it one client with one valid token could fill the table (it takes every accepted proof,
 * even one whose request then gets a 404), and every other client's proofs would be refused until
 * entries expired. Shares are per key (the token's `cnf.jkt`), not per client id: all devices of
 * one app share its client id, each with its own key, so one user of an app cannot lock out the
 * others; a key is only had with a token bound to it.
 *
 * A remembered proof lives at most `2 × window` seconds from its claim (its `iat` may be a window
 * ahead of the clock, and it is remembered until `iat` + window), so a key's live entries are
 * among its claims of the last `2 × window` seconds. They are counted in two periods of that
 * length, the current one and the previous one: their sum is at least the key's live entries, so a
 * key held to `share` claims in them never has more than `share` live. One small record per key
 * that claimed within the last two periods; records of keys quiet for two periods are dropped.
 */
export class ReplayShares {
  private readonly keys = new Map<string, { period: number; current: number; previous: number }>();
  private readonly periodSec: number;
  private prunedPeriod = 0;

  constructor(
    /** Live proofs one key may hold. */
    readonly share: number,
    /** The proof window (seconds): a period is twice it. */
    windowSec: number,
  ) {
    this.periodSec = Math.max(1, 2 * windowSec);
  }

  /**
   * 0 when `key` may remember one more proof now; else the seconds until it may (its older
   * period's claims no longer count).
   */
  wait(key: string, nowMs: number): number {
    const period = this.periodOf(nowMs);
    const record = this.current(key, period);
    if (!record || record.current + record.previous < this.share) return 0;
    const nowSec = nowMs / 1000;
    const periodsAhead = record.previous > 0 ? 1 : 2;
    return Math.max(1, Math.ceil((period + periodsAhead) * this.periodSec - nowSec));
  }

  /** Counts a proof of `key` remembered now. */
  count(key: string, nowMs: number): void {
    const period = this.periodOf(nowMs);
    this.prune(period);
    const record = this.current(key, period);
    if (record) record.current += 1;
    else this.keys.set(key, { period, current: 1, previous: 0 });
  }

  /** Keys with a record (tests, metrics). */
  get size(): number {
    return this.keys.size;
  }

  private periodOf(nowMs: number): number {
    return Math.floor(nowMs / 1000 / this.periodSec);
  }

  /** The key's record rolled forward to `period` (undefined: no claims in the last two periods). */
  private current(key: string, period: number) {
    const record = this.keys.get(key);
    if (!record) return undefined;
    if (record.period === period) return record;
    if (record.period === period - 1) {
      record.previous = record.current;
      record.current = 0;
      record.period = period;
      return record;
    }
    if (record.period > period) return record; // a clock set back: keep counting
    this.keys.delete(key);
    return undefined;
  }

  /** Once a period: drops the records of keys that claimed nothing in the last two periods. */
  private prune(period: number): void {
    if (period === this.prunedPeriod) return;
    this.prunedPeriod = period;
    for (const [key, record] of this.keys) if (record.period < period - 1) this.keys.delete(key);
  }
}
