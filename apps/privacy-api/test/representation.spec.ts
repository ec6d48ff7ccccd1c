import { createPrivacyAuth } from '@nhp/privacy-auth';
import type { RepresentationRelationship } from '@nhp/privacy-domain';
import { createHealth } from '@nhp/shared-health';
import { createLogger } from '@nhp/shared-logger';
import { connectMongo } from '@nhp/shared-persistence';
import request from 'supertest';
import { createApp } from '../src/app';
import { createPrivacyContext } from '../src/context';
import { fnrBornOn } from '@nhp/privacy-testing';
import { usePrivacyHarness } from './support/harness';

/** The business clock: each test sets the day it asks on. */
let today = new Date('2026-01-01T12:00:00Z');
const h = usePrivacyHarness({ clock: () => today, options: { basePath: '/personvern' } });

const PATH = '/representasjonsforhold/v1';
const born = (date: string) => fnrBornOn(new Date(`${date}T00:00:00Z`));
let callers = 0;
/** A fresh caller (its own identity number) for each test. */
const newCaller = () => born(`1980-01-${String((callers += 1)).padStart(2, '0')}`);

function relationship(
  annenFnr: string,
  extra: Partial<RepresentationRelationship> = {},
): RepresentationRelationship {
  return {
    annenFnr,
    eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    fornavn: 'Kari',
    mellomnavn: null,
    etternavn: 'Nordmann',
    representasjonsforholdType: 'foreldre',
    annenAdresse: false,
    ...extra,
  };
}

async function imported(fnr: string, relationships: RepresentationRelationship[]) {
  await h.get().context.representation.replaceRelationships(new Map([[fnr, relationships]]), {
    importId: 'test',
    at: new Date(),
    actorId: 'test',
  });
}

/** GET as the citizen `pid`, expecting 200. */
async function get(pid: string, path = PATH) {
  const token = await h.get().citizenToken(pid);
  return request(h.get().app).get(path).set('Authorization', h.get().bearer(token)).expect(200);
}

describe('GET representasjonsforhold/v1', () => {
  it('when the citizen has relationships, then 200 lists them (without identity numbers) with tilleggsinfo', async () => {
    today = new Date('2026-06-01T12:00:00Z');
    const caller = newCaller();
    const child = born('2012-05-01');
    await imported(caller, [
      relationship(child, { fornavn: 'Emma', mellomnavn: 'Marie' }),
      relationship(born('1950-02-02'), {
        eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3302',
        fornavn: 'Solveig',
        representasjonsforholdType: 'fullmakt',
      }),
    ]);
    const res = await get(caller);
    expect(res.body).toEqual({
      representasjonsforhold: [
        {
          eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
          fornavn: 'Emma',
          mellomnavn: 'Marie',
          etternavn: 'Nordmann',
          representasjonsforholdType: 'foreldre',
        },
        {
          eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3302',
          fornavn: 'Solveig',
          mellomnavn: null,
          etternavn: 'Nordmann',
          representasjonsforholdType: 'fullmakt',
        },
      ],
      tilleggsinfo: { harBarnMedAnnenAdresse: false, harBarnOver11: true, harBarnOver16: false },
    });
    expect(res.text).not.toContain(child);
  });

  it('when the citizen has none, then 200 with an empty list and no flags', async () => {
    const res = await get(newCaller());
    expect(res.body).toEqual({
      representasjonsforhold: [],
      tilleggsinfo: { harBarnMedAnnenAdresse: false, harBarnOver11: false, harBarnOver16: false },
    });
  });

  it('when the clock passes the child’s 11th and 16th birthdays, then the flags turn on that very day', async () => {
    const caller = newCaller();
    await imported(caller, [relationship(born('2010-03-15'))]);
    const flags = async (day: string) => {
      today = new Date(day);
      const { harBarnOver11, harBarnOver16 } = (await get(caller)).body.tilleggsinfo;
      return [harBarnOver11, harBarnOver16];
    };
    expect(await flags('2021-03-14T23:59:59Z')).toEqual([false, false]);
    expect(await flags('2021-03-15T00:00:00Z')).toEqual([true, false]);
    expect(await flags('2026-03-14T23:59:59Z')).toEqual([true, false]);
    expect(await flags('2026-03-15T00:00:00Z')).toEqual([true, true]);
  });

  it('when a child lives at another address, then harBarnMedAnnenAdresse is true', async () => {
    today = new Date('2026-01-01T12:00:00Z');
    const caller = newCaller();
    await imported(caller, [
      relationship(born('2020-01-01')),
      relationship(born('2021-01-01'), { annenAdresse: true }),
    ]);
    expect((await get(caller)).body.tilleggsinfo).toEqual({
      harBarnMedAnnenAdresse: true,
      harBarnOver11: false,
      harBarnOver16: false,
    });
  });

  it('when clients call in PascalCase or through the gateway prefix, then the same answer', async () => {
    const caller = newCaller();
    await imported(caller, [relationship(born('2015-01-01'))]);
    for (const path of ['/Representasjonsforhold/V1', '/personvern/representasjonsforhold/v1']) {
      const res = await get(caller, path);
      expect(res.body.representasjonsforhold).toHaveLength(1);
    }
  });

  it('when a system token calls, then 403 EPVK-100403', async () => {
    for (const scopes of [['read', 'write'], ['admin']]) {
      const res = await request(h.get().app)
        .get(PATH)
        .set('Authorization', h.get().bearer(await h.get().token({ scopes })))
        .expect(403);
      expect(res.body).toEqual({
        code: 'EPVK-100403',
        message: expect.any(String),
        errorCategory: 'ClientValidationError',
      });
    }
  });

  it('when there is no token, then 401 EPVK-100401', async () => {
    const res = await request(h.get().app).get(PATH).expect(401);
    expect(res.body.code).toBe('EPVK-100401');
  });

  it('when X-hn-isdebug is not a boolean, then 400 EPVK-100400', async () => {
    const res = await request(h.get().app)
      .get(PATH)
      .set('Authorization', h.get().bearer(await h.get().citizenToken(newCaller())))
      .set('X-hn-isdebug', 'maybe')
      .expect(400);
    expect(res.body.code).toBe('EPVK-100400');
  });

  it('when the database cannot be reached, then 500 EPVK-100503', async () => {
    const logger = createLogger({ name: 'test', level: 'silent' });
    const connection = await connectMongo({ uri: h.get().infra.mongoUri, logger });
    await connection.close();
    const app = createApp({
      context: createPrivacyContext({ logger, connection }),
      health: createHealth({ checks: {} }),
      authenticate: createPrivacyAuth({ ...h.get().issuer.authOptions(), logger }).authenticate,
    });
    const res = await request(app)
      .get(PATH)
      .set('Authorization', h.get().bearer(await h.get().citizenToken(newCaller())))
      .expect(500);
    expect(res.body).toMatchObject({ code: 'EPVK-100503', errorCategory: 'EndpointIsDown' });
  });
});
