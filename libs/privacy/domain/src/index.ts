export { isGrantRefusal, PRIVACY_CODES, privacyErrors } from './lib/errors';
export { ageOn, isValidFnr, parseFnr, type FnrKind, type ParsedFnr } from './lib/fnr';
export {
  BUILT_IN_PART,
  DEFINITION_TEMPLATES,
  findTemplate,
  YOUTH_APP_DEFINITION_GUID,
  YOUTH_APP_TEMPLATE_GUID,
  type DefinitionTemplate,
} from './lib/templates';
export { mayUsePart, resolveDefinition } from './lib/definition-access';
export {
  createDefinitionListing,
  definitionListingView,
  type DefinitionListingPorts,
  type ListDefinitions,
} from './lib/definitions/list-definitions';
export {
  ACTING_FOR_TYPES,
  assertMayActFor,
  assertNotCitizenToken,
  mayActFor,
  type CitizenAccessPorts,
} from './lib/citizen-access';
export {
  DEFINITION_STATUSES,
  PI_TYPES,
  type Actor,
  type Definition,
  type DefinitionLookup,
  type DefinitionStatus,
  type DetaljertAngivelseFaste,
  type FasteMetadata,
  type GrantAccess,
  type GrantLookup,
  type OmfangElement,
  type PiType,
  type Relasjon,
  type Tidsbegrensning,
} from './lib/types';
export {
  setInclusion,
  type Inclusion,
  type InclusionChange,
  type InclusionStore,
  type SetInclusionOptions,
  type SetInclusionPorts,
} from './lib/inclusions/set-inclusion';
export {
  getRepresentation,
  MAX_RELATIONSHIPS_PER_CALLER,
  parseRepresentationImport,
  tilleggsinfoOf,
  type ImportLineError,
  type RepresentationImport,
  type RepresentationLookup,
  type RepresentationRelationship,
} from './lib/representation/relationships';
export * from './lib/settings';
export {
  createYouthAppConsent,
  type YouthAppCaller,
  type YouthAppConsent,
  type YouthAppConsentPorts,
} from './lib/youth-app/youth-app-consent';
