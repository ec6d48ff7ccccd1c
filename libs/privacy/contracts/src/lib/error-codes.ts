/**
 * privacy-api's error catalogue: every code a client can see (ErrorResponse.code), in one place.
 * The domain raises the business ones (privacyErrors), privacy-auth the authentication ones, and
 * the app's error formatter numbers the shared layers' errors with the rest. The numbering is
 * 100 + the HTTP status for the generic ones, so a status the catalogue does not list (408, 431
 * from the HTTP parser) is numbered alike (see privacyCodeForStatus).
 */
export const PRIVACY_CODES = {
  /** Malformed JSON, wrong JSON type, or a body, query or header that fails its schema. */
  validation: 'EPVK-100400',
  /** Missing, malformed or badly signed token or DPoP proof; expired token. */
  unauthenticated: 'EPVK-100401',
  /**
   * Missing scope or the wrong kind of token (system vs citizen), or a citizen's token naming a
   * citizen it does not act for.
   */
  refused: 'EPVK-100403',
  /** No such path (a status the interface does not list). */
  notFound: 'EPVK-100404',
  /** A method the path does not serve (a status the interface does not list). */
  methodNotAllowed: 'EPVK-100405',
  payloadTooLarge: 'EPVK-100413',
  unsupportedMediaType: 'EPVK-100415',
  /**
   * A DPoP key has its share of the proof replay table in use: its proofs are refused for the
   * seconds `Retry-After` says (every other key's still pass).
   */
  replayShareExceeded: 'EPVK-100429',
  internal: 'EPVK-100500',
  /** The database, or the issuer's key endpoint, cannot be reached. */
  unavailable: 'EPVK-100503',
  invalidFnr: 'EPVK-101518',
  /** Unknown definition, definition not owned by the partKode, or no grant: indistinguishable. */
  unknownDefinition: 'EPVK-101500',
  /** typePi differs from the definition's, or the definition is inactive. */
  definitionRule: 'EPVK-101501',
  partExists: 'EPVK-102409',
  unknownPart: 'EPVK-102404',
  definitionExists: 'EPVK-103409',
  unknownTemplateOrRelation: 'EPVK-103404',
  invalidProof: 'EPVK-104400',
} as const;

export type PrivacyCode = (typeof PRIVACY_CODES)[keyof typeof PRIVACY_CODES];

const CODE_PREFIX = 'EPVK-';

/** Whether a code is one of the catalogue's scheme (EPVK-…). */
export function isPrivacyCode(code: string): boolean {
  return code.startsWith(CODE_PREFIX);
}

/** The generic code of an HTTP status: 100 + the status (EPVK-100408 for a 408). */
export function privacyCodeForStatus(status: number): string {
  return `${CODE_PREFIX}100${status}`;
}
