import type { Caller } from '@nhp/privacy-contracts';
import { AppError } from '@nhp/shared-errors';
import {
  assertMayActFor,
  assertNotCitizenToken,
  createInclusionUseCases,
  createSettingsUseCases,
  DEFINITION_TEMPLATES,
  mayActFor,
  type Definition,
  type RepresentationLookup,
  type RepresentationRelationship,
  type SettingsStore,
} from '../src';

const PARENT = '13116900216';
const CHILD = '01891250009';
const STRANGER = '10831050069';

function relationship(annenFnr: string, type: string): RepresentationRelationship {
  return {
    annenFnr,
    eksternProfilGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    fornavn: 'Emma',
    mellomnavn: null,
    etternavn: 'Nordmann',
    representasjonsforholdType: type,
    annenAdresse: false,
  };
}

/** A lookup holding `byFnr`, counting the lookups it answered. */
function lookup(byFnr: Record<string, RepresentationRelationship[]>) {
  const asked: string[] = [];
  const representation: RepresentationLookup = {
    findRelationships: async (fnr) => {
      asked.push(fnr);
      return byFnr[fnr] ?? [];
    },
  };
  return { representation, asked };
}

const citizen = (pid: string): Caller => ({ clientId: 'app', isAdmin: false, pid });
const system: Caller = { clientId: 'app', isAdmin: false };

async function refusal(promise: Promise<unknown>): Promise<AppError | undefined> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err;
    throw err;
  }
  return undefined;
}

describe('whom a token acts for', () => {
  it('when the token has no pid, then it is not limited by this rule and nothing is looked up', async () => {
    const ports = lookup({});
    expect(await mayActFor(ports, system, STRANGER)).toBe(true);
    expect(ports.asked).toEqual([]);
  });

  it('when the pid is the citizen named, then it may act, without a lookup', async () => {
    const ports = lookup({});
    expect(await mayActFor(ports, citizen(PARENT), PARENT)).toBe(true);
    expect(ports.asked).toEqual([]);
  });

  it.each(['foreldre', 'verge', 'fullmakt', 'Foreldre', 'FULLMAKT'])(
    'when the pid holds a relationship of type %s to the citizen, then it may act for them',
    async (type) => {
      const ports = lookup({ [PARENT]: [relationship(CHILD, type)] });
      expect(await mayActFor(ports, citizen(PARENT), CHILD)).toBe(true);
    },
  );

  it.each(['fullmaktsgiver', 'barn'])(
    'when the relationship is of type "%s", then it does not let the pid act',
    async (type) => {
      const ports = lookup({ [PARENT]: [relationship(CHILD, type)] });
      expect(await mayActFor(ports, citizen(PARENT), CHILD)).toBe(false);
    },
  );

  it('when only the other person holds a relationship naming the pid, or it names someone else, then the pid may not act', async () => {
    const ports = lookup({
      [CHILD]: [relationship(PARENT, 'foreldre')],
      [PARENT]: [relationship(STRANGER, 'foreldre')],
    });
    expect(await mayActFor(ports, citizen(PARENT), CHILD)).toBe(false);
  });

  it('when no lookup is given, then a citizen acts only for themself', async () => {
    expect(await mayActFor({}, citizen(PARENT), PARENT)).toBe(true);
    expect(await mayActFor({}, citizen(PARENT), CHILD)).toBe(false);
  });

  it('when the pid may not act, then the refusal is 401 EPVK-100403 (authorization) and names no identity number', async () => {
    const err = await refusal(assertMayActFor(lookup({}), citizen(PARENT), STRANGER));
    expect(err).toMatchObject({ code: 'EPVK-100403', status: 401, category: 'authorization' });
    expect(err?.message).not.toMatch(/\d{11}/);
    expect(() => assertNotCitizenToken(citizen(PARENT))).toThrow(AppError);
    expect(() => assertNotCitizenToken(system)).not.toThrow();
  });
});

describe('the use cases that name a citizen', () => {
  const template = DEFINITION_TEMPLATES[1] as (typeof DEFINITION_TEMPLATES)[number];
  const definition: Definition = {
    definisjonGuid: '3f2504e0-4f89-41d3-9a0c-0305e82c3301',
    definisjonMalGuid: template.definisjonMalGuid,
    partKode: 'studie',
    navn: null,
    beskrivelse: null,
    visning: null,
    fullstendigTekstInnhold: null,
    kravTilLesingAvFullstendigTekst: false,
    sortering: null,
    replikering: false,
    relasjoner: [],
    status: 'aktiv',
    typePi: template.typePi,
    fasteMetadata: template.fasteMetadata,
    takesPeriods: false,
  };
  const touched: string[] = [];
  const touch =
    (name: string) =>
    async (..._args: unknown[]): Promise<never> => {
      touched.push(name);
      throw new Error(`${name} must not be reached`);
    };
  const store = {
    find: touch('find'),
    findForWrite: touch('findForWrite'),
    listForCitizen: touch('listForCitizen'),
    create: touch('create'),
    update: touch('update'),
    pageActive: touch('pageActive'),
    loadProofs: touch('loadProofs'),
  } as unknown as SettingsStore;
  const ports = {
    definitions: {
      findDefinition: async () => definition,
      listDefinitionsOfPart: async () => [definition],
    },
    grants: { allows: async () => true },
    ...lookup({ [PARENT]: [relationship(CHILD, 'foreldre')] }),
  };
  const service = createSettingsUseCases({
    ...ports,
    store,
    now: () => new Date(),
    allowSyntheticIds: true,
    pageSize: 10,
  });
  const actor = citizen(PARENT);
  const named = { innbyggerFnr: STRANGER, definisjonGuid: definition.definisjonGuid };

  it.each([
    ['set', () => service.set(actor, { ...named, partKode: 'studie', aktiv: true })],
    ['check status', () => service.checkStatus(actor, { ...named, partKode: 'studie' })],
    ['for a party', () => service.forPart(actor, { innbyggerFnr: STRANGER, partKode: 'studie' })],
    ['uploaded proofs', () => service.uploadedProofs(actor, { ...named, partKode: 'studie' })],
    ['the active-citizens walk', () => service.activeCitizens(actor, named)],
    [
      'an inclusion',
      () =>
        createInclusionUseCases({
          ...ports,
          inclusions: { setInclusion: touch('setInclusion') },
          allowSyntheticIds: true,
          now: () => new Date(),
        }).set(actor, {
          innbyggerFnr: STRANGER,
          partKode: 'studie',
          personvernInnstillingDefinisjonId: definition.definisjonGuid,
          inkluderingType: 'Inkludert',
        }),
    ],
  ])(
    'when a citizen’s token names a stranger in %s, then EPVK-100403 before any storage is read or written',
    async (_name, run) => {
      touched.length = 0;
      expect(await refusal(run())).toMatchObject({ code: 'EPVK-100403', status: 401 });
      expect(touched).toEqual([]);
    },
  );
});
