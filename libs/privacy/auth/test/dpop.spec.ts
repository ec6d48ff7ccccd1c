import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import {
  createHash,
  generateKeyPairSync,
  generatePrimeSync,
  randomBytes,
  randomUUID,
} from 'node:crypto';
import { calculateJwkThumbprint, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import request from 'supertest';
import {
  accessTokenHash,
  createTestIssuer,
  type DpopKey,
  type DpopProofOptions,
  type TestIssuer,
} from '@nhp/privacy-testing';
import { captureLogs, testApp, type LogCapture } from './helpers';

/**
 * DPoP over a real listening server, so that the URL the proof names (htu) is the one the request
 * really went to.
 */
describe('authenticate with DPoP', () => {
  let issuer: TestIssuer;
  let key: DpopKey;
  let server: Server;
  let base: string;
  let logs: LogCapture;
  let clockMs = Date.now();
  const nowSec = () => Math.floor(clockMs / 1000);

  beforeAll(async () => {
    issuer = await createTestIssuer();
    key = await issuer.newDpopKey();
    logs = captureLogs();
    const { app } = testApp({
      ...issuer.authOptions(),
      logger: logs.logger,
      now: () => clockMs,
      dpop: { iatWindowSec: 60 },
    });
    server = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => server.once('listening', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });

  beforeEach(() => {
    clockMs = Date.now();
  });

  /** A proof of GET /whoami with the test's key for `token`; `claims` changes any of that. */
  const proofFor = (token: string, claims: Partial<DpopProofOptions> = {}) =>
    issuer.dpopProof({ key, method: 'GET', url: `${base}/whoami`, accessToken: token, ...claims });

  const boundToken = (k: DpopKey = key) =>
    issuer.mint({ dpopKey: k, scopes: ['read'], clientId: 'dpop-client', iat: nowSec() });

  async function call(
    token: string,
    proof: string | undefined,
    { path = '/whoami', method = 'GET', scheme = 'DPoP' } = {},
  ) {
    const req = method === 'POST' ? request(base).post(path) : request(base).get(path);
    req.set('Authorization', `${scheme} ${token}`);
    if (proof !== undefined) req.set('DPoP', proof);
    return req;
  }

  const expectProofRefused = (res: request.Response, pattern: RegExp) => {
    expect(res.status).toBe(401);
    expect(res.body).toMatchObject({ code: 'EPVK-100401', category: 'authentication' });
    expect(res.body.message).toMatch(pattern);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer, DPoP error="invalid_dpop_proof"/);
  };

  it('when a bound token comes as DPoP with a fresh proof, then the caller is known', async () => {
    const token = await boundToken();
    const proof = await proofFor(token, { iat: nowSec() });
    const res = await call(token, proof);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ clientId: 'dpop-client', scheme: 'DPoP', read: true });
  });

  it('when the proof htu has a query, a fragment, an upper-case host or the default port missing from the path, then only scheme, host and path count', async () => {
    const token = await boundToken();
    const url = `${base.replace('http://', 'HTTP://')}/whoami?ignored=1#frag`;
    const proof = await issuer.dpopProof({ key, method: 'GET', url, accessToken: token });
    expect((await call(token, proof, { path: '/whoami?x=2' })).status).toBe(200);
  });

  it('when the method differs from htm, then 401', async () => {
    const token = await boundToken();
    const proof = await proofFor(token, { method: 'POST' });
    expectProofRefused(await call(token, proof), /htm/);
  });

  it.each([
    ['another path', '/other'],
    ['another path case', '/WhoAmI'],
    ['another host', 'http://localhost:1/whoami'],
    ['another scheme', 'https://127.0.0.1/whoami'],
    ['a relative URL', '/whoami'],
  ])('when htu names %s, then 401', async (_name, target) => {
    const token = await boundToken();
    const url = target.startsWith('http') || _name === 'a relative URL' ? target : base + target;
    const proof = await issuer.dpopProof({ key, method: 'GET', url, accessToken: token });
    expectProofRefused(await call(token, proof), /htu/);
  });

  it('when ath is of another token, then 401', async () => {
    const token = await boundToken();
    const other = await boundToken();
    const proof = await issuer.dpopProof({
      key,
      method: 'GET',
      url: `${base}/whoami`,
      accessToken: other,
    });
    expectProofRefused(await call(token, proof), /ath/);
  });

  it('when the proof has no ath, then 401', async () => {
    const token = await boundToken();
    const proof = await issuer.dpopProof({ key, method: 'GET', url: `${base}/whoami` });
    expectProofRefused(await call(token, proof), /ath/);
  });

  it.each([
    ['too old', -61],
    ['too far ahead', 61],
  ])('when iat is %s, then 401', async (_name, offset) => {
    const token = await boundToken();
    const proof = await proofFor(token, { iat: nowSec() + offset });
    expectProofRefused(await call(token, proof), /iat/);
  });

  it('when a proof is replayed within its window, then the second use is refused', async () => {
    const token = await boundToken();
    const proof = await proofFor(token, { iat: nowSec() });
    expect((await call(token, proof)).status).toBe(200);
    clockMs += 30_000;
    expectProofRefused(await call(token, proof), /used before/);
  });

  it('when a refused proof is sent again after a fix elsewhere, then its jti was not burnt', async () => {
    const token = await boundToken();
    const jti = 'reusable-after-refusal';
    const wrong = await proofFor(token, { jti, extra: { htm: 'DELETE' } });
    expectProofRefused(await call(token, wrong), /htm/);
    const right = await proofFor(token, { jti });
    expect((await call(token, right)).status).toBe(200);
  });

  it('when the proof is signed by another key than cnf.jkt names, then 401', async () => {
    const token = await boundToken();
    const other = await issuer.newDpopKey();
    const proof = await proofFor(token, { key: other });
    expectProofRefused(await call(token, proof), /bound to/);
  });

  it('when the proof header carries one key but is signed by another, then 401', async () => {
    const token = await boundToken();
    const other = await issuer.newDpopKey();
    const proof = await proofFor(token, { key: { ...key, privateKey: other.privateKey } });
    expectProofRefused(await call(token, proof), /signature/);
  });

  it('when the proof typ is not dpop+jwt, then 401', async () => {
    const token = await boundToken();
    const proof = await proofFor(token, { typ: 'JWT' });
    expectProofRefused(await call(token, proof), /malformed/);
  });

  it('when the proof is an RS256 proof by an RSA key the token is bound to, then it is accepted', async () => {
    const rsa = await issuer.newDpopKey('RS256');
    const token = await boundToken(rsa);
    const proof = await proofFor(token, { key: rsa, method: 'POST' });
    expect((await call(token, proof, { method: 'POST' })).status).toBe(200);
  });

  it('when the proof is a PS256 proof by an RSA key the token is bound to, then it is accepted', async () => {
    const rsa = await issuer.newDpopKey('PS256');
    const token = await boundToken(rsa);
    const proof = await proofFor(token, { key: rsa });
    expect((await call(token, proof)).status).toBe(200);
  });

  it('when the same key signs many proofs, then each is still checked against its own signature and claims', async () => {
    const token = await boundToken();
    const proof = () => proofFor(token);
    expect((await call(token, await proof())).status).toBe(200);
    expect((await call(token, await proof())).status).toBe(200);
    const [h, p, sig] = (await proof()).split('.') as [string, string, string];
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString('utf8'));
    const forged = Buffer.from(JSON.stringify({ ...claims, htm: 'POST' })).toString('base64url');
    expectProofRefused(await call(token, `${h}.${forged}.${sig}`, { method: 'POST' }), /signature/);
    const flipped = `${sig.slice(0, 10)}${sig[10] === 'A' ? 'B' : 'A'}${sig.slice(11)}`;
    expectProofRefused(await call(token, `${h}.${p}.${flipped}`), /signature/);
    // The header checked before still names its own key, not the key another token is bound to.
    const otherToken = await boundToken(await issuer.newDpopKey());
    const underKnownHeader = await issuer.dpopProof({
      key,
      method: 'GET',
      url: `${base}/whoami`,
      accessToken: otherToken,
    });
    expectProofRefused(await call(otherToken, underKnownHeader), /bound to/);
  });

  /** A proof with a hand-made header, signed by `key` (for the header checks jose's SignJWT allows). */
  async function proofWith(
    header: Record<string, unknown>,
    claims: Record<string, unknown>,
    token: string,
  ) {
    return new SignJWT({
      jti: randomUUID(),
      htm: 'GET',
      htu: `${base}/whoami`,
      iat: nowSec(),
      ath: accessTokenHash(token),
      ...claims,
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk: key.publicJwk, ...header })
      .sign(key.privateKey, { crit: { 'urn:example:ext': true } });
  }

  it('when the jwk header carries private key material, then 401', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const own: DpopKey = {
      alg: 'ES256',
      privateKey,
      publicJwk,
      jkt: await calculateJwkThumbprint(publicJwk, 'sha256'),
    };
    const token = await boundToken(own);
    const withJwk = async (jwk: JWK) =>
      new SignJWT({
        jti: randomUUID(),
        htm: 'GET',
        htu: `${base}/whoami`,
        iat: nowSec(),
        ath: accessTokenHash(token),
      })
        .setProtectedHeader({ alg: 'ES256', typ: 'dpop+jwt', jwk })
        .sign(privateKey);
    expectProofRefused(await call(token, await withJwk(await exportJWK(privateKey))), /malformed/);
    expect((await call(token, await withJwk(publicJwk))).status).toBe(200);
  });

  it('when the jwk header is not of the algorithm, or restricted to other uses, then 401', async () => {
    const token = await boundToken();
    const rsa = await issuer.newDpopKey('RS256');
    for (const header of [
      { jwk: rsa.publicJwk },
      { jwk: { ...key.publicJwk, use: 'enc' } },
      { jwk: { ...key.publicJwk, alg: 'RS256' } },
      { jwk: { ...key.publicJwk, key_ops: ['encrypt'] } },
      { jwk: undefined },
      { crit: ['urn:example:ext'], 'urn:example:ext': 1 },
    ]) {
      const proof = await proofWith(header, {}, token);
      expectProofRefused(await call(token, proof), /malformed|jwk/);
    }
    const allowed = await proofWith({ jwk: { ...key.publicJwk, use: 'sig' } }, {}, token);
    expect((await call(token, allowed)).status).toBe(200);
  });

  /**
   * An RS256 proof under an RSA key given by its primes (n is their product), signed with the
   * private exponent computed here: keys no honest client has, built so that the proof's signature
   * is valid and only the key rules can refuse it.
   */
  async function rsaProofByPrimes(primes: bigint[], e: bigint) {
    const n = primes.reduce((a, b) => a * b, 1n);
    const phi = primes.reduce((a, p) => a * (p - 1n), 1n);
    const publicJwk = { kty: 'RSA', n: toBase64url(n), e: toBase64url(e) };
    return rsaProof(publicJwk, n, (m) => modPow(m, modInverse(e, phi), n));
  }

  async function rsaProof(
    publicJwk: { kty: string; n: string; e: string },
    n: bigint,
    signWith: (message: bigint) => bigint,
  ) {
    const jkt = await calculateJwkThumbprint(publicJwk as JWK, 'sha256');
    const token = await boundToken({ jkt } as DpopKey);
    const header = { alg: 'RS256', typ: 'dpop+jwt', jwk: publicJwk };
    const claims = {
      jti: randomUUID(),
      htm: 'GET',
      htu: `${base}/whoami`,
      iat: nowSec(),
      ath: accessTokenHash(token),
    };
    const signed = `${b64json(header)}.${b64json(claims)}`;
    const size = Math.ceil(n.toString(16).length / 2);
    const signature = signWith(pkcs1Sha256(signed, size));
    return { token, proof: `${signed}.${toBase64url(signature, size)}` };
  }

  it('when an RSA key has public exponent 1, then the proof (its padded hash alone) is refused', async () => {
    // Any 2048-bit odd number as the modulus: with e = 1 the "signature" is the padded hash itself.
    const n = BigInt(`0x${randomBytes(256).toString('hex')}`) | (1n << 2047n) | 1n;
    const publicJwk = { kty: 'RSA', n: toBase64url(n), e: 'AQ' };
    const { token, proof } = await rsaProof(publicJwk, n, (m) => m);
    expectProofRefused(await call(token, proof), /malformed/);
  });

  it('when an RSA key has public exponent 3, then the proof is refused', async () => {
    const { publicKey, privateKey } = generateKeyPairSync('rsa', {
      modulusLength: 2048,
      publicExponent: 3,
    });
    const publicJwk = publicKey.export({ format: 'jwk' }) as { kty: string; n: string; e: string };
    const n = BigInt(`0x${Buffer.from(publicJwk.n, 'base64url').toString('hex')}`);
    const { token, proof } = await rsaProof(publicJwk, n, (m) => {
      const d = BigInt(
        `0x${Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url').toString('hex')}`,
      );
      return modPow(m, d, n);
    });
    expectProofRefused(await call(token, proof), /malformed/);
  });

  it('when an RSA modulus is a prime, has a small factor, or is longer than 8192 bits, then the proof is refused', async () => {
    const prime = (bits: number) => generatePrimeSync(bits, { bigint: true });
    for (const primes of [
      [prime(2048)],
      [3n, prime(2048)],
      // 8,400 bits, of five primes: quick to make, and a key no client needs.
      [prime(1680), prime(1680), prime(1680), prime(1680), prime(1680)],
    ]) {
      const { token, proof } = await rsaProofByPrimes(primes, 65537n);
      expectProofRefused(await call(token, proof), /malformed/);
    }
    // The same construction with two primes of 1024 bits (each with its top two bits set, so the
    // modulus has 2048) is an ordinary key, and passes.
    const { token, proof } = await rsaProofByPrimes([prime(1024), prime(1024)], 65537n);
    expect((await call(token, proof)).status).toBe(200);
  });

  it('when an EC key is not a point on its curve, then the proof is refused', async () => {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    const publicJwk = await exportJWK(publicKey);
    const y = Buffer.from(publicJwk.y as string, 'base64url');
    y[31] = (y[31] as number) ^ 1;
    const offCurve = { ...publicJwk, y: y.toString('base64url') };
    const own: DpopKey = {
      alg: 'ES256',
      privateKey,
      publicJwk: offCurve,
      jkt: await calculateJwkThumbprint(offCurve, 'sha256'),
    };
    const token = await boundToken(own);
    const proof = await proofFor(token, { key: own });
    expectProofRefused(await call(token, proof), /malformed/);
  });

  it('when the proof alg is not on the allow-list or the proof is not a compact JWS, then 401', async () => {
    const token = await boundToken();
    const good = await proofFor(token);
    const [, p, sig] = good.split('.') as [string, string, string];
    const header = (h: Record<string, unknown>) =>
      Buffer.from(JSON.stringify({ typ: 'dpop+jwt', jwk: key.publicJwk, ...h })).toString(
        'base64url',
      );
    for (const proof of [
      `${header({ alg: 'none' })}.${p}.`,
      `${header({ alg: 'HS256' })}.${p}.${sig}`,
      `${header({ alg: 'ES384' })}.${p}.${sig}`,
      `${good}.${sig}`,
      `${header({ alg: 'ES256' })}.${p}.${sig}!`,
      `${Buffer.from('[1]').toString('base64url')}.${p}.${sig}`,
    ]) {
      expectProofRefused(await call(token, proof), /malformed/);
    }
  });

  it('when the proof has expired (exp) or is not yet valid (nbf), then 401', async () => {
    const token = await boundToken();
    for (const claims of [{ exp: nowSec() - 1 }, { nbf: nowSec() + 30 }, { exp: 'soon' }]) {
      expectProofRefused(await call(token, await proofWith({}, claims, token)), /malformed/);
    }
    const fine = await proofWith({}, { exp: nowSec() + 30 }, token);
    expect((await call(token, fine)).status).toBe(200);
  });

  it('when the DPoP header is missing or doubled, then 401', async () => {
    const token = await boundToken();
    expectProofRefused(await call(token, undefined), /DPoP proof header/);
    const proof = await proofFor(token);
    expectProofRefused(await call(token, `${proof}, ${proof}`), /DPoP proof header/);
  });

  it('when a DPoP-bound token is sent as Bearer, then 401 even with a valid proof', async () => {
    const token = await boundToken();
    const proof = await proofFor(token);
    const res = await call(token, proof, { scheme: 'Bearer' });
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/DPoP-bound/);
    expect(res.headers['www-authenticate']).toMatch(/^Bearer error="invalid_token"/);
  });

  it('when an unbound token is sent as DPoP with a proof, then 401', async () => {
    const token = await issuer.mint({ scopes: ['read'], iat: nowSec() });
    const proof = await proofFor(token);
    const res = await call(token, proof);
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/cnf\.jkt/);
    expect(res.headers['www-authenticate']).toMatch(/DPoP error="invalid_token"/);
  });

  it('then no proof or token reached the log', () => {
    expect(logs.text()).not.toMatch(/eyJ[A-Za-z0-9_-]{20,}/);
  });
});

describe('DPoP behind a proxy', () => {
  it('when the app trusts the proxy, then htu is checked against X-Forwarded-Proto and -Host and the full path', async () => {
    const issuer = await createTestIssuer();
    const key = await issuer.newDpopKey();
    const { app } = testApp(issuer.authOptions(), { trustProxy: true });
    const token = await issuer.mint({ dpopKey: key, scopes: ['read'] });
    const url = 'https://api.example.no/base/path/whoami';
    const proof = await issuer.dpopProof({ key, method: 'GET', url, accessToken: token });
    const res = await request(app)
      .get('/base/path/whoami')
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'API.example.no')
      .set('Authorization', `DPoP ${token}`)
      .set('DPoP', proof);
    expect(res.status).toBe(200);
  });

  it('when the app does not trust the proxy, then forwarded headers are ignored and the proof fails', async () => {
    const issuer = await createTestIssuer();
    const key = await issuer.newDpopKey();
    const { app } = testApp(issuer.authOptions(), { trustProxy: false });
    const token = await issuer.mint({ dpopKey: key, scopes: ['read'] });
    const url = 'https://api.example.no/base/path/whoami';
    const proof = await issuer.dpopProof({ key, method: 'GET', url, accessToken: token });
    const res = await request(app)
      .get('/base/path/whoami')
      .set('X-Forwarded-Proto', 'https')
      .set('X-Forwarded-Host', 'api.example.no')
      .set('Authorization', `DPoP ${token}`)
      .set('DPoP', proof);
    expect(res.status).toBe(401);
    expect(res.body.message).toMatch(/htu/);
  });
});

const b64json = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

function toBase64url(value: bigint, size?: number): string {
  let hex = value.toString(16);
  if (hex.length % 2) hex = `0${hex}`;
  const bytes = Buffer.from(hex, 'hex');
  const padded =
    size === undefined ? bytes : Buffer.concat([Buffer.alloc(size - bytes.length), bytes]);
  return padded.toString('base64url');
}

/** EMSA-PKCS1-v1_5 of SHA-256 (RFC 8017 §9.2), `size` bytes, as a number. */
function pkcs1Sha256(text: string, size: number): bigint {
  const digestInfo = Buffer.concat([
    Buffer.from('3031300d060960864801650304020105000420', 'hex'),
    createHash('sha256').update(text).digest(),
  ]);
  const padding = Buffer.alloc(size - digestInfo.length - 3, 0xff);
  const encoded = Buffer.concat([Buffer.from([0, 1]), padding, Buffer.from([0]), digestInfo]);
  return BigInt(`0x${encoded.toString('hex')}`);
}

function modPow(base: bigint, exponent: bigint, modulus: bigint): bigint {
  let result = 1n;
  let b = base % modulus;
  for (let e = exponent; e > 0n; e >>= 1n) {
    if (e & 1n) result = (result * b) % modulus;
    b = (b * b) % modulus;
  }
  return result;
}

function modInverse(a: bigint, m: bigint): bigint {
  let [oldR, r] = [a % m, m];
  let [oldS, s] = [1n, 0n];
  while (r !== 0n) {
    const q = oldR / r;
    [oldR, r] = [r, oldR - q * r];
    [oldS, s] = [s, oldS - q * s];
  }
  return ((oldS % m) + m) % m;
}
