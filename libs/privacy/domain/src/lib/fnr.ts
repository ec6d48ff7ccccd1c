/**
 * Norwegian national identity numbers: 11 digits, DDMMYY + individual number (3) + two mod-11
 * check digits. Variants accepted (see the README): fødselsnummer; D-nummer (first digit + 4);
 * H-nummer (month + 40); synthetic test numbers (month + 80, only when allowed). A D-nummer may
 * also be synthetic (day + 40 and month + 80).
 *
 * Hand-written: the npm packages for this (e.g. norwegian-national-id-validator) do not know
 * synthetic numbers and do not return the birth date, which the age rules need.
 */
export type FnrKind = 'fodselsnummer' | 'd-nummer' | 'h-nummer';

export interface ParsedFnr {
  kind: FnrKind;
  synthetic: boolean;
  /** Midnight UTC of the birth date. */
  birthDate: Date;
}

const ELEVEN_DIGITS = /^\d{11}$/;
const K1 = [3, 7, 6, 1, 8, 9, 4, 5, 2];
const K2 = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];

function checkDigit(digits: readonly number[], weights: readonly number[]): number | undefined {
  let sum = 0;
  for (let i = 0; i < weights.length; i++) sum += (weights[i] as number) * (digits[i] as number);
  const rest = 11 - (sum % 11);
  if (rest === 11) return 0;
  return rest === 10 ? undefined : rest;
}

/** The century of a two-digit year, from the individual number (Skatteetaten's ranges). */
function fullYear(yy: number, individual: number): number | undefined {
  if (individual <= 499) return 1900 + yy;
  if (individual <= 749 && yy >= 54) return 1800 + yy;
  if (individual >= 500 && yy <= 39) return 2000 + yy;
  if (individual >= 900 && yy >= 40) return 1900 + yy;
  return undefined;
}

export function parseFnr(
  value: string,
  options: { allowSynthetic: boolean },
): ParsedFnr | undefined {
  if (!ELEVEN_DIGITS.test(value)) return undefined;
  // Read once into numbers, as every check below works on digits (each status check parses one).
  const d: number[] = [];
  for (let i = 0; i < 11; i++) d.push(value.charCodeAt(i) - 48);
  const k1 = checkDigit(d, K1);
  if (k1 === undefined || k1 !== d[9]) return undefined;
  const k2 = checkDigit(d, K2);
  if (k2 === undefined || k2 !== d[10]) return undefined;

  const n = (i: number) => d[i] as number;
  let day = n(0) * 10 + n(1);
  let month = n(2) * 10 + n(3);
  const yy = n(4) * 10 + n(5);
  const individual = n(6) * 100 + n(7) * 10 + n(8);

  let synthetic = false;
  if (month > 80) {
    if (!options.allowSynthetic) return undefined;
    synthetic = true;
    month -= 80;
  }
  let kind: FnrKind = 'fodselsnummer';
  if (day > 40) {
    kind = 'd-nummer';
    day -= 40;
  } else if (month > 40) {
    kind = 'h-nummer';
    month -= 40;
  }
  const year = fullYear(yy, individual);
  if (year === undefined || month < 1 || month > 12 || day < 1) return undefined;
  const birthDate = new Date(Date.UTC(year, month - 1, day));
  if (birthDate.getUTCMonth() !== month - 1 || birthDate.getUTCDate() !== day) return undefined;
  return { kind, synthetic, birthDate };
}

export function isValidFnr(value: string, options: { allowSynthetic: boolean }): boolean {
  return parseFnr(value, options) !== undefined;
}

/** Whole years of age on `on` (UTC calendar days): the birthday itself counts as the new age. */
export function ageOn(birthDate: Date, on: Date): number {
  let age = on.getUTCFullYear() - birthDate.getUTCFullYear();
  const beforeBirthday =
    on.getUTCMonth() < birthDate.getUTCMonth() ||
    (on.getUTCMonth() === birthDate.getUTCMonth() && on.getUTCDate() < birthDate.getUTCDate());
  if (beforeBirthday) age -= 1;
  return age;
}
