/**
 * The client against real processes: privacy-api trusting the development issuer through its
 * JWKS URL, nats-server and the MongoDB-compatible server. Tokens come by client credentials
 * with private_key_jwt, bound to a DPoP key.
 */
import { randomUUID } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { importJWK, SignJWT, type JWK } from 'jose';
import { startPrivacyStack, type PrivacyStack } from '@nhp/privacy-dev-issuer';
import { syntheticFnr } from '@nhp/privacy-testing';
import {
  createPrivacyClient,
  PRIVACY_CLIENT_CODES,
  PrivacyApiError,
  type PrivacyClient,
} from '../src';

const SAMTYKKE_TEMPLATE = '7c1e0d3a-5b2f-4e8a-9c61-0a1b2c3d4e01';
const AUDIENCE = 'nhn:helsenorge.eksternapi';

let stack: PrivacyStack;

beforeAll(async () => {
  // Pages of two, so that a walk of three citizens follows the cursor.
  stack = await startPrivacyStack({ apiEnv: { PRIVACY_PAGE_SIZE: '2' } });
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

async function clientFor(
  scopes: Array<'read' | 'write' | 'admin'>,
  extra: { pid?: string; fetch?: typeof fetch } = {},
): Promise<{ client: PrivacyClient; clientId: string }> {
  const clientId = `client-${randomUUID()}`;
  const { privateJwk } = await stack.register({ clientId, scopes, pid: extra.pid });
  const client = createPrivacyClient({
    baseUrl: stack.apiUrl,
    fetch: extra.fetch,
    auth: {
      issuer: stack.issuerUrl,
      clientId,
      privateKey: privateJwk,
      scopes,
    },
  });
  return { client, clientId };
}

async function rejection(promise: Promise<unknown>): Promise<PrivacyApiError> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof PrivacyApiError) return err;
    throw err;
  }
  throw new Error('expected a PrivacyApiError');
}

describe('@nhp/privacy-client against privacy-api and the development issuer', () => {
  it('when a client gets its token by private_key_jwt and DPoP, then it can call every operation', async () => {
    const { client: admin } = await clientFor(['admin']);
    const partKode = `part-${randomUUID().slice(0, 8)}`;
    const definisjonGuid = randomUUID();

    await admin.opprettPart({ partKode, navn: 'Del' });
    await admin.endrePart({ partKode, navn: 'Del (ny)' });
    await admin.opprettInnstillingDefinisjon({
      definisjonMalGuid: SAMTYKKE_TEMPLATE,
      definisjonGuid,
      partKode,
      navn: 'Samtykke',
      replikering: true,
    });
    await admin.endreInnstillingDefinisjon({ definisjonGuid, visning: 'vis' });

    const { client, clientId } = await clientFor(['read', 'write']);
    await stack.admin('grant', '--client', clientId, '--part', partKode);

    const listing = await client.hentInnstillingDefinisjoner({ partKode });
    expect(listing.definisjoner).toEqual([
      expect.objectContaining({
        definisjonGuid,
        visning: 'vis',
        replikering: true,
        typePi: 'samtykke',
      }),
    ]);

    const fnrs = [syntheticFnr(1), syntheticFnr(2), syntheticFnr(3)];
    for (const innbyggerFnr of fnrs) {
      const set = await client.settInnbyggersPersonvernInnstilling({
        innbyggerFnr,
        definisjonGuid,
        partKode,
        typePi: 'samtykke',
        aktiv: true,
      });
      expect(set).toEqual({ returKode: 'ok', instansEndret: 'endret' });
    }
    const status = await client.sjekkInnbyggersPiStatus({
      innbyggerFnr: fnrs[0],
      definisjonGuid,
      partKode,
    });
    expect(status).toMatchObject({ aktiv: true, sekvensnummer: 1, typePi: 'samtykke' });
    const forPart = await client.hentInnbyggersPiForPart({ innbyggerFnr: fnrs[0], partKode });
    expect(forPart.personvernInnstillinger).toHaveLength(1);
    const proofs = await client.hentInnbyggersOpplastedeBevis({
      innbyggerFnr: fnrs[0],
      definisjonGuid,
      partKode,
    });
    expect(proofs.opplastedeBevis).toEqual([]);

    const walked: string[] = [];
    let pages = 0;
    for await (const page of client.activeCitizens({ definisjonGuid, partKode })) {
      pages += 1;
      walked.push(...page.personvernInnstillinger.map((p) => p.innbyggerFnr as string));
    }
    expect(pages).toBe(2);
    expect(walked.sort()).toEqual([...fnrs].sort());

    const inclusion = await client.settInnbyggersInkludering({
      innbyggerFnr: fnrs[1],
      partKode,
      personvernInnstillingDefinisjonId: definisjonGuid,
      inkluderingType: 'Inkludert',
      aktiv: true,
    });
    expect(inclusion).toMatchObject({ inkluderingType: 'Inkludert', aktiv: true });

    const pid = fnrs[2] as string;
    const { client: citizen } = await clientFor([], { pid });
    expect(await citizen.hentRepresentasjonsforhold()).toMatchObject({
      representasjonsforhold: [],
    });
    await citizen.opprettUngdomsappSamtykke();
    await citizen.slettUngdomsappSamtykke();
    expect(await client.health()).toBe(true);
  });

  it('when a DPoP proof is sent again, then privacy-api refuses it with 401 EPVK-100401', async () => {
    const sent: Array<{ url: string; init: RequestInit }> = [];
    const recording: typeof fetch = async (input, init) => {
      const url = input instanceof Request ? input.url : String(input);
      if (url.startsWith(stack.apiUrl)) sent.push({ url, init: { ...init } });
      return fetch(input, init);
    };
    const { client } = await clientFor(['read'], { fetch: recording });
    await expect(client.hentRepresentasjonsforhold()).rejects.toBeInstanceOf(PrivacyApiError);
    const first = sent[0];
    if (!first) throw new Error('the client sent nothing to privacy-api');
    const replay = await fetch(first.url, first.init);
    expect(replay.status).toBe(401);
    expect(await replay.json()).toMatchObject({
      code: 'EPVK-100401',
      errorCategory: 'ClientValidationError',
    });
  });

  it('when the client signs with a key it did not register, then no token is issued (PRIVACY_CLIENT_TOKEN, invalid_client)', async () => {
    const clientId = `client-${randomUUID()}`;
    await stack.register({ clientId, scopes: ['read'] });
    const { privateJwk: otherKey } = await stack.register({
      clientId: `other-${randomUUID()}`,
      scopes: ['read'],
    });
    const client = createPrivacyClient({
      baseUrl: stack.apiUrl,
      auth: { issuer: stack.issuerUrl, clientId, privateKey: otherKey },
    });
    const err = await rejection(client.hentInnstillingDefinisjoner({ partKode: 'helsenorge' }));
    expect(err.code).toBe(PRIVACY_CLIENT_CODES.token);
    expect(err.message).toMatch(/invalid_client:/);
  });

  it('when a token has expired, then privacy-api answers 401 EPVK-100401 SessionExpired', async () => {
    const keyFile = JSON.parse(
      await readFile(join(stack.dataDir, 'privacy-dev-key.json'), 'utf8'),
    ) as {
      kid: string;
      privateJwk: JWK;
    };
    const now = Math.floor(Date.now() / 1000);
    const expired = await new SignJWT({
      client_id: 'expired-client',
      scope: [`${AUDIENCE}/personverninnstilling_admin`],
    })
      .setProtectedHeader({ alg: 'ES256', typ: 'at+jwt', kid: keyFile.kid })
      .setIssuer(stack.issuerUrl)
      .setAudience(AUDIENCE)
      .setIssuedAt(now - 600)
      .setExpirationTime(now - 300)
      .sign(await importJWK(keyFile.privateJwk, 'ES256'));
    const client = createPrivacyClient({
      baseUrl: stack.apiUrl,
      auth: { accessToken: () => expired },
    });
    const err = await rejection(client.hentInnstillingDefinisjoner({ partKode: 'helsenorge' }));
    expect(err).toMatchObject({
      code: 'EPVK-100401',
      errorCategory: 'SessionExpired',
      httpStatus: 401,
    });
    expect(err.transient).toBe(false);
  });

  it('when DPoP is turned off for a client registered for Bearer tokens, then its token is sent as Bearer', async () => {
    const { privateJwk } = await stack.register({
      clientId: 'bearer-client',
      scopes: ['admin'],
      dpopBound: false,
    });
    // A Bearer token from the issuer itself, as an operator would fetch one for PRIVACY_CLIENT_TOKEN.
    const tokenClient = createPrivacyClient({
      baseUrl: stack.apiUrl,
      auth: {
        issuer: stack.issuerUrl,
        clientId: 'bearer-client',
        privateKey: privateJwk,
        scopes: ['admin'],
        dpopKeyPair: false,
      },
    });
    expect(
      (await tokenClient.hentInnstillingDefinisjoner({ partKode: 'helsenorge' })).partKode,
    ).toBe('helsenorge');
  });

  it('when a request is malformed, then the error carries the ErrorResponse code and category and is not retried', async () => {
    const { client } = await clientFor(['read']);
    const err = await rejection(
      client.sjekkInnbyggersPiStatus({
        innbyggerFnr: '13116950216',
        definisjonGuid: randomUUID(),
        partKode: 'x',
      }),
    );
    expect(err).toMatchObject({
      code: 'EPVK-101518',
      errorCategory: 'ClientValidationError',
      httpStatus: 400,
    });
    expect(err.transient).toBe(false);
  });
});
