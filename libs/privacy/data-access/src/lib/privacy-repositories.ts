import type { Connection } from 'mongoose';
import { createDefinitionRepository } from './definitions/definition.repository';
import { createGrantRepository } from './grants/grant.repository';
import { createInclusionRepository } from './inclusions/inclusion.repository';
import type { Journal } from './journal';
import { createPartRepository } from './parts/part.repository';
import { createRepresentationRepository } from './representation/representation.repository';
import { createSettingRepository } from './settings';

export interface CreatePrivacyRepositoriesOptions {
  connection: Connection;
  /** Audit records and replication events of every write. */
  journal: Journal;
  /** The clock of the repositories' timestamps. */
  now?: () => Date;
  /** How long definitions and grants are trusted from memory (default 5 s; 0: always read). */
  cacheTtlMs?: number;
  /** Called after a definition or grant changed (privacy-api announces it to its other instances). */
  onChanged?: { definition?: (key: string) => void; grant?: (key: string) => void };
}

/** Every repository of privacy, over one connection and journal: the stores of the use cases. */
export function createPrivacyRepositories(options: CreatePrivacyRepositoriesOptions) {
  const { connection, journal } = options;
  const cached = { connection, journal, now: options.now, cacheTtlMs: options.cacheTtlMs };
  return {
    parts: createPartRepository({ connection, journal, now: options.now }),
    definitions: createDefinitionRepository({
      ...cached,
      onChanged: options.onChanged?.definition,
    }),
    grants: createGrantRepository({ ...cached, onChanged: options.onChanged?.grant }),
    inclusions: createInclusionRepository({ connection, journal }),
    representation: createRepresentationRepository({ connection, journal }),
    settings: createSettingRepository({ connection, journal }),
  };
}

export type PrivacyRepositories = ReturnType<typeof createPrivacyRepositories>;
