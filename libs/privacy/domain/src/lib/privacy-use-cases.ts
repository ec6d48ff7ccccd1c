import {
  createDefinitionUseCases,
  type DefinitionUseCasePorts,
} from './definitions/definition-use-cases';
import { createInclusionUseCases, type InclusionStore } from './inclusions/inclusion-use-cases';
import { createPartUseCases, type PartStore } from './parts/part-use-cases';
import {
  createRepresentationUseCases,
  type RepresentationStore,
} from './representation/representation-use-cases';
import type { SettingsStore } from './settings/model';
import { createSettingsUseCases } from './settings/settings-use-cases';
import type { DefinitionLookup, GrantLookup } from './types';
import { createYouthAppUseCases } from './youth-app/youth-app-use-cases';

/** The stores every use case of privacy-api reads and writes (data-access's repositories). */
export interface PrivacyUseCasePorts {
  parts: PartStore;
  definitions: DefinitionLookup & DefinitionUseCasePorts['definitions'];
  grants: GrantLookup;
  inclusions: InclusionStore;
  representation: RepresentationStore;
  settings: SettingsStore;
  /** The clock of every business time (audit, tidspunkt defaults, ages). */
  now: () => Date;
  /** Synthetic test identity numbers (month + 80) are accepted. */
  allowSyntheticIds: boolean;
  /** Entries per page of the active-citizens walk. */
  pageSize: number;
}

/**
 * Every use case of privacy-api, by area, over one set of stores: what its routes, its fast path,
 * privacy-admin, the sample data and the benchmarks call. Each takes who is calling (Caller) and a
 * contract input, and returns a contract output or throws an AppError.
 */
export function createPrivacyUseCases(ports: PrivacyUseCasePorts) {
  const settings = createSettingsUseCases({
    definitions: ports.definitions,
    grants: ports.grants,
    representation: ports.representation,
    store: ports.settings,
    now: ports.now,
    allowSyntheticIds: ports.allowSyntheticIds,
    pageSize: ports.pageSize,
  });
  return {
    parts: createPartUseCases(ports),
    definitions: createDefinitionUseCases(ports),
    settings,
    inclusions: createInclusionUseCases(ports),
    representation: createRepresentationUseCases(ports),
    youthApp: createYouthAppUseCases({
      settings,
      store: ports.settings,
      allowSyntheticIds: ports.allowSyntheticIds,
    }),
  };
}

export type PrivacyUseCases = ReturnType<typeof createPrivacyUseCases>;
