import { parseArgs } from 'node:util';
import { generateApiKey } from './keys';

const USAGE = `Usage: npm run refsync-keys -- <client name> [--json]

Prints a new random API key for refsync-api and the REFSYNC_API_KEYS entry that makes the
service accept it. The service stores only the SHA-256 of the key, so hand the key to the client
now: it cannot be recovered later. Several entries may be configured at once (comma-separated),
which is how a key is rotated: add the new entry, let the client switch, remove the old entry.`;

function main(argv: string[]): number {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: { json: { type: 'boolean' }, help: { type: 'boolean', short: 'h' } },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (parsed.values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  if (parsed.positionals.length !== 1) {
    process.stderr.write(`${USAGE}\n`);
    return 2;
  }
  let generated;
  try {
    generated = generateApiKey(parsed.positionals[0] as string);
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n`);
    return 2;
  }
  if (parsed.values.json) {
    process.stdout.write(`${JSON.stringify(generated, null, 2)}\n`);
    return 0;
  }
  process.stdout.write(
    [
      `New API key for client "${generated.client}" (give it to the client now; it is not stored anywhere):`,
      '',
      `  ${generated.key}`,
      '',
      'Add this entry to REFSYNC_API_KEYS (comma-separated with the entries already there):',
      '',
      `  ${generated.entry}`,
      '',
      `The client sends it as:  X-API-KEY: ${generated.key}`,
      '',
    ].join('\n'),
  );
  return 0;
}

process.exitCode = main(process.argv.slice(2));
