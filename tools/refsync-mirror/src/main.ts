import { parseArgs } from 'node:util';
import { REFSYNC_API_ERROR_STATUS, REFSYNC_API_PROTOCOL } from '@nhp/refsync-client';
import { AppError } from '@nhp/shared-errors';
import { formatChanges, runMirror } from './run-mirror';

const USAGE = `Usage: npm run refsync-mirror -- --url <base url> [--api-key <key>] [--file <path>]
                              [--spelling primary|alternative] [--reset]

Mirrors treatment groups and reimbursement groups from refsync-api into a local JSON file and
prints what changed since the last run. The first run fetches the full lists; later runs fetch
only the changes since the version stored in the file.

  --url        where refsync-api runs, e.g. http://localhost:3002
  --api-key    the X-API-KEY to send (default: the REFSYNC_API_KEY environment variable)
  --file       the mirror file (default: refsync-mirror.json)
  --spelling   primary (/api/v1/treatmentGroup) or alternative (/api/v1/treatment-group); default primary
  --reset      start over, even if the file mirrors another service`;

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        url: { type: 'string' },
        'api-key': { type: 'string' },
        file: { type: 'string', default: 'refsync-mirror.json' },
        spelling: { type: 'string', default: 'primary' },
        reset: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const apiKey = values['api-key'] ?? process.env['REFSYNC_API_KEY'];
  const problems: string[] = [];
  if (!values.url || !URL.canParse(values.url)) problems.push('--url must be an absolute URL');
  if (!apiKey) problems.push('an API key is required: --api-key <key> or REFSYNC_API_KEY');
  if (values.spelling !== 'primary' && values.spelling !== 'alternative') {
    problems.push('--spelling must be primary or alternative');
  }
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n\n${USAGE}\n`);
    return 2;
  }

  try {
    const changes = await runMirror({
      url: values.url as string,
      apiKey: apiKey as string,
      file: values.file,
      spelling: values.spelling as 'primary' | 'alternative',
      reset: values.reset,
    });
    process.stdout.write(`${formatChanges(changes)}\nsaved ${values.file}\n`);
    return 0;
  } catch (err) {
    if (
      err instanceof AppError &&
      (err.code === REFSYNC_API_ERROR_STATUS || err.code === REFSYNC_API_PROTOCOL)
    ) {
      process.stderr.write(`${err.message}\n`);
    } else if (err instanceof TypeError && /fetch failed/.test(err.message)) {
      process.stderr.write(
        `cannot reach ${values.url}: ${String((err as { cause?: unknown }).cause ?? err.message)}\n`,
      );
    } else {
      process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    }
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exitCode = code;
});
