/**
 * Builds valid identity numbers for a birth date (tests need children of exact ages). Individual
 * numbers are chosen in the range the century needs; a candidate whose check digit would be 10
 * is skipped, as the rules make it.
 */
const K1 = [3, 7, 6, 1, 8, 9, 4, 5, 2];
const K2 = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];

function check(digits: number[], weights: number[]): number | undefined {
  const rest = 11 - (weights.reduce((sum, w, i) => sum + w * (digits[i] as number), 0) % 11);
  if (rest === 11) return 0;
  return rest === 10 ? undefined : rest;
}

export function fnrBornOn(birthDate: Date, options: { synthetic?: boolean; from?: number } = {}) {
  const year = birthDate.getUTCFullYear();
  const pad = (n: number, width = 2) => String(n).padStart(width, '0');
  const month = birthDate.getUTCMonth() + 1 + (options.synthetic ? 80 : 0);
  const base = `${pad(birthDate.getUTCDate())}${pad(month)}${pad(year % 100)}`;
  const first = options.from ?? (year >= 2000 ? 500 : 100);
  for (let individual = first; individual < first + 400; individual += 1) {
    const digits = [...`${base}${pad(individual, 3)}`].map(Number);
    const k1 = check(digits, K1);
    if (k1 === undefined) continue;
    const k2 = check([...digits, k1], K2);
    if (k2 === undefined) continue;
    return `${base}${pad(individual, 3)}${k1}${k2}`;
  }
  throw new Error('no identity number for this date');
}
