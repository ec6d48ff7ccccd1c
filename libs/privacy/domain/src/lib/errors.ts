import { AppError, type ErrorCategory } from '@nhp/shared-errors';

/**
 * privacy-api's error catalogue: every code a client can see, with its status. The HTTP formatter
 * turns the neutral category into ErrorResponse.errorCategory (validation → ClientValidationError,
 * rule → ServerValidationError, credentials-expired → SessionExpired, unavailable → EndpointIsDown,
 * internal → Unknown).
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
  payloadTooLarge: 'EPVK-100413',
  unsupportedMediaType: 'EPVK-100415',
  internal: 'EPVK-100500',
  databaseUnavailable: 'EPVK-100503',
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

/** Refusals for want of a grant: answered as an unknown definition, counted apart in metrics. */
const grantRefusals = new WeakSet<AppError>();

/** Whether the error refused a caller for want of the party's grant (see privacyErrors.noGrant). */
export function isGrantRefusal(err: unknown): boolean {
  return err instanceof AppError && grantRefusals.has(err);
}

function clientError(code: string, message: string, category: ErrorCategory = 'validation') {
  return new AppError({ code, status: 400, message, category });
}

export const privacyErrors = {
  validation: (message: string, details?: unknown) =>
    new AppError({ code: PRIVACY_CODES.validation, status: 400, message, details }),
  invalidFnr: (field = 'innbyggerFnr') =>
    clientError(PRIVACY_CODES.invalidFnr, `${field} is not a valid national identity number`),
  unknownDefinition: () =>
    clientError(
      PRIVACY_CODES.unknownDefinition,
      'The definition does not exist, does not belong to the given partKode, or the client has no access to it',
    ),
  /**
   * The caller has no grant for the definition's party: to the client exactly an unknown
   * definition (nothing leaks), to the operator a grant refusal (isGrantRefusal).
   */
  noGrant: (): AppError => {
    const err = privacyErrors.unknownDefinition();
    grantRefusals.add(err);
    return err;
  },
  typeMismatch: (expected: string) =>
    clientError(
      PRIVACY_CODES.definitionRule,
      `typePi does not match the definition's type (${expected})`,
      'rule',
    ),
  definitionInactive: () =>
    clientError(
      PRIVACY_CODES.definitionRule,
      'The definition is inactive: settings cannot be created or changed',
      'rule',
    ),
  partExists: (partKode: string) =>
    clientError(PRIVACY_CODES.partExists, `A party with partKode ${partKode} exists`),
  unknownPart: (partKode: string) =>
    clientError(PRIVACY_CODES.unknownPart, `No party with partKode ${partKode}`),
  definitionExists: () =>
    clientError(PRIVACY_CODES.definitionExists, 'A definition with this definisjonGuid exists'),
  unknownTemplate: () =>
    clientError(PRIVACY_CODES.unknownTemplateOrRelation, 'Unknown definisjonMalGuid'),
  unknownRelation: (guid: string) =>
    clientError(
      PRIVACY_CODES.unknownTemplateOrRelation,
      `relasjoner names a definition that does not exist: ${guid}`,
    ),
  invalidProof: (reason: string) => clientError(PRIVACY_CODES.invalidProof, reason),
  /**
   * A token in a citizen's context naming a citizen it does not act for, or asking for many
   * citizens at once: refused as a missing scope is. 401, because every operation that names a
   * citizen declares no 403. The message names no identity number.
   */
  notActingFor: (message: string) =>
    new AppError({ code: PRIVACY_CODES.refused, status: 401, message, category: 'authorization' }),
};
