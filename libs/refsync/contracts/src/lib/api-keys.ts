/**
 * The shape of refsync-api's key configuration (REFSYNC_API_KEYS: `<client name>:<sha256 hex>`,
 * comma-separated), shared by the service that parses it and `npm run refsync-keys`, which writes
 * its entries, so that the tool never prints an entry the service would refuse.
 */

/** A client's name: 1-64 letters, digits, ".", "_" or "-", starting with a letter or digit. */
export const API_KEY_CLIENT_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** The SHA-256 of a key as configured: 64 hex digits. */
export const API_KEY_SHA256_HEX = /^[0-9a-fA-F]{64}$/;
