// Server errors in MongoDB's error shape: `{ ok: 0, errmsg, code, codeName, ...extra }`.
// Codes and names are those of mongod's error_codes.yml so the driver and mongoose classify them
// exactly as they would against a real server.

export const ErrorCodes = {
  InternalError: 1,
  BadValue: 2,
  Unauthorized: 13,
  UnsatisfiableWriteConcern: 100,
  Location40414: 40414,
  Location40415: 40415,
  Location40323: 40323,
  Location40571: 40571,
  Location16866: 16866,
  Location16867: 16867,
  Location16868: 16868,
  APIVersionError: 322,
  InvalidBSON: 22,
  NoSuchKey: 4,
  FailedToParse: 9,
  TypeMismatch: 14,
  IllegalOperation: 20,
  IndexNotFound: 27,
  PathNotViable: 28,
  ConflictingUpdateOperators: 40,
  CursorNotFound: 43,
  MaxTimeMSExpired: 50,
  NamespaceExists: 48,
  DollarPrefixedFieldName: 52,
  InvalidIdField: 53,
  CommandNotFound: 59,
  ImmutableField: 66,
  InvalidOptions: 72,
  InvalidNamespace: 73,
  IndexOptionsConflict: 85,
  IndexKeySpecsConflict: 86,
  OperationNotSupportedInTransaction: 263,
  InvalidPipelineOperator: 168,
  CannotIndexParallelArrays: 171,
  Location40324: 40324,
  InvalidLength: 16,
  UnsupportedOpQueryCommand: 352,
  BSONObjectTooLarge: 10334,
  DuplicateKey: 11000,
  Location17419: 17419,
  NamespaceNotFound: 26,
  InvalidIndexSpecificationOption: 197,
  CannotCreateIndex: 67,
} as const;

export type ErrorCodeName = keyof typeof ErrorCodes;

const NAMES = new Map<number, string>(
  Object.entries(ErrorCodes).map(([name, code]) => [code, name]),
);

export class MongoServerError extends Error {
  readonly code: number;
  readonly codeName: string;
  readonly extra: Record<string, unknown>;

  constructor(codeName: ErrorCodeName, message: string, extra: Record<string, unknown> = {}) {
    super(message);
    this.name = 'MongoServerError';
    this.code = ErrorCodes[codeName];
    // mongod reports numbered "LocationNNNNN" assertions without a codeName.
    this.codeName = codeName.startsWith('Location') ? '' : codeName;
    this.extra = extra;
  }

  /** The command reply a failing command sends. */
  toReply(): Record<string, unknown> {
    const reply: Record<string, unknown> = { ok: 0, errmsg: this.message, code: this.code };
    if (this.codeName) reply['codeName'] = this.codeName;
    return { ...reply, ...this.extra };
  }

  /** The entry of a write command's `writeErrors` array. */
  toWriteError(index: number): Record<string, unknown> {
    return { index, code: this.code, errmsg: this.message, ...this.extra };
  }
}

export function codeName(code: number): string | undefined {
  return NAMES.get(code);
}

export const badValue = (message: string): MongoServerError =>
  new MongoServerError('BadValue', message);
export const failedToParse = (message: string): MongoServerError =>
  new MongoServerError('FailedToParse', message);
export const typeMismatch = (message: string): MongoServerError =>
  new MongoServerError('TypeMismatch', message);

/**
 * Mingo reports problems with a generic Error; map its messages to the code mongod uses for the same
 * problem, so that e.g. an unknown query operator is BadValue (2) as in MongoDB.
 */
export function fromQueryEngineError(
  err: unknown,
  context: 'query' | 'update' | 'pipeline' | 'projection',
): MongoServerError {
  if (err instanceof MongoServerError) return err;
  const message = err instanceof Error ? err.message : String(err);
  if (/unregistered pipeline operator (\$\w+)/.test(message)) {
    const name = /unregistered pipeline operator (\$\w+)/.exec(message)?.[1];
    return new MongoServerError('Location40324', `Unrecognized pipeline stage name: '${name}'`);
  }
  if (/(accumulator|expression operator|operator) '?(\$\w+)'? is not registered/.test(message)) {
    const name = /(\$\w+)/.exec(message)?.[1];
    return new MongoServerError('InvalidPipelineOperator', `Unrecognized expression '${name}'`);
  }
  if (/unknown (top level )?(query )?operator:? ?(\$\w+)/i.test(message)) {
    const name = /(\$\w+)/.exec(message)?.[1];
    return new MongoServerError(
      'BadValue',
      `unknown ${message.includes('top level') ? 'top level ' : ''}operator: ${name}`,
    );
  }
  if (/Unknown update operator: '(\$\w+)'/.test(message)) {
    const name = /'(\$\w+)'/.exec(message)?.[1];
    return new MongoServerError(
      'FailedToParse',
      `Unknown modifier: ${name}. Expected a valid update modifier or pipeline-style update specified as an array`,
    );
  }
  if (/would modify the immutable field/.test(message))
    return new MongoServerError('ImmutableField', message);
  if (/would create a conflict/.test(message))
    return new MongoServerError('ConflictingUpdateOperators', message);
  if (
    /must include the array field for '\.\$'/.test(message) ||
    /positional operator found no match/.test(message)
  ) {
    return new MongoServerError(
      'BadValue',
      'The positional operator did not find the match needed from the query.',
    );
  }
  if (context === 'update') return new MongoServerError('BadValue', message);
  if (context === 'projection') return new MongoServerError('BadValue', message);
  return new MongoServerError('BadValue', message);
}
