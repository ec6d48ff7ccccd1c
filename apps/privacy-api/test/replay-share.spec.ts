/**
 * The DPoP replay table gives each key a share: one client cannot fill it and lock every other
 * client out. privacy-api as a process with the smallest table PRIVACY_DPOP_REPLAY_MAX_BYTES
 * allows (64 KiB: 2,816 live proofs, 352 a key), filled over HTTP.
 */
import { useTestInfra, withDatabase } from '@nhp/shared-testing';
import { runApp, trustedIssuer, type AppProcess, type TrustedIssuer } from './support/app-process';

const infra = useTestInfra();
const SHARE = 352;

let trust: TrustedIssuer;
let app: AppProcess;

beforeAll(async () => {
  trust = await trustedIssuer();
  app = await runApp({
    ...trust.env,
    MONGO_URL: withDatabase(infra.get().mongoUri, `${infra.get().dbName}_replay_share`),
    PRIVACY_DPOP_REPLAY_MAX_BYTES: String(64 * 1024),
  });
  expect(await app.healthy()).toBe(true);
}, 90_000);

afterAll(async () => {
  await app?.stop();
  await trust?.dispose();
});

/** A client with its own DPoP key: `call()` sends GET /nope with a fresh proof. */
async function dpopClient() {
  const key = await trust.issuer.newDpopKey();
  const token = await trust.issuer.mint({ scopes: ['read'], dpopKey: key, expiresInSec: 600 });
  const url = `${app.url}/nope`;
  return async () => {
    const proof = await trust.issuer.dpopProof({ key, method: 'GET', url, accessToken: token });
    const res = await fetch(url, { headers: { authorization: `DPoP ${token}`, dpop: proof } });
    return {
      status: res.status,
      retryAfter: res.headers.get('retry-after'),
      body: await res.json(),
    };
  };
}

describe('the DPoP replay table', () => {
  it('when one key sends more proofs than its share, then it alone is refused with 429 EPVK-100429 and Retry-After, and other keys go on', async () => {
    const greedy = await dpopClient();
    const other = await dpopClient();
    // Every proof of its share is remembered (the request itself is a 404).
    for (let i = 0; i < SHARE; i++) expect((await greedy()).status).toBe(404);
    const refused = await greedy();
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: 'EPVK-100429' });
    expect(Number(refused.retryAfter)).toBeGreaterThan(0);
    expect(Number(refused.retryAfter)).toBeLessThanOrEqual(240);
    // Another key is not held back, and keeps its own share.
    for (let i = 0; i < 10; i++) expect((await other()).status).toBe(404);
    expect((await greedy()).status).toBe(429);
  });
});
