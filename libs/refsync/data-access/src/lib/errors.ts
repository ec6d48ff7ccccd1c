/** The committed version is not the one the writer expected: another writer committed meanwhile. */
export class RefsyncVersionConflictError extends Error {
  readonly code = 'REFSYNC_VERSION_CONFLICT';
  constructor(
    readonly expectedVersion: number,
    readonly actualVersion: number | undefined,
    message?: string,
  ) {
    super(
      message ??
        `refsync state is at version ${actualVersion ?? 'unknown'}, expected ${expectedVersion}; ` +
          'another writer committed or the change set is stale (run recover() and start over)',
    );
    this.name = 'RefsyncVersionConflictError';
  }
}

/** A change set cannot be staged as given (programming or protocol error of the caller). */
export class RefsyncStagingError extends Error {
  readonly code = 'REFSYNC_STAGING_ERROR';
  constructor(
    message: string,
    readonly itemIds: string[] = [],
  ) {
    super(message);
    this.name = 'RefsyncStagingError';
  }
}
