export { runPrivacyMirror, type MirrorRunSummary, type PrivacyMirrorOptions } from './mirror';
export {
  JsonFileMirrorStore,
  MIRROR_FORMAT,
  type MirrorEntry,
  type MirroredDefinition,
  type MirrorState,
  type MirrorStore,
} from './store';
