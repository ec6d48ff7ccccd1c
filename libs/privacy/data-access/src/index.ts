export * from './lib/journal';
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
