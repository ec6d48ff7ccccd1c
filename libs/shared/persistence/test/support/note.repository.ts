/**
 * The repository pattern every data-access lib in this workspace follows, on a deliberately small
 * aggregate ("note"):
 * - one factory per aggregate that takes a mongoose Connection (never the global default);
 * - the schema declares its indexes, so `ensureIndexes` and `autoIndex` both know them;
 * - reads are `lean()` and mapped to a plain object of the contract type (no mongoose documents
 *   escape the repository);
 * - a duplicate-key error from the driver becomes a domain error the caller can act on.
 */
import { Schema, type Connection } from 'mongoose';
import { duplicateKeyInfo, modelOf } from '../../src';

export interface Note {
  key: string;
  text: string;
  createdAt: Date;
}

export class NoteAlreadyExistsError extends Error {
  constructor(readonly key: string) {
    super(`a note with key ${key} already exists`);
    this.name = 'NoteAlreadyExistsError';
  }
}

interface NoteDocument {
  key: string;
  text: string;
  createdAt: Date;
}

const noteSchema = new Schema<NoteDocument>(
  {
    key: { type: String, required: true },
    text: { type: String, required: true },
    createdAt: { type: Date, required: true },
  },
  { collection: 'example_notes', versionKey: false, strict: 'throw' },
);
noteSchema.index({ key: 1 }, { unique: true, name: 'key_unique' });

function toNote(doc: NoteDocument): Note {
  return { key: doc.key, text: doc.text, createdAt: doc.createdAt };
}

export function createNoteRepository(conn: Connection) {
  const Notes = modelOf<NoteDocument>(conn, 'ExampleNote', noteSchema);

  return {
    async create(note: Note): Promise<Note> {
      try {
        await Notes.create(note);
        return note;
      } catch (err) {
        if (duplicateKeyInfo(err)) throw new NoteAlreadyExistsError(note.key);
        throw err;
      }
    },

    async findByKey(key: string): Promise<Note | undefined> {
      const doc = await Notes.findOne({ key }).lean<NoteDocument>().exec();
      return doc ? toNote(doc) : undefined;
    },

    async list(): Promise<Note[]> {
      const docs = await Notes.find().sort({ key: 1 }).lean<NoteDocument[]>().exec();
      return docs.map(toNote);
    },
  };
}

export type NoteRepository = ReturnType<typeof createNoteRepository>;
