export {
  readSampleData,
  SAMPLE_DATA_DIR,
  SAMPLE_FILE_NAMES,
  sampleDataPath,
  type SampleVersion,
} from './paths';
export {
  changedIndices,
  syntheticItems,
  syntheticReimbursementGroups,
  syntheticTreatmentGroups,
  writeItems,
  type SyntheticOptions,
} from './synthetic';
export {
  buildSampleData,
  SAMPLE_SEED,
  type SampleData,
  type SampleDelta,
  type SampleSnapshot,
} from './generate-sample';
export { CODE_SYSTEMS, LEGAL_BASIS } from './codes';
