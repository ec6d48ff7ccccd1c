export * from './lib/journal';
export { registerPrivacyModels } from './lib/models';
export {
  announceChanges,
  followCacheInvalidations,
  PRIVACY_CACHE_SUBJECT,
  type CachedKind,
} from './lib/cache-invalidation';
export {
  createInclusionRepository,
  INCLUSIONS_COLLECTION,
  type CreateInclusionRepositoryOptions,
  inclusionKey,
  type InclusionHistoryItem,
  type InclusionRepository,
  type StoredInclusion,
} from './lib/inclusions/inclusion.repository';
export {
  createRepresentationRepository,
  REPRESENTATION_COLLECTION,
  type CreateRepresentationRepositoryOptions,
  type ImportOptions,
  type RepresentationRepository,
} from './lib/representation/representation.repository';
export { DEFAULT_CACHE_TTL_MS, type AuditContext } from './lib/audit-context';
export {
  createPartRepository,
  PARTS_COLLECTION,
  type CreatePartRepositoryOptions,
  type Part,
  type PartRepository,
} from './lib/parts/part.repository';
export {
  createDefinitionRepository,
  DEFINITIONS_COLLECTION,
  type CreateDefinitionRepositoryOptions,
  type DefinitionChanges,
  type DefinitionRepository,
} from './lib/definitions/definition.repository';
export {
  createGrantRepository,
  grantId,
  GRANTS_COLLECTION,
  type CreateGrantRepositoryOptions,
  type Grant,
  type GrantRepository,
} from './lib/grants/grant.repository';
export * from './lib/settings';
export {
  createPrivacyRepositories,
  type CreatePrivacyRepositoriesOptions,
  type PrivacyRepositories,
} from './lib/privacy-repositories';
