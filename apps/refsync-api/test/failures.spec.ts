import { refsyncStorageError, versionConflict } from '@nhp/refsync-data-access';
import { createLogger } from '@nhp/shared-logger';
import request from 'supertest';
import type { DatasetReader, ListedItem } from '@nhp/refsync-read';
import { createApp } from '../src/app';
import { keyEntry, TEST_CLIENT, TEST_KEY } from './support/harness';

/**
 * Failures of the storage port. The reader here is a stand-in for the repository (not the
 * driver): what matters is how the service answers when the repository fails.
 */
function appWith(reader: DatasetReader) {
  return createApp({
    logger: createLogger({ name: 'test', level: 'silent' }),
    reader,
    apiKeys: [keyEntry(TEST_CLIENT, TEST_KEY)],
    cacheMaxBytes: 1024 * 1024,
    versionCheckIntervalMs: 3_600_000,
  });
}

/** A scan that delivers these items, already in response order, and none late. */
function scanOf(items: ListedItem[]): DatasetReader['scanItems'] {
  return async (_dataset, _options, onItem) => {
    for (const item of items) onItem({ itemId: (item.data as { id: string }).id, item });
    return [];
  };
}

function driverError(name: string): Error {
  const err = new Error('connect ECONNREFUSED 127.0.0.1:27017');
  err.name = name;
  return err;
}

/** What the read repository rejects with when the driver fails: already an AppError. */
function storageError(name: string): Error {
  return refsyncStorageError(driverError(name));
}

describe('when storage fails', () => {
  it('when the database cannot be reached, then 503 problem details without internals', async () => {
    const app = appWith({
      currentVersion: () => Promise.reject(storageError('MongoServerSelectionError')),
      scanItems: () => Promise.reject(storageError('MongoServerSelectionError')),
    });
    const res = await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', TEST_KEY)
      .expect(503);
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(JSON.parse(res.text)).toEqual({
      type: 'about:blank',
      title: 'Service Unavailable',
      status: 503,
      detail: 'The data store cannot be reached; retry later',
      instance: '/api/v1/treatmentGroup',
      code: 'DATABASE_UNAVAILABLE',
    });
    expect(res.headers['retry-after']).toBe('5');
    expect(res.text).not.toContain('27017');
    await app.close();
  });

  it('when the database fails while a body is computed, then 503 too', async () => {
    const app = appWith({
      currentVersion: async () => 3,
      scanItems: () => Promise.reject(storageError('MongoNetworkError')),
    });
    await request(app).get('/api/v1/reimbursementGroup').set('X-API-KEY', TEST_KEY).expect(503);
    await app.close();
  });

  it('when the database goes away in the middle of a list, then 503, and nothing of the partial list is kept', async () => {
    const items: ListedItem[] = ['TG-1', 'TG-2'].map((id) => ({
      data: { id, name: id },
      version: 1,
      lastChanged: new Date(0),
      isDeleted: false,
    }));
    let broken = true;
    const app = appWith({
      currentVersion: async () => 1,
      scanItems: async (dataset, options, onItem) => {
        if (!broken) return scanOf(items)(dataset, options, onItem);
        onItem({ itemId: 'TG-1', item: items[0] });
        throw storageError('MongoNetworkError');
      },
    });
    const failed = await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', TEST_KEY)
      .expect(503);
    expect(JSON.parse(failed.text)).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    broken = false;
    const res = await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    expect(res.body.items.map((i: { data: { id: string } }) => i.data.id)).toEqual([
      'TG-1',
      'TG-2',
    ]);
    await app.close();
  });

  it('when the storage port rejects with an untranslated driver error, then it is a 500, not a guessed 503', async () => {
    const bug = new Error('unknown operator: $bogus');
    bug.name = 'MongoServerError';
    const app = appWith({
      currentVersion: async () => 3,
      scanItems: () => Promise.reject(bug),
    });
    const res = await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', TEST_KEY)
      .expect(500);
    expect(JSON.parse(res.text)).toMatchObject({ status: 500, code: 'INTERNAL_ERROR' });
    expect(res.headers['retry-after']).toBeUndefined();
    await app.close();
  });

  it('when the repository has a bug, then 500 problem details without internals', async () => {
    const app = appWith({
      currentVersion: async () => 3,
      scanItems: () =>
        Promise.reject(new TypeError('cannot read properties of undefined (reading "data")')),
    });
    const res = await request(app)
      .get('/api/v1/treatment-group')
      .set('X-API-KEY', TEST_KEY)
      .expect(500);
    expect(JSON.parse(res.text)).toMatchObject({
      status: 500,
      code: 'INTERNAL_ERROR',
      detail: 'An unexpected error occurred',
    });
    expect(res.text).not.toContain('reading');
    await app.close();
  });

  it('when storage says the version was left behind while reading, then the version is read again and the answer is current', async () => {
    let version = 1;
    const app = appWith({
      currentVersion: async () => version,
      scanItems: async (dataset, options, onItem) => {
        if (options.atVersion < 3) {
          version = 3; // two syncs committed meanwhile
          throw versionConflict(options.atVersion, 3, 'left behind');
        }
        const items = [
          {
            data: { id: 'TG-3', name: 'x' },
            version: 3,
            lastChanged: new Date(0),
            isDeleted: false,
          },
        ];
        return scanOf(items)(dataset, options, onItem);
      },
    });
    const res = await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    expect(res.body.currentVersion).toBe(3);
    await app.close();
  });

  it('when the version keeps moving on, then 503 after a few attempts', async () => {
    let version = 1;
    const app = appWith({
      currentVersion: async () => version,
      scanItems: async (_dataset, { atVersion }) => {
        version = atVersion + 2;
        throw versionConflict(atVersion, version, 'left behind');
      },
    });
    const res = await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', TEST_KEY)
      .expect(503);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'DATABASE_UNAVAILABLE' });
    await app.close();
  });

  it('when the database goes away after a body was cached, then the cached body and 304s are still served', async () => {
    let down = false;
    const app = appWith({
      currentVersion: async () => {
        if (down) throw storageError('MongoNetworkError');
        return 1;
      },
      scanItems: scanOf([
        { data: { id: 'TG-1', name: 'x' }, version: 1, lastChanged: new Date(0), isDeleted: false },
      ]),
    });
    const first = await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', TEST_KEY)
      .expect(200);
    down = true;
    await request(app).get('/api/v1/treatmentGroup').set('X-API-KEY', TEST_KEY).expect(200);
    await request(app)
      .get('/api/v1/treatmentGroup')
      .set('X-API-KEY', TEST_KEY)
      .set('If-None-Match', first.headers['etag'] as string)
      .expect(304);
    await app.close();
  });
});
