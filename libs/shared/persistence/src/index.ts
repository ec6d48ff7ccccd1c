export {
  closeMongo,
  connectMongo,
  mongoPing,
  syncIndexes,
  type ConnectMongoOptions,
} from './connection';
export { modelOf } from './models';
export { DUPLICATE_KEY, duplicateKeyInfo, type DuplicateKeyInfo } from './duplicate-key';
export {
  createNoteRepository,
  NoteAlreadyExistsError,
  type Note,
  type NoteRepository,
} from './example/note.repository';
export {
  DATABASE_ERROR,
  DATABASE_UNAVAILABLE,
  DUPLICATE_KEY_CONFLICT,
  toAppError,
  translated,
} from './driver-errors';
