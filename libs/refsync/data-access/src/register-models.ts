import type { Connection } from 'mongoose';
import { leaseModel } from './importer/lease.repository';
import { runModel } from './importer/run.repository';
import { refsyncModels } from './lib/models';

/**
 * Registers every model of refsync's data on the connection (items, state, the importer's runs and
 * lease), so that the indexes they declare are known before anything is served: the apps build or
 * check them at start (`prepareIndexes` in shared-persistence), `npm run db-indexes` builds them.
 */
export function registerRefsyncModels(conn: Connection): void {
  refsyncModels(conn);
  runModel(conn);
  leaseModel(conn);
}
