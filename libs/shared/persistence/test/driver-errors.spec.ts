import { AppError } from '@nhp/shared-errors';
import { freePort, useTestInfra } from '@nhp/shared-testing';
import mongoose from 'mongoose';
import {
  DATABASE_ERROR,
  DATABASE_UNAVAILABLE,
  DUPLICATE_KEY_CONFLICT,
  toAppError,
  translated,
} from '../src';

const infra = useTestInfra();

describe('driver errors become AppErrors inside the data layer', () => {
  it('when a unique key is written twice, then the error is a 409 conflict with the key pattern', async () => {
    const conn = await mongoose.createConnection(infra.get().mongoUri).asPromise();
    try {
      const coll = conn.collection('driver_errors_dup');
      await coll.createIndex({ key: 1 }, { unique: true });
      await coll.insertOne({ key: 'a' });
      const err = await translated(() => coll.insertOne({ key: 'a' })).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(AppError);
      expect(err).toMatchObject({
        code: DUPLICATE_KEY_CONFLICT,
        status: 409,
        category: 'conflict',
        expose: false,
        details: { keyPattern: { key: 1 } },
      });
    } finally {
      await conn.close();
    }
  });

  it('when the database cannot be reached, then the error is a 503 unavailable, operational', async () => {
    const port = await freePort();
    const conn = mongoose.createConnection(`mongodb://127.0.0.1:${port}/x`, {
      serverSelectionTimeoutMS: 200,
    });
    conn.on('error', () => undefined);
    try {
      const err = await translated(() => conn.collection('x').findOne({})).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: DATABASE_UNAVAILABLE,
        status: 503,
        category: 'unavailable',
        operational: true,
      });
    } finally {
      await conn.close();
    }
  });

  it('when the server refuses a command for another reason, then it is an internal programmer error', async () => {
    const conn = await mongoose.createConnection(infra.get().mongoUri).asPromise();
    try {
      const err = await translated(() =>
        conn.collection('x').updateOne({}, { $noSuchOperator: { a: 1 } } as never),
      ).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: DATABASE_ERROR,
        status: 500,
        category: 'internal',
        operational: false,
      });
    } finally {
      await conn.close();
    }
  });
});

describe('toAppError on a connection the server ended', () => {
  it('when a write meets a socket ended by the server (EPIPE), bare or as a cause, then it is a 503 unavailable', () => {
    const ended = Object.assign(new Error('This socket has been ended by the other party'), {
      code: 'EPIPE',
    });
    expect(toAppError(ended)).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE' });
    const wrapped = new Error('unexpected error writing to socket', { cause: ended });
    expect(toAppError(wrapped)).toMatchObject({ status: 503, category: 'unavailable' });
    expect(toAppError(new Error('something else'))).toMatchObject({ status: 500 });
  });
});
