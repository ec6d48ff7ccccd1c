import { userInfo } from 'node:os';
import {
  announceChanges,
  createDefinitionRepository,
  createGrantRepository,
  createJournal,
  createPartRepository,
} from '@nhp/privacy-data-access';
import type { Caller } from '@nhp/privacy-contracts';
import { auditOf } from '@nhp/privacy-domain';
import { createLogger } from '@nhp/shared-logger';
import { drainNats, tryConnectNats } from '@nhp/shared-messaging';
import { closeMongo, connectMongo } from '@nhp/shared-persistence';
import {
  CommandError,
  UsageError,
  type AdminCommand,
  type AdminStore,
  type Io,
} from './commands/command';
import { COMMANDS } from './commands';

export { COMMANDS };
export type { Io };

const DEFAULT_MONGO_URL = 'mongodb://127.0.0.1:27017/nhp';
const DEFAULT_NATS_URL = 'nats://127.0.0.1:4222';

export function usage(commands: readonly AdminCommand[] = COMMANDS): string {
  const width = Math.max(...commands.map((c) => c.name.length));
  return `Usage: npm run privacy-admin -- <command> [options]

Administers privacy-api's data in the MongoDB at MONGO_URL (default ${DEFAULT_MONGO_URL}).
Every change is written with its audit record.

Commands:
${commands.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`).join('\n')}

Run "npm run privacy-admin -- <command> --help" for a command's options.
Exit status: 0 done, 1 refused or failed (nothing written), 2 wrong arguments (nothing written).`;
}

function actorId(): string {
  try {
    return `privacy-admin:${userInfo().username}`;
  } catch {
    return 'privacy-admin';
  }
}

async function openStore(io: Io): Promise<AdminStore & { close(): Promise<void> }> {
  const logger = createLogger({ name: 'privacy-admin', level: 'error', pretty: false });
  const connection = await connectMongo({
    uri: io.env['MONGO_URL'] || DEFAULT_MONGO_URL,
    logger,
    appName: 'privacy-admin',
  });
  const journal = createJournal({ connection, logger });
  // NATS, when reachable, carries the announcement of a changed grant or definition, so that
  // every running privacy-api instance drops its cached copy at once; without it they see the
  // change within their cache's time-to-live (5 s).
  const nats = await tryConnectNats({
    servers: io.env['NATS_URL'] || DEFAULT_NATS_URL,
    name: 'privacy-admin',
  });
  const repositoryOptions = { connection, journal, cacheTtlMs: 0 };
  const caller: Caller = { clientId: undefined, isAdmin: true, operator: actorId() };
  return {
    connection,
    journal,
    parts: createPartRepository(repositoryOptions),
    definitions: createDefinitionRepository({
      ...repositoryOptions,
      onChanged: announceChanges(() => nats, 'definition', logger),
    }),
    grants: createGrantRepository({
      ...repositoryOptions,
      onChanged: announceChanges(() => nats, 'grant', logger),
    }),
    caller,
    audit: auditOf(caller),
    async close() {
      // The audit records of this run's writes are relayed before the connection closes.
      await journal.idle();
      await drainNats(nats);
      await closeMongo(connection);
    },
  };
}

/** The whole command, with output and environment injected (tests call it in-process). */
export async function run(argv: string[], io: Io): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    io.out(`${usage()}\n`);
    return name === undefined ? 2 : 0;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.err(`privacy-admin: unknown command "${name}"\n\n${usage()}\n`);
    return 2;
  }
  if (rest.includes('--help') || rest.includes('-h')) {
    io.out(`Usage: ${command.usage}\n`);
    return 0;
  }
  let args: unknown;
  try {
    args = command.parse(rest);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`privacy-admin ${command.name}: ${err.message}\n\nUsage: ${command.usage}\n`);
    return 2;
  }
  const store = await openStore(io);
  try {
    return await command.run(args, store, io);
  } catch (err) {
    if (!(err instanceof CommandError)) throw err;
    io.err(`privacy-admin ${command.name}: ${err.message}\n`);
    return 1;
  } finally {
    await store.close();
  }
}

if (require.main === module) {
  run(process.argv.slice(2), {
    out: (t) => process.stdout.write(t),
    err: (t) => process.stderr.write(t),
    env: process.env,
  }).then(
    (code) => {
      process.exitCode = code;
    },
    (err: unknown) => {
      process.stderr.write(`privacy-admin: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
