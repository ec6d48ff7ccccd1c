/** Shared test data of the settings and events specs. */

const K1 = [3, 7, 6, 1, 8, 9, 4, 5, 2];
const K2 = [5, 4, 3, 2, 7, 6, 5, 4, 3, 2];

function checkDigit(weights: number[], digits: number[]): number {
  const rest = 11 - (weights.reduce((sum, w, j) => sum + w * (digits[j] as number), 0) % 11);
  return rest === 11 ? 0 : rest;
}

/**
 * The i-th of a series of distinct, valid synthetic identity numbers (month + 80, both check
 * digits right); accepted because tests run with synthetic numbers allowed.
 */
export function syntheticFnr(i: number): string {
  for (let n = i; ; n += 1_000_003) {
    const day = String((n % 28) + 1).padStart(2, '0');
    const month = String(81 + (Math.floor(n / 28) % 12)).padStart(2, '0');
    const year = String(Math.floor(n / 336) % 100).padStart(2, '0');
    const individual = String(Math.floor(n / 33600) % 500).padStart(3, '0');
    const base = `${day}${month}${year}${individual}`;
    const digits = [...base].map(Number);
    const k1 = checkDigit(K1, digits);
    if (k1 === 10) continue;
    const k2 = checkDigit(K2, [...digits, k1]);
    if (k2 === 10) continue;
    return `${base}${k1}${k2}`;
  }
}

export const PATHS = {
  set: '/personverninnstillinger/settinnbyggerspersonverninnstilling/v2',
  status: '/personverninnstillinger/sjekkinnbyggerspistatus/v2',
  forPart: '/personverninnstillinger/hentinnbyggerspiforpart/v2',
  proofs: '/personverninnstillinger/hentinnbyggersopplastedebevis/v2',
  active: '/personverninnstillinger/hentinnbyggereaktivepifordefinisjon/v2',
} as const;

export const PROOF_BYTES = {
  png: Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    Buffer.alloc(100, 1),
  ]),
  jpeg: Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(100, 2)]),
  bmp: Buffer.concat([Buffer.from('BM'), Buffer.alloc(100, 3)]),
  pdf: Buffer.from('%PDF-1.4\n% test proof\n'),
};
