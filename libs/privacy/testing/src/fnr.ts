/**
 * Valid identity numbers for tests: for a birth date (tests need children of exact ages), and a
 * series of distinct synthetic ones (many citizens). A candidate whose check digit would be 10 is
 * skipped, as the rules make it.
 */
const K1 = [3, 7, 6, 1, 8, 9, 4, 5, 2];
const K2 = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];

function check(digits: number[], weights: number[]): number | undefined {
  const rest = 11 - (weights.reduce((sum, w, i) => sum + w * (digits[i] as number), 0) % 11);
  if (rest === 11) return 0;
  return rest === 10 ? undefined : rest;
}

/** `base` (9 digits) with both check digits, or undefined when a check digit would be 10. */
function withCheckDigits(base: string): string | undefined {
  const digits = [...base].map(Number);
  const k1 = check(digits, K1);
  if (k1 === undefined) return undefined;
  const k2 = check([...digits, k1], K2);
  if (k2 === undefined) return undefined;
  return `${base}${k1}${k2}`;
}

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** An identity number of someone born on `birthDate` (individual numbers in the century's range). */
export function fnrBornOn(birthDate: Date, options: { synthetic?: boolean; from?: number } = {}) {
  const year = birthDate.getUTCFullYear();
  const month = birthDate.getUTCMonth() + 1 + (options.synthetic ? 80 : 0);
  const base = `${pad(birthDate.getUTCDate())}${pad(month)}${pad(year % 100)}`;
  const first = options.from ?? (year >= 2000 ? 500 : 100);
  for (let individual = first; individual < first + 400; individual += 1) {
    const fnr = withCheckDigits(`${base}${pad(individual, 3)}`);
    if (fnr !== undefined) return fnr;
  }
  throw new Error('no identity number for this date');
}

/**
 * The i-th of a series of distinct, valid synthetic identity numbers (month + 80), accepted where
 * synthetic numbers are allowed (PRIVACY_ALLOW_SYNTHETIC_IDS, as in tests).
 */
export function syntheticFnr(i: number): string {
  for (let n = i; ; n += 1_000_003) {
    const day = (n % 28) + 1;
    const month = 81 + (Math.floor(n / 28) % 12);
    const year = Math.floor(n / 336) % 100;
    const individual = Math.floor(n / 33600) % 500;
    const fnr = withCheckDigits(`${pad(day)}${pad(month)}${pad(year)}${pad(individual, 3)}`);
    if (fnr !== undefined) return fnr;
  }
}
