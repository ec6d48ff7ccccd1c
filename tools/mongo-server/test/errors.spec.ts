// Strictness and error shapes. Expected behaviour from the MongoDB manual:
// - Error codes (CommandNotFound 59, BadValue 2, FailedToParse 9, IllegalOperation 20, ...):
//   https://www.mongodb.com/docs/manual/reference/error-codes/
// - "Query and Projection Operators" (an unknown operator is an error):
//   https://www.mongodb.com/docs/manual/reference/operator/query/
// - "Transactions" ("Multi-document transactions are available for replica sets and sharded clusters";
//   a standalone refuses transaction numbers): https://www.mongodb.com/docs/manual/core/transactions/
// - "hello" response fields: https://www.mongodb.com/docs/manual/reference/command/hello/
import { MongoServerError, UUID } from 'mongodb';
import { serverError, startWithDriver, stopHarness, type DriverHarness } from './helpers';

describe('errors and strictness', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it("when a command is unknown, then it fails with CommandNotFound (59) and mongod's message", async () => {
    const err = await serverError(h.db.command({ frobnicate: 1 }));
    expect(err.code).toBe(59);
    expect(err.codeName).toBe('CommandNotFound');
    expect(err.message).toBe("no such command: 'frobnicate'");
  });

  it('when a query operator is unknown, then find fails with BadValue (2)', async () => {
    await h.db.collection('c').insertOne({ a: 1 });
    const err = await serverError(
      h.db
        .collection('c')
        .find({ a: { $frobnicate: 1 } })
        .toArray(),
    );
    expect(err.code).toBe(2);
    expect(err.message).toContain('unknown operator: $frobnicate');
    expect(
      (
        await serverError(
          h.db
            .collection('c')
            .find({ $frobnicate: 1 } as never)
            .toArray(),
        )
      ).code,
    ).toBe(2);
  });

  it('when server-side JavaScript is asked for, then it is refused', async () => {
    await h.db.collection('c').insertOne({ a: 1 });
    const err = await serverError(h.db.collection('c').find({ $where: 'this.a == 1' }).toArray());
    expect(err).toBeInstanceOf(MongoServerError);
  });

  it('when a command carries an unknown option, then it fails instead of ignoring it', async () => {
    const err = await serverError(h.db.command({ find: 'c', filter: {}, frobnicate: true }));
    expect(err.code).toBe(40415);
    expect(err.message).toBe("BSON field 'find.frobnicate' is an unknown field.");
  });

  it('when an unsupported option would change semantics (collation), then it is refused with BadValue (2)', async () => {
    await h.db.collection('c').insertOne({ a: 'x' });
    const err = await serverError(
      h.db
        .collection('c')
        .find({}, { collation: { locale: 'nb', strength: 1 } })
        .toArray(),
    );
    expect(err.code).toBe(2);
  });

  it('when a write concern a standalone cannot satisfy is asked for, then the write fails', async () => {
    const err = await serverError(
      h.db.collection('c').insertOne({ a: 1 }, { writeConcern: { w: 3 } }),
    );
    expect(err.code).toBe(100);
  });

  it('when a transaction is used, then it fails with IllegalOperation (20) as on a standalone mongod', async () => {
    const session = h.client.startSession();
    try {
      session.startTransaction();
      const err = await serverError(h.db.collection('c').insertOne({ a: 1 }, { session }));
      // The driver rewrites this standalone answer into its "does not support retryable writes"
      // advice, exactly as it does against a real standalone mongod; the server's reply is kept.
      const original = err['originalError'] as MongoServerError;
      expect(original.code).toBe(20);
      expect(original.codeName).toBe('IllegalOperation');
      expect(original.message).toBe(
        'Transaction numbers are only allowed on a replica set member or mongos',
      );
      // A read in a transaction is not rewritten by the driver.
      const readErr = await serverError(h.db.collection('c').findOne({}, { session }));
      expect(readErr.code).toBe(20);
      await session.abortTransaction().catch(() => undefined);
    } finally {
      await session.endSession();
    }
    expect(await h.db.collection('c').countDocuments()).toBe(0);
  });

  it('when a session is used without a transaction, then commands work', async () => {
    const session = h.client.startSession();
    try {
      await h.db.collection('c').insertOne({ a: 1 }, { session });
      expect(await h.db.collection('c').countDocuments({}, { session })).toBe(1);
    } finally {
      await session.endSession();
    }
  });

  it('when hello is asked, then it answers as a current standalone primary without topologyVersion', async () => {
    const hello = await h.db.admin().command({ hello: 1 });
    expect(hello).toMatchObject({
      isWritablePrimary: true,
      helloOk: true,
      maxBsonObjectSize: 16777216,
      maxMessageSizeBytes: 48000000,
      maxWriteBatchSize: 100000,
      logicalSessionTimeoutMinutes: 30,
      minWireVersion: 0,
      ok: 1,
    });
    expect(hello['maxWireVersion']).toBeGreaterThanOrEqual(21);
    expect(hello['localTime']).toBeInstanceOf(Date);
    expect(typeof hello['connectionId']).toBe('number');
    expect(hello).not.toHaveProperty('topologyVersion');
  });

  it('when ping, buildInfo, hello and getParameter are asked, then they claim MongoDB 8.0 consistently (wire version 25)', async () => {
    expect((await h.db.admin().command({ ping: 1 }))['ok']).toBe(1);
    const info = await h.db.admin().command({ buildInfo: 1 });
    expect(info['version']).toBe('8.0.0');
    expect(info['versionArray']).toEqual([8, 0, 0, 0]);
    expect((await h.db.admin().command({ hello: 1 }))['maxWireVersion']).toBe(25);
    const fcv = await h.db.admin().command({ getParameter: 1, featureCompatibilityVersion: 1 });
    expect(fcv['featureCompatibilityVersion']).toEqual({ version: '8.0' });
    expect(
      (await serverError(h.db.admin().command({ getParameter: 1, noSuchParameter: 1 }))).code,
    ).toBe(40415);
  });

  it('when a document is over 16 MiB, then the insert is rejected', async () => {
    // The driver refuses such a document itself before sending it; either way it is never stored.
    const big = { s: 'x'.repeat(16 * 1024 * 1024 + 1) };
    await expect(h.db.collection('c').insertOne(big)).rejects.toThrow();
    expect(await h.db.collection('c').countDocuments()).toBe(0);
  });

  it('when a delete limit is not 0 or 1, then the command fails', async () => {
    const err = await serverError(h.db.command({ delete: 'c', deletes: [{ q: {}, limit: 5 }] }));
    expect(err.code).toBe(9);
  });

  it('when a namespace is invalid, then InvalidNamespace (73) is returned', async () => {
    const err = await serverError(h.db.command({ insert: 'bad$name', documents: [{ a: 1 }] }));
    expect(err.code).toBe(73);
  });

  it('when the client closes after using sessions, then endSessions (sent with w: 0) is accepted', async () => {
    // "endSessions": https://www.mongodb.com/docs/manual/reference/command/endSessions/
    const res = await h.db
      .admin()
      .command({ endSessions: [{ id: new UUID() }], writeConcern: { w: 1 } });
    expect(res['ok']).toBe(1);
  });
});
