// CRC-32C (Castagnoli), the checksum OP_MSG uses when its checksumPresent flag is set, and the one
// that guards each journal record (journal.ts).
// Hand-written because Node's zlib only offers plain CRC-32 (and only from Node 22) and no package in
// the workspace provides CRC-32C; a table-driven implementation is a dozen lines and easy to verify
// against the standard check value crc32c("123456789") === 0xe3069283.

const TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0x82f63b78 ^ (c >>> 1) : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/**
 * `previous`: the CRC of the bytes before these, to checksum a record held in several buffers
 * (crc32c(b, 0, b.length, crc32c(a)) === crc32c(a followed by b)).
 */
export function crc32c(bytes: Uint8Array, start = 0, end = bytes.length, previous = 0): number {
  let crc = (previous ^ 0xffffffff) >>> 0;
  for (let i = start; i < end; i++)
    crc = (TABLE[(crc ^ (bytes[i] as number)) & 0xff] as number) ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}
