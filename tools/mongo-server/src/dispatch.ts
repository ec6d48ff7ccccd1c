// Routes a command to its handler after the checks every command shares: generic fields the server
// honours are accepted, transaction fields are refused as a standalone mongod refuses them, and any
// other unknown field is an error rather than silently ignored.
import { Long } from 'bson';
import type { Logger } from 'pino';
import { adminCommands } from './commands/admin';
import type { CommandContext, CommandHandler, ServerInfo } from './commands/context';
import { crudCommands } from './commands/crud';
import { ddlCommands } from './commands/ddl';
import type { CursorRegistry } from './cursors';
import { MongoServerError } from './errors';
import type { Store } from './store';
import { isPlainObject, num, type Doc } from './values';

const COMMANDS: Record<string, CommandHandler> = {
  ...adminCommands,
  ...crudCommands,
  ...ddlCommands,
};

/** Accepted on every command: routing, sessions (no transactions), diagnostics, timeouts. */
const GENERIC = new Set([
  '$db',
  'lsid',
  '$clusterTime',
  '$readPreference',
  'apiVersion',
  'apiStrict',
  'apiDeprecationErrors',
  'comment',
  'maxTimeMS',
  '$client',
]);

/** Fields that only make sense inside a transaction or a retryable write on a replica set. */
const TRANSACTION = [
  'txnNumber',
  'startTransaction',
  'autocommit',
  'stmtId',
  'stmtIds',
  'coordinator',
];

export interface DispatchDeps {
  store: Store;
  cursors: CursorRegistry;
  logger: Logger;
  /**
   * Resolves once every change made so far is in the journal and fsynced; absent for a server
   * purely in memory. Writes with writeConcern `j: true` or `fsync: true` are acknowledged after it
   * (group commit: concurrent ones share one fsync).
   */
  durability?: { sync(): Promise<void> };
}

export function commandName(cmd: Doc): string | undefined {
  return Object.keys(cmd)[0];
}

export function dispatch(deps: DispatchDeps, server: ServerInfo, cmd: Doc): Doc | Promise<Doc> {
  const name = commandName(cmd);
  const db = cmd['$db'];
  const started = process.hrtime.bigint();
  const log = deps.logger;
  try {
    if (!name) throw new MongoServerError('FailedToParse', 'Empty command object');
    if (typeof db !== 'string') {
      throw new MongoServerError('Location40571', 'OP_MSG requests require a $db argument');
    }
    const handler = Object.prototype.hasOwnProperty.call(COMMANDS, name)
      ? COMMANDS[name]
      : undefined;
    if (!handler) throw new MongoServerError('CommandNotFound', `no such command: '${name}'`);
    if (
      name === 'abortTransaction' ||
      name === 'commitTransaction' ||
      TRANSACTION.some((f) => f in cmd)
    ) {
      throw new MongoServerError(
        'IllegalOperation',
        'Transaction numbers are only allowed on a replica set member or mongos',
      );
    }
    checkFields(name, handler, cmd);
    checkGeneric(handler, cmd, deps.durability !== undefined);
    const ctx: CommandContext = {
      name,
      db,
      cmd,
      store: deps.store,
      cursors: deps.cursors,
      server,
      logger: log,
    };
    if (log.isLevelEnabled('debug')) {
      const coll =
        typeof cmd[name] === 'string'
          ? cmd[name]
          : typeof cmd['collection'] === 'string'
            ? cmd['collection']
            : undefined;
      log.debug(
        { command: name, db, collection: coll, connectionId: server.connectionId },
        'command',
      );
      if (log.isLevelEnabled('trace')) log.trace({ command: name, body: cmd }, 'command body');
    }
    const reply = handler.run(ctx);
    enforceMaxTime(deps, name, cmd, reply, started);
    return wantsDurable(handler, cmd) ? afterDurable(deps, reply) : reply;
  } catch (err) {
    const error =
      err instanceof MongoServerError
        ? err
        : new MongoServerError('InternalError', err instanceof Error ? err.message : String(err));
    if (!(err instanceof MongoServerError))
      log.error({ err, command: name }, 'command failed unexpectedly');
    log.debug(
      {
        command: name,
        db,
        code: error.code,
        codeName: error.codeName,
        errmsg: error.message,
        ms: Number(process.hrtime.bigint() - started) / 1e6,
      },
      'command error',
    );
    return error.toReply();
  }
}

/** Reads whose result is discarded when they took longer than maxTimeMS, as mongod interrupts them. */
const INTERRUPTIBLE = new Set(['find', 'aggregate', 'count', 'distinct']);

function enforceMaxTime(
  deps: DispatchDeps,
  name: string,
  cmd: Doc,
  reply: Doc,
  started: bigint,
): void {
  const limit = num(cmd['maxTimeMS']);
  if (!limit || !INTERRUPTIBLE.has(name)) return;
  const elapsedMs = Number(process.hrtime.bigint() - started) / 1e6;
  if (elapsedMs <= limit) return;
  const cursor = reply['cursor'];
  if (isPlainObject(cursor) && cursor['id'] instanceof Long) deps.cursors.kill(cursor['id']);
  throw new MongoServerError(
    'MaxTimeMSExpired',
    `Executor error during ${name} command :: caused by :: operation exceeded time limit`,
  );
}

function checkFields(name: string, handler: CommandHandler, cmd: Doc): void {
  const allowed = new Set(handler.fields);
  for (const field of Object.keys(cmd)) {
    if (handler.lenient) return;
    if (field === name || GENERIC.has(field) || allowed.has(field)) continue;
    if (field === 'writeConcern' && handler.write) continue;
    if (field === 'readConcern' && handler.read) continue;
    throw new MongoServerError(
      'Location40415',
      `BSON field '${name}.${field}' is an unknown field.`,
    );
  }
}

/** Whether a write asks to be acknowledged only once durable (`j: true` or `fsync: true`). */
function wantsDurable(handler: CommandHandler, cmd: Doc): boolean {
  const wc = cmd['writeConcern'];
  if (!handler.write || !isPlainObject(wc)) return false;
  const on = (v: unknown): boolean => v === true || (num(v) ?? 0) !== 0;
  return on(wc['j']) || on(wc['fsync']);
}

/** Waits for the journal before acknowledging; a failure there is a writeConcernError. */
async function afterDurable(deps: DispatchDeps, reply: Doc): Promise<Doc> {
  try {
    await deps.durability?.sync();
    return reply;
  } catch (err) {
    return {
      ...reply,
      writeConcernError: {
        code: 64,
        codeName: 'WriteConcernFailed',
        errmsg: `could not write the journal: ${err instanceof Error ? err.message : String(err)}`,
      },
    };
  }
}

function checkGeneric(handler: CommandHandler, cmd: Doc, durable: boolean): void {
  if (!durable && wantsDurable(handler, cmd)) {
    const wc = cmd['writeConcern'] as Doc;
    const option = wc['j'] !== undefined && wc['j'] !== false && num(wc['j']) !== 0 ? 'j' : 'fsync';
    // A server without a data file has nothing to journal, as a mongod without journaling.
    throw new MongoServerError(
      'BadValue',
      `cannot use '${option}' option when a host does not have journaling enabled (this server runs without a data file)`,
    );
  }
  const apiVersion = cmd['apiVersion'];
  if (apiVersion !== undefined && apiVersion !== '1') {
    throw new MongoServerError('APIVersionError', `API version must be "1"`);
  }
  const maxTimeMS = cmd['maxTimeMS'];
  if (maxTimeMS !== undefined) {
    const n = num(maxTimeMS);
    if (n === undefined || n < 0 || !Number.isInteger(n)) {
      throw new MongoServerError('BadValue', 'maxTimeMS must be a non-negative integer');
    }
  }
  const wc = cmd['writeConcern'];
  if (wc !== undefined && handler.write) {
    if (!isPlainObject(wc))
      throw new MongoServerError('TypeMismatch', 'writeConcern must be an object');
    for (const k of Object.keys(wc)) {
      if (!['w', 'j', 'wtimeout', 'fsync', 'provenance'].includes(k)) {
        throw new MongoServerError(
          'Location40415',
          `BSON field 'writeConcern.${k}' is an unknown field.`,
        );
      }
    }
    const w = wc['w'];
    const wn = num(w);
    if (w !== undefined && w !== 'majority' && wn !== 0 && wn !== 1) {
      throw new MongoServerError(
        'UnsatisfiableWriteConcern',
        `cannot satisfy write concern w: ${String(wn ?? w)} on a standalone server`,
      );
    }
  }
  const rc = cmd['readConcern'];
  if (rc !== undefined && handler.read) {
    if (!isPlainObject(rc))
      throw new MongoServerError('TypeMismatch', 'readConcern must be an object');
    for (const k of Object.keys(rc)) {
      if (!['level', 'afterClusterTime', 'provenance'].includes(k)) {
        throw new MongoServerError('InvalidOptions', `Unrecognized option in readConcern: ${k}`);
      }
    }
    const level = rc['level'];
    if (level !== undefined && level !== 'local' && level !== 'available' && level !== 'majority') {
      throw new MongoServerError(
        'InvalidOptions',
        `readConcern level '${String(level)}' is not supported by a standalone server`,
      );
    }
  }
}
