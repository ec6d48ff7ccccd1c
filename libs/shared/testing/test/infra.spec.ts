import { existsSync } from 'node:fs';
import { dirname } from 'node:path';
import { createConnection } from 'node:net';
import { MongoClient } from 'mongodb';
import mongoose from 'mongoose';
import { connect } from '@nats-io/transport-node';
import { startMongoServerProcess, startNatsServer, startTestInfra, withDatabase } from '../src';

function portOpen(port: number): Promise<boolean> {
  return new Promise((done) => {
    const socket = createConnection({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      done(true);
    });
    socket.once('error', () => done(false));
  });
}

const portOf = (url: string) =>
  Number(new URL(url.replace(/^mongodb:/, 'http:').replace(/^nats:/, 'http:')).port);

describe('test infrastructure', () => {
  const saved = { mongo: process.env['MONGO_URL'], nats: process.env['NATS_URL'] };
  beforeAll(() => {
    delete process.env['MONGO_URL'];
    delete process.env['NATS_URL'];
  });
  afterAll(() => {
    if (saved.mongo) process.env['MONGO_URL'] = saved.mongo;
    if (saved.nats) process.env['NATS_URL'] = saved.nats;
  });

  it('when started twice, then each gets its own database, and stop leaves no port open', async () => {
    const [a, b] = await Promise.all([startTestInfra(), startTestInfra()]);
    expect(a.dbName).not.toBe(b.dbName);
    expect(a.mongoUri).toContain(`/${a.dbName}`);

    const conn = await mongoose.createConnection(a.mongoUri).asPromise();
    await conn.collection('things').insertOne({ n: 1 });
    expect(await conn.collection('things').countDocuments()).toBe(1);
    await conn.close();

    const nc = await connect({ servers: a.natsUrl });
    await nc.flush();
    await nc.close();

    await Promise.all([a.stop(), b.stop()]);
    for (const infra of [a, b]) {
      expect(await portOpen(portOf(infra.mongoUri))).toBe(false);
      expect(await portOpen(portOf(infra.natsUrl))).toBe(false);
    }
  });

  it("when the project's MongoDB-compatible server is used, then writes with j: true are journaled in a temporary directory that stop removes", async () => {
    const infra = await startTestInfra();
    const dataDir = dirname(infra.mongoDataFile as string);
    try {
      const client = await new MongoClient(infra.mongoUri).connect();
      await client
        .db()
        .collection('things')
        .insertOne({ n: 1 }, { writeConcern: { w: 'majority', j: true } });
      await client.close();
      expect(existsSync(`${infra.mongoDataFile}.journal.000001`)).toBe(true);
    } finally {
      await infra.stop();
    }
    expect(existsSync(dataDir)).toBe(false);
  });

  it('when the server process is killed (SIGKILL or SIGTERM) and restarted, then it serves the same data on the same port each time, and dispose leaves nothing behind', async () => {
    const mongo = await startMongoServerProcess();
    const dataDir = dirname(mongo.dataFile);
    try {
      for (let round = 0; round < 6; round++) {
        const client = await new MongoClient(mongo.uri, {
          serverSelectionTimeoutMS: 5000,
        }).connect();
        const things = client.db('fault').collection<{ _id: number }>('things');
        expect(await things.countDocuments()).toBe(round);
        await things.insertOne({ _id: round }, { writeConcern: { j: true } });
        await client.close();
        const signal = round % 2 === 0 ? 'SIGKILL' : 'SIGTERM';
        const exit = await mongo.kill(signal);
        expect(signal === 'SIGKILL' ? exit.signal : exit.code).toBe(
          signal === 'SIGKILL' ? 'SIGKILL' : 0,
        );
        expect(await portOpen(mongo.port)).toBe(false);
        await mongo.restart();
      }
    } finally {
      await mongo.dispose();
    }
    expect(existsSync(dataDir)).toBe(false);
    expect(await portOpen(mongo.port)).toBe(false);
  }, 60_000);

  it('when the spawned nats-server is disposed, then its process, port and temporary store are gone', async () => {
    const nats = await startNatsServer();
    expect(existsSync(nats.storeDir)).toBe(true);
    await nats.dispose();
    expect(existsSync(nats.storeDir)).toBe(false);
    expect(await portOpen(nats.port)).toBe(false);
  });

  it('when NATS is stopped and started again, then it serves on the same URL', async () => {
    const nats = await startNatsServer();
    try {
      await nats.stop();
      expect(await portOpen(nats.port)).toBe(false);
      await nats.restart();
      const nc = await connect({ servers: nats.url });
      await nc.close();
    } finally {
      await nats.dispose();
    }
  });

  it('when MONGO_URL carries a database and options, then withDatabase swaps only the database', () => {
    expect(withDatabase('mongodb://a:1,b:2/old?replicaSet=rs', 'new')).toBe(
      'mongodb://a:1,b:2/new?replicaSet=rs',
    );
    expect(withDatabase('mongodb://127.0.0.1:27017', 'x')).toBe('mongodb://127.0.0.1:27017/x');
    expect(() => withDatabase('http://nope', 'x')).toThrow(/not a MongoDB connection string/);
  });
});
