// CRC-32C (Castagnoli), the checksum OP_MSG uses when its checksumPresent flag is set, and the one
// that guards each journal record (journal.ts).
// Hand-written because Node's zlib only offers plain CRC-32 (and only from Node 22) and no package in
// the workspace provides CRC-32C. It is table-driven, eight bytes a step ("slicing-by-8", Intel's
// published method: eight tables, each byte of a 64-bit word looked up in its own): replaying the
// journal checksums every byte of it, and a byte a step made that a visible part of a start after a
// crash (tools/bench/README.md, "soak"). Verified against the standard check value
// crc32c("123456789") === 0xe3069283 and against the bitwise definition (test/wire.spec.ts).

const POLY = 0x82f63b78;

/** TABLES[k][b]: the CRC of byte b followed by k zero bytes. */
const TABLES = (() => {
  const tables = Array.from({ length: 8 }, () => new Int32Array(256));
  const t0 = tables[0] as Int32Array;
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? POLY ^ (c >>> 1) : c >>> 1;
    t0[n] = c;
  }
  for (let n = 0; n < 256; n++) {
    let c = t0[n] as number;
    for (let k = 1; k < 8; k++) {
      c = (t0[c & 0xff] as number) ^ (c >>> 8);
      (tables[k] as Int32Array)[n] = c;
    }
  }
  return tables;
})();
const [T0, T1, T2, T3, T4, T5, T6, T7] = TABLES as [
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
  Int32Array,
];

/**
 * `previous`: the CRC of the bytes before these, to checksum a record held in several buffers
 * (crc32c(b, 0, b.length, crc32c(a)) === crc32c(a followed by b)).
 */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length, previous = 0): number {
  let crc = ~previous;
  let i = start;
  for (; i + 8 <= end; i += 8) {
    const lo =
      crc ^
      ((bytes[i] as number) |
        ((bytes[i + 1] as number) << 8) |
        ((bytes[i + 2] as number) << 16) |
        ((bytes[i + 3] as number) << 24));
    crc =
      (T7[lo & 0xff] as number) ^
      (T6[(lo >>> 8) & 0xff] as number) ^
      (T5[(lo >>> 16) & 0xff] as number) ^
      (T4[lo >>> 24] as number) ^
      (T3[bytes[i + 4] as number] as number) ^
      (T2[bytes[i + 5] as number] as number) ^
      (T1[bytes[i + 6] as number] as number) ^
      (T0[bytes[i + 7] as number] as number);
  }
  for (; i < end; i++) crc = (T0[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return ~crc >>> 0;
}
