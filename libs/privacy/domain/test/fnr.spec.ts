import { ageOn, isValidFnr, parseFnr } from '../src';

const strict = { allowSynthetic: false };
const lenient = { allowSynthetic: true };

describe('national identity numbers', () => {
  it('when the number is a valid fødselsnummer, then it is accepted with its birth date', () => {
    expect(parseFnr('13116900216', strict)).toEqual({
      kind: 'fodselsnummer',
      synthetic: false,
      birthDate: new Date('1969-11-13T00:00:00Z'),
    });
  });

  it('when a check digit is wrong, then it is refused', () => {
    expect(isValidFnr('13116950216', lenient)).toBe(false);
    expect(isValidFnr('13116900217', lenient)).toBe(false);
  });

  it('when the number is a synthetic D-nummer, then it is accepted only when synthetic numbers are allowed', () => {
    expect(isValidFnr('54896001798', strict)).toBe(false);
    expect(parseFnr('54896001798', lenient)).toMatchObject({ kind: 'd-nummer', synthetic: true });
  });

  it('when the text is not 11 digits, then it is refused', () => {
    for (const value of ['', '1311690021', '131169002160', '1311690021a', ' 13116900216']) {
      expect(isValidFnr(value, lenient)).toBe(false);
    }
  });

  it('when the age is computed, then the birthday itself counts as the new age', () => {
    const born = new Date('2010-03-15T00:00:00Z');
    expect(ageOn(born, new Date('2021-03-14T12:00:00Z'))).toBe(10);
    expect(ageOn(born, new Date('2021-03-15T00:00:00Z'))).toBe(11);
    expect(ageOn(born, new Date('2026-03-15T00:00:00Z'))).toBe(16);
  });
});
