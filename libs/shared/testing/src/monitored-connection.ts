import mongoose, { type Connection } from 'mongoose';

/**
 * A connection with the apps' durable write concern (`w: majority, j: true`) and the driver's
 * command monitoring on, so that a test can see the commands a piece of code sends
 * (`conn.getClient().on('commandStarted', ...)`) and the write concern they carry.
 */
export function monitoredConnection(uri: string): Promise<Connection> {
  return mongoose
    .createConnection(uri, {
      monitorCommands: true,
      writeConcern: { w: 'majority', journal: true },
    })
    .asPromise();
}
