import { createHash } from 'node:crypto';
import { privacyErrors } from '../errors';

export const PROOF_MIME_TYPES = [
  'image/png',
  'image/jpeg',
  'image/bmp',
  'application/pdf',
] as const;
export type ProofMimeType = (typeof PROOF_MIME_TYPES)[number];

/** At most 4 MiB of decoded proof. */
export const MAX_PROOF_BYTES = 4 * 1024 * 1024;

/** The leading bytes ("magic numbers") each accepted type must start with. */
const SIGNATURES: Record<ProofMimeType, number[]> = {
  'image/png': [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
  'image/jpeg': [0xff, 0xd8, 0xff],
  'image/bmp': [0x42, 0x4d],
  'application/pdf': [0x25, 0x50, 0x44, 0x46, 0x2d],
};

/**
 * Base64 of RFC 4648 section 4, padding optional. Checked by hand because Node's decoder silently
 * skips characters outside the alphabet; one flat character class (no repeated group) keeps the
 * regular expression linear and stack-free on a 5.6 MB string.
 */
const BASE64_CHARS = /^[A-Za-z0-9+/]*={0,2}$/;

function isBase64(text: string): boolean {
  if (!BASE64_CHARS.test(text)) return false;
  const padded = text.endsWith('=');
  return padded ? text.length % 4 === 0 : text.length % 4 !== 1;
}

export interface Proof {
  mimeType: ProofMimeType;
  bytes: Buffer;
  /** Hex SHA-256 of the bytes: tells a retried request from a new proof without loading bytes. */
  sha256: string;
}

/**
 * The proof a set request carries, if any: both fields or neither. Throws EPVK-104400 for a type
 * that is not accepted, text that is not base64, more than 4 MiB decoded, content whose leading
 * bytes do not match the type, or only one of the two fields.
 */
export function parseProof(
  mimeType: string | null | undefined,
  content: string | null | undefined,
): Proof | undefined {
  const hasType = mimeType != null && mimeType !== '';
  const hasContent = content != null && content !== '';
  if (!hasType && !hasContent) return undefined;
  if (!hasType || !hasContent) {
    throw privacyErrors.invalidProof(
      'signertBevisMimeType and signertBevisInnhold must be given together',
    );
  }
  const type = mimeType.trim().toLowerCase() as ProofMimeType;
  if (!PROOF_MIME_TYPES.includes(type)) {
    throw privacyErrors.invalidProof(
      `signertBevisMimeType must be one of ${PROOF_MIME_TYPES.join(', ')}`,
    );
  }
  // Checked on the text before decoding: 4 base64 characters carry 3 bytes.
  if (Math.floor(content.length / 4) * 3 > MAX_PROOF_BYTES + 2) {
    throw privacyErrors.invalidProof('signertBevisInnhold is larger than 4 MiB');
  }
  if (!isBase64(content)) {
    throw privacyErrors.invalidProof('signertBevisInnhold is not base64');
  }
  const bytes = Buffer.from(content, 'base64');
  if (bytes.length > MAX_PROOF_BYTES) {
    throw privacyErrors.invalidProof('signertBevisInnhold is larger than 4 MiB');
  }
  const signature = SIGNATURES[type];
  if (bytes.length < signature.length || signature.some((b, i) => bytes[i] !== b)) {
    throw privacyErrors.invalidProof(`signertBevisInnhold is not ${type} content`);
  }
  return { mimeType: type, bytes, sha256: createHash('sha256').update(bytes).digest('hex') };
}
