export { formatChanges, runMirror, type RunMirrorOptions } from './run-mirror';
export {
  loadMirrorFile,
  MIRROR_FILE_FORMAT,
  mirrorFileSchema,
  saveMirrorFile,
  type MirrorFile,
} from './mirror-file';
