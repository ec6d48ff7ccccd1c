import { createLogger } from '@nhp/shared-logger';
import { useTestInfra } from '@nhp/shared-testing';
import type { Connection } from 'mongoose';
import {
  closeMongo,
  connectMongo,
  createNoteRepository,
  mongoPing,
  NoteAlreadyExistsError,
  syncIndexes,
} from '../src';

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

  it('when autoIndex is off, then syncIndexes builds the declared indexes', async () => {
    const notes = createNoteRepository(conn);
    await syncIndexes(conn);
    const indexes = await conn.collection('example_notes').indexes();
    expect(indexes.map((i) => i.name)).toContain('key_unique');
    await notes.create({ key: 'a', text: 'first', createdAt: new Date('2026-01-01T00:00:00Z') });
  });

  it('when a note with the same key exists, then create raises the domain error', async () => {
    const notes = createNoteRepository(conn);
    await syncIndexes(conn);
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
