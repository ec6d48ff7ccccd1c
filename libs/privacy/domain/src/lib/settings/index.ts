export { definitionWindowOpen, isActiveAt, withinCitizenPeriods } from './active';
export {
  compareSetRequests,
  decideSet,
  type Decision,
  type RequestOrderKey,
  type SetRequest,
} from './decide';
export { invalidPeriodIndex, normaliseMetadata, sameMetadata } from './metadata';
export type {
  NewProof,
  ProofRef,
  SettingHistoryEntry,
  SettingsStore,
  SettingState,
  SettingWriteRecord,
  StoredProof,
  StoredSetting,
  WriteOutcome,
} from './model';
export {
  MAX_PROOF_BYTES,
  parseProof,
  PROOF_MIME_TYPES,
  type Proof,
  type ProofMimeType,
} from './proof';
export {
  createSettingsUseCases,
  type SettingsUseCasePorts,
  type SettingsUseCases,
} from './settings-use-cases';
export { MAX_TIDSPUNKT_AHEAD_MS, toInstant } from './time';
