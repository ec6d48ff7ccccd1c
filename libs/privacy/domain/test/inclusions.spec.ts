import { AppError } from '@nhp/shared-errors';
import type { Caller, SettInkluderingRequest } from '@nhp/privacy-contracts';
import {
  createInclusionUseCases,
  DEFINITION_TEMPLATES,
  type Definition,
  type InclusionChange,
  type InclusionUseCasePorts,
} from '../src';

const template = DEFINITION_TEMPLATES[0] as (typeof DEFINITION_TEMPLATES)[number];
const DEF = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

function definition(extra: Partial<Definition> = {}): Definition {
  return {
    definisjonGuid: DEF,
    definisjonMalGuid: template.definisjonMalGuid,
    partKode: 'studie',
    navn: 'Studie',
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
    ...extra,
  };
}

/** In-memory ports: the use case's rules, without storage (the repository has its own tests). */
function ports(def: Definition | undefined, grants: string[] = ['client-a:studie:write']) {
  const changes: InclusionChange[] = [];
  const value: InclusionUseCasePorts = {
    definitions: {
      findDefinition: async (guid) => (def && guid === def.definisjonGuid ? def : undefined),
      listDefinitionsOfPart: async () => [],
    },
    grants: { allows: async (c, p, a) => grants.includes(`${c}:${p}:${a}`) },
    inclusions: {
      setInclusion: async (change) => {
        changes.push(change);
        return { changed: true };
      },
    },
    allowSyntheticIds: false,
    now: () => new Date('2026-01-01T00:00:00Z'),
  };
  return { inclusions: createInclusionUseCases(value), changes };
}

const actor: Caller = { clientId: 'client-a', isAdmin: false };
const request: SettInkluderingRequest = {
  innbyggerFnr: '13116900216',
  partKode: 'studie',
  personvernInnstillingDefinisjonId: DEF,
  inkluderingType: 'inkludert',
};

async function codeOf(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (err) {
    if (err instanceof AppError) return err.code;
    throw err;
  }
  return 'no error';
}

describe('setting an inclusion', () => {
  it('when the type comes in lower case, then it is stored and answered in the interface spelling', async () => {
    const p = ports(definition());
    const response = await p.inclusions.set(actor, request);
    expect(response).toEqual({
      innbyggerFnr: '13116900216',
      partKode: 'studie',
      personvernInnstillingDefinisjonId: DEF,
      inkluderingType: 'Inkludert',
      aktiv: true,
    });
    expect(p.changes).toEqual([
      expect.objectContaining({ inkluderingType: 'Inkludert', aktiv: true, definisjonGuid: DEF }),
    ]);
  });

  it('when aktiv is false, then the inclusion is ended', async () => {
    const p = ports(definition());
    await p.inclusions.set(actor, { ...request, inkluderingType: 'OPPFORT', aktiv: false });
    expect(p.changes[0]).toMatchObject({ inkluderingType: 'Oppfort', aktiv: false });
  });

  it('when the identity number is invalid, then EPVK-101518 and nothing is written', async () => {
    const p = ports(definition());
    expect(await codeOf(p.inclusions.set(actor, { ...request, innbyggerFnr: '13116950216' }))).toBe(
      'EPVK-101518',
    );
    expect(p.changes).toEqual([]);
  });

  it.each([
    ['the definition is unknown', undefined, ['client-a:studie:write'], request],
    [
      'the partKode does not own it',
      definition(),
      ['client-a:studie:write'],
      { ...request, partKode: 'annen' },
    ],
    ['the client has only a read grant', definition(), ['client-a:studie:read'], request],
    ['the client has no grant', definition(), [], request],
  ])('when %s, then EPVK-101500 and nothing is written', async (_what, def, grants, body) => {
    const p = ports(def, grants);
    expect(await codeOf(p.inclusions.set(actor, body))).toBe('EPVK-101500');
    expect(p.changes).toEqual([]);
  });

  it('when the caller has the admin scope, then no grant is needed', async () => {
    const p = ports(definition(), []);
    await p.inclusions.set({ clientId: 'admin-tool', isAdmin: true }, request);
    expect(p.changes).toHaveLength(1);
  });

  it('when the definition is inactive, then an inclusion cannot start but can end', async () => {
    const p = ports(definition({ status: 'inaktiv' }));
    expect(await codeOf(p.inclusions.set(actor, request))).toBe('EPVK-101501');
    await p.inclusions.set(actor, { ...request, aktiv: false });
    expect(p.changes.map((c) => c.aktiv)).toEqual([false]);
  });
});
