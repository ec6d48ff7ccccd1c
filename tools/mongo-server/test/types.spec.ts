// BSON type round-trip. Expected behaviour from the MongoDB manual:
// - "BSON Types": https://www.mongodb.com/docs/manual/reference/bson-types/ (each value is stored with
//   its type: 32-bit integer, 64-bit integer, double, decimal128, date, ObjectId, binary data, ...)
import {
  Binary,
  Decimal128,
  Double,
  Int32,
  Long,
  ObjectId,
  Timestamp,
  UUID,
  BSONRegExp,
} from 'mongodb';
import { startWithDriver, stopHarness, type DriverHarness } from './helpers';

describe('BSON types', () => {
  let h: DriverHarness;
  beforeEach(async () => {
    h = await startWithDriver();
  });
  afterEach(async () => {
    await stopHarness(h);
  });

  it('when every common BSON type is stored, then it reads back with the same type and value', async () => {
    const id = new ObjectId();
    const doc = {
      _id: id,
      i32: new Int32(42),
      i64: Long.fromString('9007199254740993'),
      dbl: new Double(2), // an integral double must stay a double
      dec: Decimal128.fromString('1234.5600'),
      date: new Date('2024-02-29T12:34:56.789Z'),
      bin: new Binary(Buffer.from([0, 1, 2, 255]), 0),
      uuid: new UUID('8b1f7c4e-2d3a-4b5c-9d6e-7f8091a2b3c4').toBinary(),
      ts: new Timestamp({ t: 1700000000, i: 3 }),
      re: new BSONRegExp('^a.c$', 'i'),
      nested: { arr: [new Int32(1), new Double(1.5), Long.fromNumber(3)], nil: null },
      bool: true,
      str: 'tekst med æøå',
    };
    await h.db.collection('t').insertOne(doc);
    const raw = await h.db
      .collection('t')
      .findOne({ _id: id }, { promoteValues: false, promoteBuffers: false, bsonRegExp: true });
    expect(raw).not.toBeNull();
    const got = raw as Record<string, unknown>;
    expect(got['i32']).toEqual(new Int32(42));
    expect(got['i64']).toBeInstanceOf(Long);
    expect((got['i64'] as Long).toString()).toBe('9007199254740993');
    expect(got['dbl']).toBeInstanceOf(Double);
    expect((got['dbl'] as Double).value).toBe(2);
    expect(got['dec']).toBeInstanceOf(Decimal128);
    expect(String(got['dec'])).toBe('1234.5600');
    expect(got['date']).toEqual(doc.date);
    expect(got['bin']).toBeInstanceOf(Binary);
    expect(Buffer.from((got['bin'] as Binary).buffer)).toEqual(Buffer.from([0, 1, 2, 255]));
    expect((got['uuid'] as Binary).sub_type).toBe(4);
    expect((got['ts'] as Timestamp).toString()).toBe(doc.ts.toString());
    expect(got['re']).toEqual(new BSONRegExp('^a.c$', 'i'));
    const arr = (got['nested'] as { arr: unknown[] }).arr;
    expect(arr[0]).toBeInstanceOf(Int32);
    expect(arr[1]).toBeInstanceOf(Double);
    expect(arr[2]).toBeInstanceOf(Long);
    expect(got['str']).toBe('tekst med æøå');
    expect(got['_id']).toEqual(id);
  });

  it('when a document is updated elsewhere, then untouched fields keep their BSON types', async () => {
    await h.db
      .collection('t')
      .insertOne({ _id: 1 as never, i64: Long.fromNumber(7), dbl: new Double(3), n: 1 });
    await h.db
      .collection('t')
      .updateOne({ _id: 1 as never }, { $inc: { n: 1 }, $set: { added: Long.fromNumber(9) } });
    const got = (await h.db
      .collection('t')
      .findOne({ _id: 1 as never }, { promoteValues: false })) as Record<string, unknown>;
    expect(got['i64']).toBeInstanceOf(Long);
    expect(got['dbl']).toBeInstanceOf(Double);
    expect(got['added']).toBeInstanceOf(Long);
    expect((got['n'] as Int32).value).toBe(2);
  });

  it('when binary and UUID values are queried, then they match by bytes', async () => {
    const u = new UUID();
    await h.db.collection('t').insertMany([{ k: u.toBinary() }, { k: new UUID().toBinary() }]);
    expect(await h.db.collection('t').countDocuments({ k: u.toBinary() })).toBe(1);
  });
});
