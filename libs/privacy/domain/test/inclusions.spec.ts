import type { SettInkluderingRequest } from '@nhp/privacy-contracts';
import { AppError } from '@nhp/shared-errors';
import {
  DEFINITION_TEMPLATES,
  setInclusion,
  type Actor,
  type Definition,
  type InclusionChange,
  type SetInclusionPorts,
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
  const value: SetInclusionPorts = {
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
  };
  return { value, changes };
}

const actor: Actor = { clientId: 'client-a', isAdmin: false };
const request: SettInkluderingRequest = {
  innbyggerFnr: '13116900216',
  partKode: 'studie',
  personvernInnstillingDefinisjonId: DEF,
  inkluderingType: 'inkludert',
};
const options = { allowSyntheticIds: false, now: new Date('2026-01-01T00:00:00Z') };

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
    const response = await setInclusion(p.value, actor, request, options);
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
    await setInclusion(
      p.value,
      actor,
      { ...request, inkluderingType: 'OPPFORT', aktiv: false },
      options,
    );
    expect(p.changes[0]).toMatchObject({ inkluderingType: 'Oppfort', aktiv: false });
  });

  it('when the identity number is invalid, then EPVK-101518 and nothing is written', async () => {
    const p = ports(definition());
    expect(
      await codeOf(
        setInclusion(p.value, actor, { ...request, innbyggerFnr: '13116950216' }, options),
      ),
    ).toBe('EPVK-101518');
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
    expect(await codeOf(setInclusion(p.value, actor, body, options))).toBe('EPVK-101500');
    expect(p.changes).toEqual([]);
  });

  it('when the caller has the admin scope, then no grant is needed', async () => {
    const p = ports(definition(), []);
    await setInclusion(p.value, { clientId: 'admin-tool', isAdmin: true }, request, options);
    expect(p.changes).toHaveLength(1);
  });

  it('when the definition is inactive, then an inclusion cannot start but can end', async () => {
    const p = ports(definition({ status: 'inaktiv' }));
    expect(await codeOf(setInclusion(p.value, actor, request, options))).toBe('EPVK-101501');
    await setInclusion(p.value, actor, { ...request, aktiv: false }, options);
    expect(p.changes.map((c) => c.aktiv)).toEqual([false]);
  });
});
