import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { createDpopVerifier, ProofError, ReplayStoreUnavailableError } from '../src/dpop';
import { REPLAY_SLOT_BYTES, ReplayShares, ReplayTable } from '../src/replay-table';

const T0 = 1_800_000_000_000;
const keyOf = (name: string) =>
  ReplayTable.keyOf(createHash('sha256').update(`jkt:${name}`).digest());

/** The smallest table: 4096 slots; three quarters (3072) used makes it sweep or refuse. */
const SMALL = 4096 * REPLAY_SLOT_BYTES;

describe('ReplayTable', () => {
  it('when a key is claimed again before it expires, then it is a replay; after, it is fresh', () => {
    const table = new ReplayTable(SMALL);
    expect(table.claim(keyOf('a'), T0 + 60_000, T0)).toBe('fresh');
    expect(table.claim(keyOf('a'), T0 + 60_000, T0 + 59_000)).toBe('replay');
    expect(table.claim(keyOf('b'), T0 + 60_000, T0 + 59_000)).toBe('fresh');
    expect(table.claim(keyOf('a'), T0 + 200_000, T0 + 61_000)).toBe('fresh');
  });

  it('when an entry expires in the middle of a second, then it is kept until that second is over', () => {
    const table = new ReplayTable(SMALL);
    expect(table.claim(keyOf('a'), T0 + 60_500, T0)).toBe('fresh');
    expect(table.claim(keyOf('a'), T0 + 60_500, T0 + 60_499)).toBe('replay');
  });

  it('when a claimed key is released, then it may be claimed again', () => {
    const table = new ReplayTable(SMALL);
    table.claim(keyOf('a'), T0 + 60_000, T0);
    table.release(keyOf('a'), T0 + 1000);
    expect(table.claim(keyOf('a'), T0 + 60_000, T0 + 1000)).toBe('fresh');
  });

  it('when the table is full of live entries and cannot grow, then a new key is refused as full and every remembered key stays a replay', () => {
    const table = new ReplayTable(SMALL, SMALL);
    let fresh = 0;
    while (table.claim(keyOf(`k${fresh}`), T0 + 60_000, T0) === 'fresh') fresh += 1;
    expect(fresh).toBe(3072);
    expect(table.stats().bytes).toBe(SMALL);
    const again = Array.from({ length: fresh }, (_, i) =>
      table.claim(keyOf(`k${i}`), T0 + 60_000, T0 + 30_000),
    );
    expect(again.every((c) => c === 'replay')).toBe(true);
    expect(table.claim(keyOf('one more'), T0 + 90_000, T0 + 30_000)).toBe('full');
    // Once the entries expire, their slots are taken again.
    expect(table.claim(keyOf('one more'), T0 + 120_000, T0 + 61_000)).toBe('fresh');
    expect(table.claim(keyOf('k0'), T0 + 120_000, T0 + 61_000)).toBe('fresh');
  });

  it('when many keys are live at once, then the table grows up to its bytes and keeps every one', () => {
    const table = new ReplayTable(256 * 1024, SMALL);
    const claims = Array.from({ length: 10_000 }, (_, i) =>
      table.claim(keyOf(`k${i}`), T0 + 60_000, T0),
    );
    expect(claims.every((c) => c === 'fresh')).toBe(true);
    expect(table.stats().bytes).toBe(256 * 1024);
    const again = Array.from({ length: 10_000 }, (_, i) =>
      table.claim(keyOf(`k${i}`), T0 + 60_000, T0 + 1000),
    );
    expect(again.every((c) => c === 'replay')).toBe(true);
  });

  it('when entries keep expiring, then the table sweeps them and does not grow', () => {
    const table = new ReplayTable(1024 * 1024, SMALL);
    // 100 keys a second, each for 10 s: about 1000 live at any time, well under a quarter of 4096.
    const claims = Array.from({ length: 8000 }, (_, i) => {
      const now = T0 + i * 10;
      return table.claim(keyOf(`k${i}`), now + 10_000, now);
    });
    expect(claims.every((c) => c === 'fresh')).toBe(true);
    expect(table.stats().bytes).toBe(SMALL);
  });

  it('when the clock is set back, then remembered keys are still replays', () => {
    const table = new ReplayTable(SMALL);
    table.claim(keyOf('a'), T0 + 60_000, T0);
    expect(table.claim(keyOf('a'), T0 + 60_000, T0 - 7_200_000)).toBe('replay');
  });
});

describe('DPoP proofs against a full replay table', () => {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const { crv, x, y } = publicKey.export({ format: 'jwk' }) as Record<string, string>;
  const jkt = createHash('sha256')
    .update(JSON.stringify({ crv, kty: 'EC', x, y }))
    .digest('base64url');
  const accessToken = 'header.payload.signature';
  const ath = createHash('sha256').update(accessToken).digest('base64url');
  const b64 = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const header = b64({ typ: 'dpop+jwt', alg: 'ES256', jwk: { kty: 'EC', crv, x, y } });
  const url = 'https://privacy.example/personverninnstillinger/x';

  const proofOf = (jti: string, iat: number) => {
    const signed = `${header}.${b64({ jti, htm: 'POST', htu: url, iat, ath })}`;
    const signature = sign('sha256', Buffer.from(signed), {
      key: privateKey,
      dsaEncoding: 'ieee-p1363',
    });
    return `${signed}.${signature.toString('base64url')}`;
  };
  const check = (verify: ReturnType<typeof createDpopVerifier>, proof: string, nowMs: number) =>
    verify({ proof, method: 'POST', requestUrl: url, accessToken, jkt, nowMs });

  it('when the table is full, then a new proof is refused as unavailable, never accepted by forgetting one, and accepted once entries expire', async () => {
    // One key fills the whole table here: no share (ReplayShares is tested on its own).
    const verify = createDpopVerifier({
      iatWindowSec: 60,
      replayCacheBytes: SMALL,
      replayShare: 1,
    });
    const iat = T0 / 1000;
    const proofs: string[] = [];
    for (let i = 0; i < 3072; i++) {
      const proof = proofOf(`jti-${i}`, iat);
      await check(verify, proof, T0);
      proofs.push(proof);
    }
    await expect(check(verify, proofOf('one more', iat), T0)).rejects.toBeInstanceOf(
      ReplayStoreUnavailableError,
    );
    for (const proof of [proofs[0], proofs[1536], proofs[3071]] as string[]) {
      await expect(check(verify, proof, T0 + 59_000)).rejects.toThrow(ProofError);
      await expect(check(verify, proof, T0 + 59_000)).rejects.toThrow(/used before/);
    }
    const later = T0 + 61_000;
    await expect(check(verify, proofOf('one more', later / 1000), later)).resolves.toBeUndefined();
  });
});

describe('ReplayShares', () => {
  it('when a key has claimed its share, then it waits until its older claims stop counting, and other keys do not', () => {
    const shares = new ReplayShares(3, 60);
    const t0 = 1_000_000 * 120_000; // the start of a 120 s period
    for (let i = 0; i < 3; i++) {
      expect(shares.wait('a', t0 + i)).toBe(0);
      shares.count('a', t0 + i);
    }
    expect(shares.wait('a', t0 + 10_000)).toBe(230); // all in the current period: two periods on
    expect(shares.wait('b', t0 + 10_000)).toBe(0);
    // In the next period they are the previous one's: they count until it ends.
    expect(shares.wait('a', t0 + 130_000)).toBe(110);
    expect(shares.wait('a', t0 + 240_000)).toBe(0);
    expect(shares.size).toBe(1);
    shares.count('b', t0 + 500_000);
    expect(shares.size).toBe(1); // a's record, quiet for two periods, was dropped
  });
});
