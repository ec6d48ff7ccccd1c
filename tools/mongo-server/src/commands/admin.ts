// Handshake and server-level commands. The hello reply carries what current drivers need and no
// topologyVersion: without streaming monitoring the driver then polls with ordinary heartbeats.
// https://www.mongodb.com/docs/manual/reference/command/hello/
import { MongoServerError } from '../errors';
import { MAX_BSON_OBJECT_SIZE } from '../collection';
import { MAX_MESSAGE_SIZE_BYTES } from '../wire';
import type { Doc } from '../values';
import type { CommandContext, CommandHandler } from './context';

/**
 * The one MongoDB version this server claims, in hello (wire version), buildInfo and
 * featureCompatibilityVersion alike, and whose behaviour it implements (e.g. `sort` in update
 * statements, new in 8.0). Production runs MongoDB 8.
 */
export const SERVER_VERSION = '8.0.0';
export const VERSION_ARRAY = [8, 0, 0, 0];
export const FEATURE_COMPATIBILITY_VERSION = '8.0';
/** MongoDB 8.0's wire version (the driver mongoose 9 uses requires at least 8, i.e. 4.2). */
export const MAX_WIRE_VERSION = 25;

function helloReply(ctx: CommandContext, legacy: boolean): Doc {
  if (ctx.cmd['loadBalanced'] === true) {
    throw new MongoServerError('BadValue', 'The server is not configured for load balancing');
  }
  return {
    helloOk: true,
    ...(legacy ? { ismaster: true } : { isWritablePrimary: true }),
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    maxMessageSizeBytes: MAX_MESSAGE_SIZE_BYTES,
    maxWriteBatchSize: 100_000,
    localTime: new Date(),
    logicalSessionTimeoutMinutes: 30,
    connectionId: ctx.server.connectionId,
    minWireVersion: 0,
    maxWireVersion: MAX_WIRE_VERSION,
    readOnly: false,
    ok: 1,
  };
}

const HELLO_FIELDS = [
  'helloOk',
  'client',
  'compression',
  'saslSupportedMechs',
  'speculativeAuthenticate',
  'loadBalanced',
  'topologyVersion',
  'maxAwaitTimeMS',
  'hostInfo',
  'forShell',
  '$client',
];

const hello: CommandHandler = {
  fields: HELLO_FIELDS,
  lenient: true,
  run: (ctx) => helloReply(ctx, false),
};
const isMaster: CommandHandler = {
  fields: HELLO_FIELDS,
  lenient: true,
  run: (ctx) => helloReply(ctx, true),
};

const ping: CommandHandler = { fields: [], run: () => ({ ok: 1 }) };

const buildInfo: CommandHandler = {
  fields: [],
  run: () => ({
    version: SERVER_VERSION,
    gitVersion: 'nhp-mongo-server',
    versionArray: VERSION_ARRAY,
    bits: 64,
    debug: false,
    maxBsonObjectSize: MAX_BSON_OBJECT_SIZE,
    storageEngines: ['memory'],
    modules: [],
    ok: 1,
  }),
};

const PARAMETERS: Record<string, () => unknown> = {
  featureCompatibilityVersion: () => ({ version: FEATURE_COMPATIBILITY_VERSION }),
  authenticationMechanisms: () => [],
  requireApiVersion: () => false,
  maxBSONDepth: () => 100,
};

const getParameter: CommandHandler = {
  fields: Object.keys(PARAMETERS),
  run(ctx) {
    if (ctx.db !== 'admin')
      throw new MongoServerError(
        'Unauthorized',
        'getParameter may only be run against the admin database.',
      );
    const all = ctx.cmd['getParameter'] === '*';
    const out: Doc = {};
    for (const [name, value] of Object.entries(PARAMETERS))
      if (all || name in ctx.cmd) out[name] = value();
    if (!all && Object.keys(out).length === 0)
      throw new MongoServerError('InvalidOptions', 'no option found to get');
    return { ...out, ok: 1 };
  },
};

// The driver ends its sessions on close with `writeConcern: { w: 0 }` (and so without waiting for a reply).
const endSessions: CommandHandler = { fields: [], write: true, run: () => ({ ok: 1 }) };
const killSessions: CommandHandler = { fields: [], write: true, run: () => ({ ok: 1 }) };

const connectionStatus: CommandHandler = {
  fields: ['showPrivileges'],
  run: () => ({ authInfo: { authenticatedUsers: [], authenticatedUserRoles: [] }, ok: 1 }),
};

const whatsmyuri: CommandHandler = {
  fields: [],
  run: (ctx) => ({ you: `${ctx.server.host}:0`, ok: 1 }),
};

export const adminCommands: Record<string, CommandHandler> = {
  hello,
  isMaster,
  ismaster: isMaster,
  ping,
  buildInfo,
  buildinfo: buildInfo,
  getParameter,
  endSessions,
  killSessions,
  connectionStatus,
  whatsmyuri,
};
