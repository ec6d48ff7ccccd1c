import type { Connection } from 'mongoose';
import { definitionModel } from './definitions/definition.repository';
import { grantModel } from './grants/grant.repository';
import { inclusionModel } from './inclusions/inclusion.repository';
import { journalModels } from './journal';
import { partModel } from './parts/part.repository';
import { representationModel } from './representation/representation.repository';
import { settingModels } from './settings/setting.repository';

/**
 * Registers every model of privacy's data on the connection, so that the indexes they declare are
 * known before anything is served: privacy-api builds or checks them at start (`prepareIndexes`
 * in shared-persistence) and `npm run db-indexes` builds them for operators.
 */
export function registerPrivacyModels(connection: Connection): void {
  definitionModel(connection);
  grantModel(connection);
  inclusionModel(connection);
  journalModels(connection);
  partModel(connection);
  representationModel(connection);
  settingModels(connection);
}
