export { isGrantRefusal, privacyErrors } from './lib/errors';
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
export { definitionListingView } from './lib/definitions/definition-listing-view';
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
export { auditOf, type AuditActor, type AuditContext } from './lib/audit/audit';
export {
  createPartUseCases,
  type Part,
  type PartStore,
  type PartUseCases,
} from './lib/parts/part-use-cases';
export {
  createGrantUseCases,
  type Grant,
  type GrantRights,
  type GrantStore,
  type GrantUseCases,
} from './lib/grants/grant-use-cases';
export {
  definitionFromTemplate,
  type NewDefinitionFields,
} from './lib/definitions/definition-from-template';
export {
  createDefinitionUseCases,
  type DefinitionChanges,
  type DefinitionUseCasePorts,
  type DefinitionUseCases,
} from './lib/definitions/definition-use-cases';
export { ensureBuiltIns, type BuiltInPorts } from './lib/definitions/built-ins';
export {
  createInclusionUseCases,
  type Inclusion,
  type InclusionChange,
  type InclusionStore,
  type InclusionUseCasePorts,
  type InclusionUseCases,
} from './lib/inclusions/inclusion-use-cases';
export {
  MAX_RELATIONSHIPS_PER_CALLER,
  parseRepresentationImport,
  tilleggsinfoOf,
  type ImportLineError,
  type RepresentationImport,
  type RepresentationLookup,
  type RepresentationRelationship,
} from './lib/representation/relationships';
export {
  createRepresentationUseCases,
  type ImportOptions,
  type ImportOutcome,
  type RepresentationStore,
  type RepresentationUseCases,
} from './lib/representation/representation-use-cases';
export * from './lib/settings';
export {
  createYouthAppUseCases,
  type YouthAppUseCasePorts,
  type YouthAppUseCases,
} from './lib/youth-app/youth-app-use-cases';
export {
  createPrivacyUseCases,
  type PrivacyUseCasePorts,
  type PrivacyUseCases,
} from './lib/privacy-use-cases';
