// What a command handler gets, and the argument readers every handler shares. Readers are strict:
// a wrong type is TypeMismatch with mongod's wording, so mistakes surface instead of being coerced.
import type { Logger } from 'pino';
import type { Collection } from '../collection';
import type { CursorRegistry } from '../cursors';
import { MongoServerError } from '../errors';
import { validateNamespace, type Store } from '../store';
import { isPlainObject, num, typeName, type Doc } from '../values';

export interface ServerInfo {
  connectionId: number;
  host: string;
  port: number;
  startedAt: Date;
}

export interface CommandContext {
  name: string;
  db: string;
  cmd: Doc;
  store: Store;
  cursors: CursorRegistry;
  server: ServerInfo;
  logger: Logger;
}

export interface CommandHandler {
  /** Fields the command accepts besides its own name and the generic ones (see dispatch.ts). */
  fields: readonly string[];
  /** mongod declares hello/isMaster non-strict: drivers add handshake fields (e.g. backpressure) freely. */
  lenient?: boolean;
  /** Accepts writeConcern. */
  write?: boolean;
  /** Accepts readConcern. */
  read?: boolean;
  run(ctx: CommandContext): Doc;
}

export function collectionName(ctx: CommandContext): string {
  const v = ctx.cmd[ctx.name];
  if (typeof v !== 'string') {
    throw new MongoServerError(
      'InvalidNamespace',
      `collection name has invalid type ${typeName(v)}`,
    );
  }
  validateNamespace(ctx.db, v);
  return v;
}

export function optionalDoc(ctx: CommandContext, field: string): Doc | undefined {
  const v = ctx.cmd[field];
  if (v === undefined || v === null) return undefined;
  if (!isPlainObject(v)) throw wrongType(ctx, field, v, 'object');
  return v;
}

export function optionalArray(ctx: CommandContext, field: string): unknown[] | undefined {
  const v = ctx.cmd[field];
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw wrongType(ctx, field, v, 'array');
  return v;
}

export function optionalBool(ctx: CommandContext, field: string): boolean | undefined {
  const v = ctx.cmd[field];
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'boolean') return v;
  const n = num(v);
  if (n !== undefined) return n !== 0;
  throw wrongType(ctx, field, v, 'bool');
}

export function optionalInt(ctx: CommandContext, field: string, min = 0): number | undefined {
  const v = ctx.cmd[field];
  if (v === undefined || v === null) return undefined;
  const n = num(v);
  if (n === undefined) throw wrongType(ctx, field, v, 'long, int, decimal, double');
  if (!Number.isFinite(n) || Math.trunc(n) !== n) {
    throw new MongoServerError(
      'BadValue',
      `BSON field '${ctx.name}.${field}' must be an integer, got ${n}`,
    );
  }
  if (n < min) {
    throw new MongoServerError(
      'BadValue',
      `BSON field '${field}' value must be >= ${min}, actual value '${n}'`,
    );
  }
  return n;
}

export function wrongType(
  ctx: CommandContext,
  field: string,
  v: unknown,
  expected: string,
): MongoServerError {
  return new MongoServerError(
    'TypeMismatch',
    `BSON field '${ctx.name}.${field}' is the wrong type '${typeName(v)}', expected type${expected.includes(',') ? 's' : ''} '${expected.includes(',') ? `[${expected}]` : expected}'`,
  );
}

/** Fields that change semantics and that this server does not implement: refuse rather than ignore. */
export function refuseUnsupported(ctx: CommandContext, ...fields: string[]): void {
  for (const f of fields) {
    const v = ctx.cmd[f];
    if (v === undefined || v === null || v === false) continue;
    if (isPlainObject(v) && Object.keys(v).length === 0) continue;
    if (f === 'collation' && isPlainObject(v) && v['locale'] === 'simple') continue;
    throw new MongoServerError('BadValue', `'${ctx.name}.${f}' is not supported by this server`);
  }
}

export function nsOf(coll: Collection | undefined, db: string, name: string): string {
  return coll?.ns ?? `${db}.${name}`;
}
