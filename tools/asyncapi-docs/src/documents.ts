import { privacyAsyncApiDocument } from '@nhp/privacy-data-access';
import { refsyncAsyncApiDocument } from '@nhp/refsync-import';

/**
 * The AsyncAPI documents the repository holds, by path from its root, each with the function that
 * makes it from the events' zod schemas (the same one the publishing app serves at /asyncapi.json).
 */
export const ASYNCAPI_DOCUMENTS: ReadonlyArray<{
  path: string;
  app: string;
  /** A subject of its channel, for examples and tests. */
  exampleSubject: string;
  build: () => object;
}> = [
  {
    path: 'docs/asyncapi/privacy-api.json',
    app: 'privacy-api',
    exampleSubject: 'privacy.events.setting-changed.studie',
    build: privacyAsyncApiDocument,
  },
  {
    path: 'docs/asyncapi/refsync-importer.json',
    app: 'refsync-importer',
    exampleSubject: 'refsync.events.sync-completed',
    build: refsyncAsyncApiDocument,
  },
];
