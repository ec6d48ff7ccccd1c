/** Shared test data of the settings and events specs. */

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
