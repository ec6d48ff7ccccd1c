import fc from 'fast-check';
import {
  createRepresentationUseCases,
  MAX_RELATIONSHIPS_PER_CALLER,
  parseFnr,
  parseRepresentationImport,
  tilleggsinfoOf,
  type RepresentationRelationship,
} from '../src';
import { fnrBornOn } from '@nhp/privacy-testing';

const PARENT = '13116900216';
const GUID = '3f2504e0-4f89-41d3-9a0c-0305e82c3301';

function child(birthDate: string, extra: Partial<RepresentationRelationship> = {}) {
  return {
    annenFnr: fnrBornOn(new Date(`${birthDate}T00:00:00Z`)),
    eksternProfilGuid: GUID,
    fornavn: 'Kari',
    mellomnavn: null,
    etternavn: 'Nordmann',
    representasjonsforholdType: 'foreldre',
    annenAdresse: false,
    ...extra,
  } satisfies RepresentationRelationship;
}

function line(value: Record<string, unknown>): string {
  return JSON.stringify({
    fnr: PARENT,
    annenFnr: fnrBornOn(new Date('2012-05-01T00:00:00Z')),
    eksternProfilGuid: GUID,
    fornavn: 'Ola',
    etternavn: 'Nordmann',
    representasjonsforholdType: 'foreldre',
    ...value,
  });
}

describe('the test identity-number builder', () => {
  it('when a number is built for a date, then it parses to that birth date', () => {
    for (const date of ['2015-03-15', '2009-12-31', '1969-11-13', '2000-02-29']) {
      expect(
        parseFnr(fnrBornOn(new Date(`${date}T00:00:00Z`)), { allowSynthetic: false }),
      ).toMatchObject({
        birthDate: new Date(`${date}T00:00:00Z`),
      });
    }
  });
});

describe('tilleggsinfo', () => {
  const born = '2010-03-15';

  it('when the day before the 11th birthday, then harBarnOver11 is false', () => {
    const info = tilleggsinfoOf([child(born)], new Date('2021-03-14T23:59:59Z'));
    expect(info).toEqual({
      harBarnMedAnnenAdresse: false,
      harBarnOver11: false,
      harBarnOver16: false,
    });
  });

  it('when on the 11th birthday, then harBarnOver11 is true and harBarnOver16 false', () => {
    const info = tilleggsinfoOf([child(born)], new Date('2021-03-15T00:00:00Z'));
    expect(info).toMatchObject({ harBarnOver11: true, harBarnOver16: false });
  });

  it('when the day before the 16th birthday, then harBarnOver16 is false', () => {
    expect(tilleggsinfoOf([child(born)], new Date('2026-03-14T12:00:00Z'))).toMatchObject({
      harBarnOver11: true,
      harBarnOver16: false,
    });
  });

  it('when on the 16th birthday, then both are true', () => {
    expect(tilleggsinfoOf([child(born)], new Date('2026-03-15T00:00:00Z'))).toMatchObject({
      harBarnOver11: true,
      harBarnOver16: true,
    });
  });

  it('when a child was born on 29 February, then the birthday in a common year is 1 March', () => {
    const leap = child('2008-02-29');
    expect(tilleggsinfoOf([leap], new Date('2019-02-28T12:00:00Z')).harBarnOver11).toBe(false);
    expect(tilleggsinfoOf([leap], new Date('2019-03-01T00:00:00Z')).harBarnOver11).toBe(true);
  });

  it('when the old person is not in a relationship of type foreldre, then nothing counts', () => {
    const other = child('1990-01-01', {
      representasjonsforholdType: 'fullmakt',
      annenAdresse: true,
    });
    expect(tilleggsinfoOf([other], new Date('2026-01-01T00:00:00Z'))).toEqual({
      harBarnMedAnnenAdresse: false,
      harBarnOver11: false,
      harBarnOver16: false,
    });
  });

  it('when the type is spelled in another letter case, then it still counts as foreldre', () => {
    const info = tilleggsinfoOf(
      [child('2000-01-01', { representasjonsforholdType: 'Foreldre' })],
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(info.harBarnOver16).toBe(true);
  });

  it('when a child lives at another address, then harBarnMedAnnenAdresse is true', () => {
    const info = tilleggsinfoOf(
      [child('2020-01-01'), child('2021-01-01', { annenAdresse: true })],
      new Date('2026-01-01T00:00:00Z'),
    );
    expect(info).toEqual({
      harBarnMedAnnenAdresse: true,
      harBarnOver11: false,
      harBarnOver16: false,
    });
  });

  it('when the caller has relationships, then the response lists them without identity numbers', async () => {
    const rel = child('2012-01-01', { mellomnavn: 'Marie' });
    const representation = createRepresentationUseCases({
      representation: {
        findRelationships: async (fnr) => (fnr === PARENT ? [rel] : []),
        replaceRelationships: async () => 0,
      },
      now: () => new Date('2026-01-01T00:00:00Z'),
    });
    const response = await representation.get({ clientId: 'app', isAdmin: false, pid: PARENT });
    expect(response.representasjonsforhold).toEqual([
      {
        eksternProfilGuid: GUID,
        fornavn: 'Kari',
        mellomnavn: 'Marie',
        etternavn: 'Nordmann',
        representasjonsforholdType: 'foreldre',
      },
    ]);
    expect(response.tilleggsinfo.harBarnOver11).toBe(true);
    expect(JSON.stringify(response)).not.toContain(rel.annenFnr);
  });
});

describe('reading an import file', () => {
  const options = { allowSyntheticIds: false };

  it('when every line is good, then the relationships are grouped by caller', () => {
    const other = '01010012356';
    const text = `${line({})}\n\n${line({ representasjonsforholdType: 'fullmakt', annenAdresse: true })}\r\n${line({ fnr: other, annenFnr: PARENT, mellomnavn: 'M' })}\n`;
    const result = parseRepresentationImport(text, options);
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.lines).toBe(3);
    expect(result.byFnr.get(PARENT)?.map((r) => r.representasjonsforholdType)).toEqual([
      'foreldre',
      'fullmakt',
    ]);
    expect(result.byFnr.get(PARENT)?.[1]?.annenAdresse).toBe(true);
    expect(result.byFnr.get(other)?.[0]).toMatchObject({ mellomnavn: 'M', annenAdresse: false });
  });

  it('when lines are bad, then each is reported by its number and no value is quoted', () => {
    const text = [
      line({}),
      '{not json',
      line({ fnr: '13116950216' }),
      line({ eksternProfilGuid: 'x' }),
      line({ extra: 1 }),
      '',
      line({ annenFnr: PARENT }),
      line({}),
    ].join('\n');
    const result = parseRepresentationImport(text, options);
    if (result.ok) throw new Error('expected errors');
    expect(result.errors.map((e) => e.line)).toEqual([2, 3, 4, 5, 7, 8]);
    expect(result.errors[1]?.message).toContain('fnr');
    expect(result.errors[5]?.message).toContain('repeats');
    expect(JSON.stringify(result.errors)).not.toContain('13116950216');
  });

  it('when a caller has more relationships than one document holds, then the lines beyond the bound are bad', () => {
    const lines = Array.from({ length: MAX_RELATIONSHIPS_PER_CALLER + 1 }, (_, i) =>
      line({
        annenFnr: fnrBornOn(new Date(Date.UTC(2000, 0, 1) + i * 86_400_000)),
        fornavn: 'x'.repeat(200),
      }),
    );
    const result = parseRepresentationImport(lines.join('\n'), options);
    if (result.ok) throw new Error('expected errors');
    expect(result.errors).toEqual([
      { line: MAX_RELATIONSHIPS_PER_CALLER + 1, message: expect.stringContaining('more than') },
    ]);
    expect(parseRepresentationImport(line({ fornavn: 'x'.repeat(201) }), options).ok).toBe(false);
  });

  it('when a number is synthetic, then it is accepted only when synthetic numbers are allowed', () => {
    const synthetic = fnrBornOn(new Date('2012-05-01T00:00:00Z'), { synthetic: true });
    const text = line({ annenFnr: synthetic });
    expect(parseRepresentationImport(text, options).ok).toBe(false);
    expect(parseRepresentationImport(text, { allowSyntheticIds: true }).ok).toBe(true);
  });

  it('when annenAdresse is an address, then a non-empty one counts as another address', () => {
    const result = parseRepresentationImport(
      [
        line({ annenAdresse: 'Storgata 1' }),
        line({ representasjonsforholdType: 'x', annenAdresse: ' ' }),
      ].join('\n'),
      options,
    );
    if (!result.ok) throw new Error(JSON.stringify(result.errors));
    expect(result.byFnr.get(PARENT)?.map((r) => r.annenAdresse)).toEqual([true, false]);
  });

  it('when a file holds any text, then reading it never throws, and a file with a bad line applies nothing', () => {
    const anyLine = fc.oneof(
      fc.string(),
      fc.jsonValue({ maxDepth: 2 }).map((v) => JSON.stringify(v)),
      fc
        .record({
          key: fc.constantFrom('fnr', 'annenFnr', 'eksternProfilGuid', 'fornavn'),
          value: fc.jsonValue(),
        })
        .map(({ key, value }) => line({ [key]: value })),
    );
    fc.assert(
      fc.property(fc.array(anyLine, { maxLength: 5 }), fc.nat({ max: 5 }), (lines, at) => {
        const text = [...lines.slice(0, at), line({}), ...lines.slice(at)].join('\n');
        const result = parseRepresentationImport(text, options);
        if (result.ok) {
          // Only blank lines and good lines: every non-blank line became a relationship.
          const nonBlank = text.split('\n').filter((l) => l.trim() !== '').length;
          expect(result.lines).toBe(nonBlank);
        } else {
          expect(result.errors.length).toBeGreaterThan(0);
          expect(result).not.toHaveProperty('byFnr');
        }
      }),
      { numRuns: 300 },
    );
  });
});
