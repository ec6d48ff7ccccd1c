import {
  hentInnbyggereAktivePiForDefinisjonV2ResponseSchema,
  hentInnbyggersOpplastedeBevisV2ResponseSchema,
  hentInnbyggersPiV2ResponseSchema,
  personvernInnstillingV2Schema,
} from '@nhp/privacy-contracts';
import { PROOFS_COLLECTION, SETTINGS_COLLECTION } from '@nhp/privacy-data-access';
import type { Definition } from '@nhp/privacy-domain';
import { syntheticFnr } from '@nhp/privacy-testing';
import { present } from '@nhp/shared-testing';
import request from 'supertest';
import { TEMPLATES, TEST_CLIENT, usePrivacyHarness } from './support/harness';
import { PATHS, PROOF_BYTES } from './settings-fixtures';

const BASE_PATH = '/personvern';
const h = usePrivacyHarness({ options: { basePath: BASE_PATH, pageSize: 4 } });

let fnrSeq = 1000;
const nextFnr = () => syntheticFnr(fnrSeq++);

async function writer() {
  return h.get().bearer(await h.get().token());
}

async function seeded(template: string = TEMPLATES.reservasjon, extra: Partial<Definition> = {}) {
  const definition = await h.get().seedDefinition({ template, ...extra });
  await h.get().grant(TEST_CLIENT, definition.partKode);
  return definition;
}

async function post(path: string, body: unknown, auth?: string) {
  const req = request(h.get().app).post(path);
  if (auth !== undefined) req.set('Authorization', auth);
  return req.send(body as object);
}

function setBody(
  definition: Definition,
  innbyggerFnr: string,
  extra: Record<string, unknown> = {},
) {
  return {
    innbyggerFnr,
    definisjonGuid: definition.definisjonGuid,
    partKode: definition.partKode,
    typePi: definition.typePi,
    aktiv: true,
    ...extra,
  };
}

const settingsOf = (fnr: string) => h.get().count(SETTINGS_COLLECTION, { innbyggerFnr: fnr });

describe('settinnbyggerspersonverninnstilling', () => {
  it('when a client sets a reservation as real clients send it (lower-case typePi, no nulls, no tidspunkt), then endret, and the same request again ikkeEndret', async () => {
    const def = await seeded();
    const fnr = nextFnr();
    const auth = await writer();
    const first = await post(PATHS.set, setBody(def, fnr, { typePi: 'reservasjon' }), auth);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ returKode: 'ok', instansEndret: 'endret' });
    const again = await post(PATHS.set, setBody(def, fnr, { typePi: 'reservasjon' }), auth);
    expect(again.body).toEqual({ returKode: 'ok', instansEndret: 'ikkeEndret' });

    const status = await post(
      PATHS.status,
      { innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode },
      auth,
    );
    expect(status.status).toBe(200);
    expect(personvernInnstillingV2Schema.parse(status.body)).toMatchObject({
      innbyggerFnr: fnr,
      typePi: 'reservasjon',
      aktiv: true,
      sekvensnummer: 1,
    });
    expect(status.body.reMetadata.reFasteMetadata).toBeDefined();
    expect(status.body.opprettetTidspunkt).toBe(status.body.sistEndretTidspunkt);
  });

  it('when typePi comes in the interface spelling in another case, then it is accepted', async () => {
    const def = await seeded();
    const res = await post(
      PATHS.set,
      setBody(def, nextFnr(), { typePi: 'Reservasjon' }),
      await writer(),
    );
    expect(res.body).toEqual({ returKode: 'ok', instansEndret: 'endret' });
  });

  it('when the definition has a GUID that is not an RFC 4122 variant, or the client spells it in upper case, then it is the same definition', async () => {
    const def = await seeded(TEMPLATES.reservasjon, {
      definisjonGuid: '00000000-0000-0000-0000-00000000abcd',
    } as Partial<Definition>);
    const fnr = nextFnr();
    const auth = await writer();
    const res = await post(
      PATHS.set,
      setBody(def, fnr, { definisjonGuid: def.definisjonGuid.toUpperCase() }),
      auth,
    );
    expect(res.body).toEqual({ returKode: 'ok', instansEndret: 'endret' });
    const status = await post(
      PATHS.status,
      { innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode },
      auth,
    );
    expect(status.body).toMatchObject({ definisjonGuid: def.definisjonGuid, sekvensnummer: 1 });
  });

  it('when clients call the PascalCase path under the gateway prefix, then it is the same operation', async () => {
    const def = await seeded();
    const fnr = nextFnr();
    const res = await post(
      `${BASE_PATH}/Personverninnstillinger/SettInnbyggersPersonvernInnstilling/v2`,
      setBody(def, fnr),
      await writer(),
    );
    expect(res.status).toBe(200);
    expect(res.body.instansEndret).toBe('endret');
    expect(await settingsOf(fnr)).toBe(1);
  });

  it('when each change comes, then sekvensnummer counts from 1, opprettet stays the first tidspunkt and sistEndret follows the latest', async () => {
    const def = await seeded(TEMPLATES.samtykkeMedPerioder);
    const fnr = nextFnr();
    const auth = await writer();
    const t1 = '2026-01-01T10:00:00.000Z';
    const t2 = '2026-02-01T10:00:00.000Z';
    const periods = { tidsbegrensning: { perioder: [{ fraDato: '2026-01-01T00:00:00Z' }] } };
    await post(PATHS.set, setBody(def, fnr, { tidspunkt: t1, saInnbyggerMetadata: periods }), auth);
    const changed = await post(
      PATHS.set,
      setBody(def, fnr, { aktiv: false, tidspunkt: t2, saInnbyggerMetadata: periods }),
      auth,
    );
    expect(changed.body.instansEndret).toBe('endret');
    const status = await post(
      PATHS.status,
      { innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode },
      auth,
    );
    expect(status.body).toMatchObject({
      sekvensnummer: 2,
      aktiv: false,
      opprettetTidspunkt: t1,
      sistEndretTidspunkt: t2,
    });
    expect(status.body.saMetadata.saInnbyggerMetadata.tidsbegrensning.perioder).toEqual([
      { fraDato: '2026-01-01T00:00:00.000Z', tilDato: null },
    ]);
  });

  it('when a change comes dated before the current state, then ikkeEndret and the state stays', async () => {
    const def = await seeded();
    const fnr = nextFnr();
    const auth = await writer();
    await post(PATHS.set, setBody(def, fnr, { tidspunkt: '2026-03-01T00:00:00Z' }), auth);
    const old = await post(
      PATHS.set,
      setBody(def, fnr, { aktiv: false, tidspunkt: '2026-02-01T00:00:00Z' }),
      auth,
    );
    expect(old.body).toEqual({ returKode: 'ok', instansEndret: 'ikkeEndret' });
    const status = await post(
      PATHS.status,
      { innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode },
      auth,
    );
    expect(status.body).toMatchObject({ aktiv: true, sekvensnummer: 1 });
  });

  it('when tidspunkt is more than 5 minutes ahead, then 400 EPVK-100400 and nothing is written', async () => {
    const def = await seeded();
    const fnr = nextFnr();
    const future = new Date(Date.now() + 60 * 60 * 1000).toISOString();
    const res = await post(PATHS.set, setBody(def, fnr, { tidspunkt: future }), await writer());
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('EPVK-100400');
    expect(await settingsOf(fnr)).toBe(0);
  });

  it('when sets for one citizen and definition run in parallel, then every change gets its own consecutive sekvensnummer', async () => {
    const def = await seeded(TEMPLATES.samtykkeMedPerioder);
    const fnr = nextFnr();
    const auth = await writer();
    const base = Date.now() - 10 * 60_000;
    const responses = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        post(
          PATHS.set,
          setBody(def, fnr, {
            saInnbyggerMetadata: {
              tidsbegrensning: { perioder: [{ fraDato: new Date(base + i * 1000).toISOString() }] },
            },
          }),
          auth,
        ),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(8).fill(200));
    const endret = responses.filter((r) => r.body.instansEndret === 'endret').length;
    const doc = present(
      await h.get().connection.collection(SETTINGS_COLLECTION).findOne({ innbyggerFnr: fnr }),
      'the setting',
    );
    const applied = (doc['history'] as Array<{ applied: boolean; sekvensnummer: number }>).filter(
      (e) => e.applied,
    );
    expect(applied.map((e) => e.sekvensnummer)).toEqual(
      Array.from({ length: endret }, (_, i) => i + 1),
    );
    expect(doc['sekvensnummer']).toBe(endret);
    expect(doc['history']).toHaveLength(8);
  });

  it('when the identity number is invalid, then 400 EPVK-101518 and nothing is written', async () => {
    const def = await seeded();
    const res = await post(PATHS.set, setBody(def, '13116950216'), await writer());
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      code: 'EPVK-101518',
      message: expect.any(String),
      errorCategory: 'ClientValidationError',
    });
    expect(await settingsOf('13116950216')).toBe(0);
  });

  it('when the definition is unknown, owned by another party, or the client has no write grant, then 400 EPVK-101500', async () => {
    const def = await seeded();
    const auth = await writer();
    const unknown = await post(
      PATHS.set,
      setBody(def, nextFnr(), { definisjonGuid: '0b8e7c52-1111-4222-8333-944455556666' }),
      auth,
    );
    const wrongPart = await post(PATHS.set, setBody(def, nextFnr(), { partKode: 'annen' }), auth);
    const readOnly = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
    await h.get().grant(TEST_CLIENT, readOnly.partKode, { read: true });
    const noGrant = await post(PATHS.set, setBody(readOnly, nextFnr()), auth);
    for (const res of [unknown, wrongPart, noGrant]) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('EPVK-101500');
    }
  });

  it('when typePi differs from the definition or the definition is inactive, then 400 EPVK-101501', async () => {
    const def = await seeded();
    const auth = await writer();
    const wrongType = await post(PATHS.set, setBody(def, nextFnr(), { typePi: 'samtykke' }), auth);
    const inactive = await seeded(TEMPLATES.reservasjon, {
      status: 'inaktiv',
    } as Partial<Definition>);
    const closed = await post(PATHS.set, setBody(inactive, nextFnr()), auth);
    for (const res of [wrongType, closed]) {
      expect(res.status).toBe(400);
      expect(res.body).toMatchObject({
        code: 'EPVK-101501',
        errorCategory: 'ServerValidationError',
      });
    }
  });

  it('when the metadata object is of another type, or the body has an unknown field, then 400 EPVK-100400', async () => {
    const def = await seeded();
    const auth = await writer();
    const fnr = nextFnr();
    const otherType = await post(
      PATHS.set,
      setBody(def, fnr, { typePi: undefined, saInnbyggerMetadata: {} }),
      auth,
    );
    const unknownField = await post(PATHS.set, setBody(def, fnr, { farge: 'blå' }), auth);
    const missing = await post(PATHS.set, { innbyggerFnr: fnr, aktiv: true }, auth);
    for (const res of [otherType, unknownField, missing]) {
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('EPVK-100400');
    }
    expect(await settingsOf(fnr)).toBe(0);
  });

  it('when there is no token, then 401 EPVK-100401; with only the read scope, then 401 EPVK-100403', async () => {
    const def = await seeded();
    const fnr = nextFnr();
    const none = await post(PATHS.set, setBody(def, fnr));
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('EPVK-100401');
    const readOnly = h.get().bearer(await h.get().token({ scopes: ['read'] }));
    const refused = await post(PATHS.set, setBody(def, fnr), readOnly);
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('EPVK-100403');
    expect(await settingsOf(fnr)).toBe(0);
  });
});

describe('proofs', () => {
  it('when a proof of each accepted type comes, then endret, and the uploaded proofs list them by sekvensnummer with only the current one not historisk', async () => {
    const def = await seeded();
    const fnr = nextFnr();
    const auth = await writer();
    const types = [
      ['image/png', PROOF_BYTES.png],
      ['image/jpeg', PROOF_BYTES.jpeg],
      ['image/bmp', PROOF_BYTES.bmp],
      ['application/pdf', PROOF_BYTES.pdf],
    ] as const;
    for (const [mime, bytes] of types) {
      const res = await post(
        PATHS.set,
        setBody(def, fnr, {
          signertBevisMimeType: mime,
          signertBevisInnhold: bytes.toString('base64'),
        }),
        auth,
      );
      expect(res.body).toEqual({ returKode: 'ok', instansEndret: 'endret' });
    }
    // A retried request with the same proof changes nothing.
    const retry = await post(
      PATHS.set,
      setBody(def, fnr, {
        signertBevisMimeType: 'application/pdf',
        signertBevisInnhold: PROOF_BYTES.pdf.toString('base64'),
      }),
      auth,
    );
    expect(retry.body.instansEndret).toBe('ikkeEndret');

    const listed = await post(
      PATHS.proofs,
      { innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode },
      auth,
    );
    expect(listed.status).toBe(200);
    const { opplastedeBevis } = hentInnbyggersOpplastedeBevisV2ResponseSchema.parse(listed.body);
    expect(
      opplastedeBevis.map((p) => [p.sekvensnummer, p.historisk, p.signertBevisMimeType]),
    ).toEqual([
      [1, true, 'image/png'],
      [2, true, 'image/jpeg'],
      [3, true, 'image/bmp'],
      [4, false, 'application/pdf'],
    ]);
    expect(opplastedeBevis[0]?.signertBevisInnhold).toBe(PROOF_BYTES.png.toString('base64'));
  });

  it('when a proof is wrong (type, content, base64, size, one field alone), then 400 EPVK-104400 and nothing is written', async () => {
    const def = await seeded();
    const auth = await writer();
    const over = Buffer.alloc(4 * 1024 * 1024 + 1, 0);
    PROOF_BYTES.png.copy(over);
    const max = Buffer.alloc(4 * 1024 * 1024, 0);
    PROOF_BYTES.png.copy(max);
    const bad = [
      {
        signertBevisMimeType: 'image/gif',
        signertBevisInnhold: PROOF_BYTES.png.toString('base64'),
      },
      {
        signertBevisMimeType: 'image/jpeg',
        signertBevisInnhold: PROOF_BYTES.png.toString('base64'),
      },
      { signertBevisMimeType: 'image/png', signertBevisInnhold: '***not base64***' },
      { signertBevisMimeType: 'image/png', signertBevisInnhold: over.toString('base64') },
      { signertBevisMimeType: 'image/png' },
      { signertBevisInnhold: PROOF_BYTES.png.toString('base64') },
    ];
    for (const proof of bad) {
      const fnr = nextFnr();
      const res = await post(PATHS.set, setBody(def, fnr, proof), auth);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('EPVK-104400');
      expect(await settingsOf(fnr)).toBe(0);
    }
    const fnr = nextFnr();
    const atLimit = await post(
      PATHS.set,
      setBody(def, fnr, {
        signertBevisMimeType: 'image/png',
        signertBevisInnhold: max.toString('base64'),
      }),
      auth,
    );
    expect(atLimit.body.instansEndret).toBe('endret');
    // The 4 MiB is in the proof collection, not in the setting that check status reads.
    const setting = present(
      await h.get().connection.collection(SETTINGS_COLLECTION).findOne({ innbyggerFnr: fnr }),
      'the setting',
    );
    expect(await h.get().count(PROOFS_COLLECTION, { settingId: setting['_id'] })).toBe(1);
    expect(JSON.stringify(setting).length).toBeLessThan(64 * 1024);
  });
});

describe('body limits', () => {
  it('when a set body is over 6 MiB, then 413 EPVK-100413; a read body over 256 KiB too', async () => {
    const def = await seeded();
    const auth = await writer();
    const fnr = nextFnr();
    const huge = await post(
      PATHS.set,
      setBody(def, fnr, {
        signertBevisMimeType: 'image/png',
        signertBevisInnhold: 'A'.repeat(6 * 1024 * 1024 + 16),
      }),
      auth,
    );
    expect(huge.status).toBe(413);
    expect(huge.body.code).toBe('EPVK-100413');
    expect(await settingsOf(fnr)).toBe(0);
    const bigRead = await post(
      PATHS.status,
      { innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: 'x'.repeat(300 * 1024) },
      auth,
    );
    expect(bigRead.status).toBe(413);
  });
});

describe('sjekkinnbyggerspistatus and hentinnbyggerspiforpart', () => {
  it('when the citizen has no instance, then the definition with aktiv false, no sekvensnummer and its FasteMetadata', async () => {
    const def = await seeded(TEMPLATES.tilgangsbegrensning);
    const fnr = nextFnr();
    const res = await post(
      PATHS.status,
      { innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode },
      await writer(),
    );
    expect(res.status).toBe(200);
    const body = personvernInnstillingV2Schema.parse(res.body);
    expect(body).toMatchObject({
      innbyggerFnr: fnr,
      definisjonGuid: def.definisjonGuid,
      typePi: 'tilgangsbegrensning',
      aktiv: false,
      sekvensnummer: null,
    });
    expect(body.tbMetadata?.tbFasteMetadata.detaljertAngivelse.kategoriOpplysninger).toEqual(
      def.fasteMetadata.detaljertAngivelse?.kategoriOpplysninger,
    );
    expect(body.saMetadata).toBeUndefined();
  });

  it("when the template takes periods, then aktiv as read depends on whether now is in one of the citizen's periods", async () => {
    const def = await seeded(TEMPLATES.samtykkeMedPerioder);
    const auth = await writer();
    const [inside, outside] = [nextFnr(), nextFnr()];
    const day = 24 * 60 * 60 * 1000;
    const period = (from: number, to: number) => ({
      tidsbegrensning: {
        perioder: [{ fraDato: new Date(from).toISOString(), tilDato: new Date(to).toISOString() }],
      },
    });
    await post(
      PATHS.set,
      setBody(def, inside, { saInnbyggerMetadata: period(Date.now() - day, Date.now() + day) }),
      auth,
    );
    await post(
      PATHS.set,
      setBody(def, outside, {
        saInnbyggerMetadata: period(Date.now() - 3 * day, Date.now() - 2 * day),
      }),
      auth,
    );
    const read = async (fnr: string) =>
      (
        await post(
          PATHS.status,
          { innbyggerFnr: fnr, definisjonGuid: def.definisjonGuid, partKode: def.partKode },
          auth,
        )
      ).body.aktiv;
    expect(await read(inside)).toBe(true);
    expect(await read(outside)).toBe(false);
  });

  it('when the client reads a party, then the citizen instances of its definitions come back; a party it has no grant for answers empty', async () => {
    const part = await h.get().seedPart();
    const a = await h
      .get()
      .seedDefinition({ template: TEMPLATES.reservasjon, partKode: part.partKode });
    const b = await h
      .get()
      .seedDefinition({ template: TEMPLATES.samtykke, partKode: part.partKode });
    await h.get().seedDefinition({ template: TEMPLATES.samtykke, partKode: part.partKode });
    await h.get().grant(TEST_CLIENT, part.partKode);
    const fnr = nextFnr();
    const auth = await writer();
    await post(PATHS.set, setBody(a, fnr), auth);
    await post(PATHS.set, setBody(b, fnr, { aktiv: false }), auth);
    const res = await post(PATHS.forPart, { innbyggerFnr: fnr, partKode: part.partKode }, auth);
    expect(res.status).toBe(200);
    const body = hentInnbyggersPiV2ResponseSchema.parse(res.body);
    expect(body.personvernInnstillinger.map((p) => p.definisjonGuid).sort()).toEqual(
      [a.definisjonGuid, b.definisjonGuid].sort(),
    );

    const other = await h.get().seedDefinition({ template: TEMPLATES.reservasjon });
    const hidden = await post(PATHS.forPart, { innbyggerFnr: fnr, partKode: other.partKode }, auth);
    expect(hidden.body).toEqual({ personvernInnstillinger: [] });
  });

  it('when the reads get a bad identity number, an unknown definition or no token, then 400 or 401 as decided', async () => {
    const def = await seeded();
    const auth = await writer();
    const badFnr = await post(
      PATHS.status,
      { innbyggerFnr: '123', definisjonGuid: def.definisjonGuid, partKode: def.partKode },
      auth,
    );
    expect(badFnr.body.code).toBe('EPVK-101518');
    const unknown = await post(
      PATHS.proofs,
      {
        innbyggerFnr: nextFnr(),
        definisjonGuid: '0b8e7c52-1111-4222-8333-944455556666',
        partKode: def.partKode,
      },
      auth,
    );
    expect(unknown.body.code).toBe('EPVK-101500');
    const noToken = await post(PATHS.forPart, { innbyggerFnr: nextFnr(), partKode: def.partKode });
    expect(noToken.status).toBe(401);
    const writeOnly = h.get().bearer(await h.get().token({ scopes: ['write'] }));
    const refused = await post(
      PATHS.status,
      { innbyggerFnr: nextFnr(), definisjonGuid: def.definisjonGuid, partKode: def.partKode },
      writeOnly,
    );
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('EPVK-100403');
  });
});

describe('hentinnbyggereaktivepifordefinisjon', () => {
  it('when the active citizens are walked page by page while others write, then no entry comes twice, every citizen active throughout comes once, and every page carries the definition', async () => {
    const def = await seeded();
    const auth = await writer();
    const stable = Array.from({ length: 11 }, nextFnr);
    const inactive = Array.from({ length: 3 }, nextFnr);
    for (const fnr of stable) await post(PATHS.set, setBody(def, fnr), auth);
    for (const fnr of inactive) await post(PATHS.set, setBody(def, fnr, { aktiv: false }), auth);

    const seen: string[] = [];
    let cursor: number | undefined;
    let pages = 0;
    do {
      const query = cursor === undefined ? '' : `&pagingReference=${cursor}`;
      // PascalCase path under the gateway prefix, as real clients call it.
      const res = await request(h.get().app)
        .get(
          `${BASE_PATH}/personverninnstillinger/HentInnbyggereAktivePiForDefinisjon/v2?definisjonGuid=${def.definisjonGuid}&partKode=${def.partKode}${query}`,
        )
        .set('Authorization', auth);
      expect(res.status).toBe(200);
      const page = hentInnbyggereAktivePiForDefinisjonV2ResponseSchema.parse(res.body);
      expect(page).toMatchObject({
        definisjonGuid: def.definisjonGuid,
        partKode: def.partKode,
        typePi: 'reservasjon',
      });
      expect(page.reFasteMetadata).toBeDefined();
      expect(Number.isInteger(page.pagingReference)).toBe(true);
      for (const entry of page.personvernInnstillinger) {
        expect(entry).toEqual({
          innbyggerFnr: expect.any(String),
          reInnbyggerMetadata: { tidsbegrensning: expect.any(Object) },
          sekvensnummer: expect.any(Number),
          opprettetTidspunkt: expect.any(String),
          sistEndretTidspunkt: expect.any(String),
        });
      }
      seen.push(...page.personvernInnstillinger.map((e) => e.innbyggerFnr));
      cursor = page.pagingReference;
      pages += 1;
      // Concurrent writes between pages: new citizens, and a stable citizen changed (still active).
      await Promise.all([
        post(PATHS.set, setBody(def, nextFnr()), auth),
        post(
          PATHS.set,
          setBody(def, present(stable[pages % stable.length], 'a stable citizen'), {
            reInnbyggerMetadata: { tidsbegrensning: { perioder: [] } },
            tidspunkt: new Date(Date.now() - 1000 + pages).toISOString(),
          }),
          auth,
        ),
      ]);
    } while (cursor !== 0 && pages < 50);

    expect(pages).toBeGreaterThanOrEqual(3);
    expect(new Set(seen).size).toBe(seen.length);
    for (const fnr of stable) expect(seen.filter((s) => s === fnr)).toHaveLength(1);
    for (const fnr of inactive) expect(seen).not.toContain(fnr);
  });

  it('when the definition has no active citizens, then one empty page with pagingReference 0 and the FasteMetadata', async () => {
    const def = await seeded(TEMPLATES.samtykke);
    const res = await request(h.get().app)
      .get(`${PATHS.active}?definisjonGuid=${def.definisjonGuid}&pagingReference=0`)
      .set('Authorization', await writer());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      definisjonGuid: def.definisjonGuid,
      pagingReference: 0,
      personvernInnstillinger: [],
      saFasteMetadata: { tidsbegrensning: { tidsbegrensetFra: null, tidsbegrensetTil: null } },
    });
  });

  it('when pagingReference is not an int32 or a parameter is unknown, then 400 EPVK-100400', async () => {
    const def = await seeded();
    const auth = await writer();
    for (const query of [
      'pagingReference=-1',
      'pagingReference=abc',
      'pagingReference=99999999999',
      'side=2',
    ]) {
      const res = await request(h.get().app)
        .get(`${PATHS.active}?definisjonGuid=${def.definisjonGuid}&${query}`)
        .set('Authorization', auth);
      expect(res.status).toBe(400);
      expect(res.body.code).toBe('EPVK-100400');
    }
  });
});
