import type { Document } from 'mongodb';
import type { Connection } from 'mongoose';

/**
 * The driver's collection `name` for reads on a hot path: the connection's client and database,
 * without the connection's write concern. A read has no use for a write concern, but the driver
 * copies the one it inherits into every find's options and then deletes it, which turns that
 * options object (read on every step of the operation) into a slow dictionary: about 10 us a
 * findOne (tools/bench/README.md, privacy-api). Reads only: a write through it would not be
 * journaled.
 */
export function readCollection<T extends Document>(connection: Connection, name: string) {
  return connection
    .getClient()
    .db(connection.db?.databaseName ?? connection.name, { writeConcern: undefined })
    .collection<T>(name);
}
