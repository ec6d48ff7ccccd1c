import { AppError } from '@nhp/shared-errors';
import { createDatasetReads, MAX_VERSION_ATTEMPTS } from '../src/dataset-reads';
import type { DatasetReader } from '../src/ports';
import type { Selection } from '../src/responses/response-store';

const logger = { debug: () => undefined, info: () => undefined, warn: () => undefined };
const selection: Selection = { dataset: 'treatmentGroup', spelling: 'primary', since: undefined };
const CONFLICT = 'TEST_VERSION_CONFLICT';

/** Storage whose version moves on `conflicts` times while a list is read (two syncs won). */
function movingStorage(conflicts: number) {
  let version = 4;
  const scannedAt: number[] = [];
  const reader: DatasetReader = {
    currentVersion: async () => version,
    scanItems: async (_dataset, { atVersion }) => {
      scannedAt.push(atVersion);
      if (scannedAt.length <= conflicts) {
        version++;
        throw new AppError({ code: CONFLICT, status: 409, message: 'left behind' });
      }
      return [];
    },
  };
  const infos: object[] = [];
  const reads = createDatasetReads({
    reader,
    versionConflicts: {
      is: (err) => err instanceof AppError && err.code === CONFLICT,
      exhausted: (cause) => new AppError({ code: 'GAVE_UP', status: 503, message: 'x', cause }),
    },
    authenticate: () => 'acme',
    logger,
    cacheMaxBytes: 1024 * 1024,
  });
  return { reads, scannedAt, log: { info: (obj: object) => infos.push(obj) }, infos };
}

describe('computeMiss: a miss at the stored version', () => {
  it('when storage refuses the version as left behind, then the version is read again and the body computed at the new one', async () => {
    const { reads, scannedAt, log, infos } = movingStorage(1);
    const { etag, response } = await reads.computeMiss(selection, 'identity', undefined, log);
    expect(scannedAt).toEqual([4, 5]);
    expect(etag).toBe('"v5.tg.p.all.id"');
    expect(JSON.parse(response?.body.toString('utf8') as string)).toEqual({
      currentVersion: 5,
      items: [],
    });
    expect(infos).toEqual([{ version: 4, attempt: 1 }]);
    expect(reads.versions.current()).toBe(5);
  });

  it('when the version keeps moving, then the miss gives up after the last attempt with the exhausted error', async () => {
    const { reads, scannedAt, log } = movingStorage(Infinity);
    await expect(reads.computeMiss(selection, 'gzip', undefined, log)).rejects.toMatchObject({
      code: 'GAVE_UP',
      cause: { code: CONFLICT },
    });
    expect(scannedAt).toHaveLength(MAX_VERSION_ATTEMPTS);
  });

  it('when If-None-Match holds the ETag at the stored version, then no body is computed', async () => {
    const { reads, scannedAt, log } = movingStorage(0);
    const outcome = await reads.computeMiss(selection, 'br', 'W/"v4.tg.p.all.br"', log);
    expect(outcome).toEqual({ etag: '"v4.tg.p.all.br"', response: undefined });
    expect(scannedAt).toEqual([]);
  });

  it('when any other error comes from storage, then it is thrown as it is, without reading again', async () => {
    const failure = new AppError({ code: 'DATABASE_UNAVAILABLE', status: 503, message: 'down' });
    const reads = createDatasetReads({
      reader: {
        currentVersion: async () => 1,
        scanItems: async () => Promise.reject(failure),
      },
      versionConflicts: { is: () => false, exhausted: () => new Error('not expected') },
      authenticate: () => 'acme',
      logger,
      cacheMaxBytes: 1024 * 1024,
    });
    await expect(reads.computeMiss(selection, 'identity', undefined, logger)).rejects.toBe(failure);
  });
});

describe('warmUp', () => {
  it('when the version cannot be read yet, then it resolves undefined and the next read tries again', async () => {
    let fail = true;
    const warnings: object[] = [];
    const reads = createDatasetReads({
      reader: {
        currentVersion: async () => {
          if (fail) throw new Error('down');
          return 3;
        },
        scanItems: async () => [],
      },
      versionConflicts: { is: () => false, exhausted: (err) => err as Error },
      authenticate: () => 'acme',
      logger: { ...logger, warn: (obj: object) => warnings.push(obj) },
      cacheMaxBytes: 1024 * 1024,
    });
    await expect(reads.warmUp()).resolves.toBeUndefined();
    expect(warnings).toHaveLength(1);
    fail = false;
    await expect(reads.warmUp()).resolves.toBe(3);
    expect(reads.versions.current()).toBe(3);
  });
});
