import { createLogger } from '@nhp/shared-logger';
import { useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import {
  closeMongo,
  connectMongo,
  mongoPing,
  ensureIndexes,
  missingIndexes,
  MissingIndexesError,
  prepareIndexes,
} from '../src';
import { createNoteRepository, NoteAlreadyExistsError } from './support/note.repository';

const infra = useTestInfra();
const logger = createLogger({ name: 'persistence-test', level: 'silent' });

describe('shared persistence', () => {
  let conn: Connection;

  beforeAll(async () => {
    conn = await connectMongo({ uri: infra.get().mongoUri, logger, autoIndex: false });
  });
  afterAll(() => closeMongo(conn));

  it('when connected, then the readiness ping succeeds and commands are not buffered', async () => {
    expect(await mongoPing(conn)).toBe(true);
    expect(conn.get('bufferCommands')).toBe(false);
  });

  it('when autoIndex is off, then the declared indexes are missing until ensureIndexes builds them, once', async () => {
    const notes = createNoteRepository(conn);
    expect(await missingIndexes(conn)).toEqual([
      { collection: 'example_notes', name: 'key_unique', keys: { key: 1 } },
    ]);
    await expect(prepareIndexes(conn, { ensure: false })).rejects.toThrow(
      /example_notes\.key_unique.*npm run db-indexes/,
    );
    await expect(prepareIndexes(conn, { ensure: false })).rejects.toBeInstanceOf(
      MissingIndexesError,
    );
    expect((await ensureIndexes(conn)).map((i) => i.name)).toEqual(['key_unique']);
    const indexes = await conn.collection('example_notes').indexes();
    expect(indexes.map((i) => i.name)).toContain('key_unique');
    expect(await ensureIndexes(conn)).toEqual([]);
    await expect(prepareIndexes(conn, { ensure: false })).resolves.toBeUndefined();
    await notes.create({ key: 'a', text: 'first', createdAt: new Date('2026-01-01T00:00:00Z') });
  });

  it('when an index nobody declares exists, then ensureIndexes leaves it alone', async () => {
    createNoteRepository(conn);
    await conn.collection('example_notes').createIndex({ text: 1 }, { name: 'operators_own' });
    await ensureIndexes(conn);
    const names = (await conn.collection('example_notes').indexes()).map((i) => i.name);
    expect(names).toContain('operators_own');
  });

  it('when a note with the same key exists, then create raises the domain error', async () => {
    const notes = createNoteRepository(conn);
    await ensureIndexes(conn);
    await notes.create({ key: 'dup', text: 'one', createdAt: new Date() });
    await expect(
      notes.create({ key: 'dup', text: 'two', createdAt: new Date() }),
    ).rejects.toBeInstanceOf(NoteAlreadyExistsError);
    expect((await notes.findByKey('dup'))?.text).toBe('one');
  });

  it('when reading, then plain objects come back, not mongoose documents', async () => {
    const notes = createNoteRepository(conn);
    const found = await notes.findByKey('a');
    expect(found).toEqual({ key: 'a', text: 'first', createdAt: new Date('2026-01-01T00:00:00Z') });
    expect(Object.getPrototypeOf(found)).toBe(Object.prototype);
  });

  it('when the connection is closed, then the readiness ping reports false instead of throwing', async () => {
    const other = await connectMongo({ uri: infra.get().mongoUri, logger });
    await closeMongo(other);
    expect(await mongoPing(other)).toBe(false);
  });
});
