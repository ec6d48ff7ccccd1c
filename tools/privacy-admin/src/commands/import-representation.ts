import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createRepresentationRepository } from '@nhp/privacy-data-access';
import { createRepresentationUseCases, parseRepresentationImport } from '@nhp/privacy-domain';
import { CommandError, defineCommand, UsageError } from './command';

interface ImportArgs {
  file: string;
}

/** As privacy-api decides it: PRIVACY_ALLOW_SYNTHETIC_IDS, else true outside production. */
function allowSyntheticIds(env: NodeJS.ProcessEnv): boolean {
  const value = env['PRIVACY_ALLOW_SYNTHETIC_IDS']?.trim().toLowerCase();
  if (value === 'true') return true;
  if (value === 'false') return false;
  return env['NODE_ENV'] !== 'production';
}

/** Shown at most; a file with more bad lines says how many more. */
const MAX_REPORTED_LINES = 100;

export const importRepresentationCommand = defineCommand<ImportArgs>({
  name: 'import-representation',
  summary: 'replace callers’ representation relationships from an NDJSON file',
  usage: `privacy-admin import-representation FILE

FILE holds one relationship a line (NDJSON; blank lines are skipped):
  {"fnr", "annenFnr", "eksternProfilGuid", "fornavn", "mellomnavn"?, "etternavn",
   "representasjonsforholdType", "annenAdresse"?}
meaning fnr represents, or is represented by, annenFnr (whose profile is given).
annenAdresse (true, or the address) marks a child living at another address.

The whole file is checked first: any bad line is reported by its number and
nothing of the file is imported (exit 1). Otherwise the relationships of every
caller (fnr) in the file replace that caller's earlier ones, one atomic write
per caller; callers not in the file keep theirs. Importing the same file again
changes nothing. Synthetic identity numbers are accepted as privacy-api accepts
them (PRIVACY_ALLOW_SYNTHETIC_IDS; by default outside production).`,
  parse(argv) {
    let positionals: string[];
    try {
      ({ positionals } = parseArgs({
        args: argv,
        options: {},
        strict: true,
        allowPositionals: true,
      }));
    } catch (err) {
      throw new UsageError(err instanceof Error ? err.message : String(err));
    }
    if (positionals.length !== 1 || positionals[0]?.trim() === '') {
      throw new UsageError('exactly one FILE is required');
    }
    return { file: positionals[0] as string };
  },
  async run(args, store, io) {
    let text: string;
    try {
      text = await readFile(args.file, 'utf8');
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      throw new CommandError(`cannot read ${args.file} (${reason}); nothing was imported`);
    }
    const parsed = parseRepresentationImport(text, {
      allowSyntheticIds: allowSyntheticIds(io.env),
    });
    if (!parsed.ok) {
      const shown = parsed.errors
        .slice(0, MAX_REPORTED_LINES)
        .map((e) => `  line ${e.line}: ${e.message}`);
      const more = parsed.errors.length - shown.length;
      throw new CommandError(
        `${args.file}: ${parsed.errors.length} bad line(s); nothing was imported\n${shown.join('\n')}${more > 0 ? `\n  (and ${more} more)` : ''}`,
      );
    }
    const representation = createRepresentationUseCases({
      representation: createRepresentationRepository({
        connection: store.connection,
        journal: store.journal,
      }),
      now: () => new Date(),
    });
    const { replaced, unchanged } = await representation.importRelationships(
      store.caller,
      parsed.byFnr,
      `import-representation:${new Date().toISOString()}`,
    );
    io.out(
      `imported ${parsed.lines} relationship(s) of ${parsed.byFnr.size} caller(s) from ${args.file}: ${replaced} caller(s) replaced, ${unchanged} unchanged\n`,
    );
    return 0;
  },
});
