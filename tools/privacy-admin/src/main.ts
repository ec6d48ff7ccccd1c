import { userInfo } from 'node:os';
import {
  createDefinitionRepository,
  createGrantRepository,
  createJournal,
  createPartRepository,
} from '@nhp/privacy-data-access';
import type { Caller } from '@nhp/privacy-contracts';
import { auditOf } from '@nhp/privacy-domain';
import { devStackUrl } from '@nhp/shared-config';
import { createLogger } from '@nhp/shared-logger';
import { drainNats, tryConnectNats } from '@nhp/shared-messaging';
import { createAnnouncer } from './announcer';
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

Administers privacy-api's data in the MongoDB at MONGO_URL and announces changed grants to
running privacy-api instances on NATS_URL. Without them it uses the MongoDB and NATS of the
running \`npm start\` (.data/dev-stack.json), else ${DEFAULT_MONGO_URL} and ${DEFAULT_NATS_URL}.
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

async function openStore(
  io: Io,
): Promise<AdminStore & { close(): Promise<void>; warnings(): Promise<string[]> }> {
  const logger = createLogger({ name: 'privacy-admin', level: 'error', pretty: false });
  const mongoUrl = devStackUrl('mongo', DEFAULT_MONGO_URL, io.env);
  const connection = await connectMongo({ uri: mongoUrl.url, logger, appName: 'privacy-admin' });
  const journal = createJournal({ connection, logger });
  // NATS, when reachable, carries the announcement of a changed grant or definition, so that
  // every running privacy-api instance drops its cached copy at once; without it they see the
  // change within their cache's time-to-live, and the announcer says so.
  const natsUrl = devStackUrl('nats', DEFAULT_NATS_URL, io.env);
  const nats = await tryConnectNats({ servers: natsUrl.url, name: 'privacy-admin' });
  const announcer = createAnnouncer(nats, natsUrl);
  const repositoryOptions = { connection, journal, cacheTtlMs: 0 };
  const caller: Caller = { clientId: undefined, isAdmin: true, operator: actorId() };
  return {
    connection,
    journal,
    parts: createPartRepository(repositoryOptions),
    definitions: createDefinitionRepository({
      ...repositoryOptions,
      onChanged: announcer.onChanged('definition'),
    }),
    grants: createGrantRepository({
      ...repositoryOptions,
      onChanged: announcer.onChanged('grant'),
    }),
    caller,
    audit: auditOf(caller),
    warnings: () => announcer.warnings(),
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
    const code = await command.run(args, store, io);
    for (const line of await store.warnings()) io.err(`privacy-admin ${command.name}: ${line}\n`);
    return code;
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
