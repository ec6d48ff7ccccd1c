import type { Journal, PartRepository } from '@nhp/privacy-data-access';
import type { DefinitionRepository, GrantRepository, AuditContext } from '@nhp/privacy-data-access';
import type { Caller } from '@nhp/privacy-contracts';
import type { Connection } from 'mongoose';

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/** What a command may use once its arguments are valid (the database is opened only then). */
export interface AdminStore {
  connection: Connection;
  journal: Journal;
  parts: PartRepository;
  definitions: DefinitionRepository;
  grants: GrantRepository;
  /** This tool as the use cases' caller: an operator (audit records name them as admin). */
  caller: Caller;
  /** The audit actor of this tool's writes (auditOf(caller)). */
  audit: AuditContext;
}

/** A wrong or missing argument: exit 2 with the message and a hint, nothing opened or written. */
export class UsageError extends Error {}

/** A refusal after the arguments were read (an unknown party): exit 1, nothing written. */
export class CommandError extends Error {}

/**
 * One subcommand. `parse` checks the arguments without touching anything; `run` does the work
 * with the store. A command lives in its own file and is listed in ./index.ts.
 */
export interface AdminCommand<A = unknown> {
  name: string;
  /** One line for the command list. */
  summary: string;
  /** The command's own usage text (shown by `<command> --help` and on a usage error). */
  usage: string;
  parse(argv: string[]): A;
  run(args: A, store: AdminStore, io: Io): Promise<number>;
}

/** Lets each command file declare its argument type while the list holds them alike. */
export function defineCommand<A>(command: AdminCommand<A>): AdminCommand<unknown> {
  return command as AdminCommand<unknown>;
}
