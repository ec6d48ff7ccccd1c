export { readSampleData, SAMPLE_DATA_DIR, SAMPLE_FILE_NAMES, sampleDataPath, type SampleVersion } from './paths';
