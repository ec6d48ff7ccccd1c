import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { createPrivacyClient, PrivacyApiError, type PrivacyClientAuth } from '@nhp/privacy-client';
import { devStackFilePath, readDevStack } from '@nhp/shared-config';
import type { JWK } from 'jose';
import { runPrivacyMirror } from './mirror';
import { JsonFileMirrorStore } from './store';

const USAGE = `Usage: npm run privacy-mirror -- [--api URL] [--nats URL] --part KODE --store FILE
                              [--once] [--consumer NAME]
                              (--issuer URL --client-id ID --key JWK_FILE | PRIVACY_CLIENT_TOKEN=...)

Keeps a local copy of one party's privacy settings current: the first run walks the active
citizens of every definition the client may read, with a durable JetStream consumer on
privacy.events.setting-changed.<KODE> made before the walk; then it applies the events. Later
runs resume from the consumer's position. Prints a line per change (the citizen masked, as in
the logs), when it follows the events, and when NATS is lost and back.

  --api URL          privacy-api, e.g. http://localhost:3001 (default: the running npm start's)
  --nats URL         NATS, e.g. nats://127.0.0.1:4222, comma-separated for a cluster (default:
                     the running npm start's, from .data/dev-stack.json)
  --part KODE        the party whose settings to copy
  --store FILE       the copy, a JSON file (created on the first run)
  --once             walk if needed, catch up with every waiting event, exit
  --consumer NAME    the durable consumer (default privacy-mirror-<KODE>)
  --issuer URL       the token issuer (HelseID, or the development issuer http://localhost:3004)
  --client-id ID     the client registered with it
  --key JWK_FILE     the client's private key (a JWK, as npm run privacy-issuer -- register prints)
  --scope LIST       scopes to ask for (default read)

Without --issuer, the access token in PRIVACY_CLIENT_TOKEN is sent as Bearer.
Exit codes: 0 done (or stopped by SIGINT/SIGTERM), 1 failed, 2 bad arguments.`;

async function main(argv: string[]): Promise<number> {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      options: {
        api: { type: 'string' },
        nats: { type: 'string' },
        part: { type: 'string' },
        store: { type: 'string' },
        once: { type: 'boolean', default: false },
        consumer: { type: 'string' },
        issuer: { type: 'string' },
        'client-id': { type: 'string' },
        key: { type: 'string' },
        scope: { type: 'string', default: 'read' },
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
  const problems: string[] = [];
  // Without --api / --nats: the running npm start's privacy-api and NATS.
  const stack = readDevStack();
  const fromStack = [
    !values.api && stack?.privacyApiUrl && `privacy-api ${stack.privacyApiUrl}`,
    !values.nats && stack && `NATS ${stack.natsUrl}`,
  ].filter(Boolean);
  values.api ??= stack?.privacyApiUrl;
  values.nats ??= stack?.natsUrl;
  if (!values.api) problems.push('--api is required (no npm start is running)');
  else if (!URL.canParse(values.api)) problems.push('--api must be an absolute URL');
  if (!values.nats) problems.push('--nats is required (no npm start is running)');
  if (!values.part) problems.push('--part is required');
  if (!values.store) problems.push('--store is required');
  const token = process.env['PRIVACY_CLIENT_TOKEN'];
  const credentials = [values.issuer, values['client-id'], values.key];
  if (credentials.some(Boolean) && !credentials.every(Boolean)) {
    problems.push('--issuer, --client-id and --key go together');
  } else if (!values.issuer && !token) {
    problems.push('authenticate with --issuer, --client-id and --key, or PRIVACY_CLIENT_TOKEN');
  }
  if (problems.length > 0) {
    process.stderr.write(`${problems.join('\n')}\n\n${USAGE}\n`);
    return 2;
  }

  let auth: PrivacyClientAuth;
  if (values.issuer) {
    let privateKey: JWK;
    try {
      privateKey = JSON.parse(await readFile(values.key as string, 'utf8')) as JWK;
    } catch (err) {
      process.stderr.write(`cannot read the key ${values.key}: ${(err as Error).message}\n`);
      return 2;
    }
    auth = {
      issuer: values.issuer,
      clientId: values['client-id'] as string,
      privateKey,
      scopes: values.scope
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    };
  } else {
    auth = { accessToken: () => token as string };
  }

  if (fromStack.length > 0) {
    process.stdout.write(`using npm start's ${fromStack.join(' and ')} (${devStackFilePath()})\n`);
  }
  const controller = new AbortController();
  const stop = () => controller.abort();
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  try {
    const summary = await runPrivacyMirror({
      client: createPrivacyClient({ baseUrl: values.api as string, auth }),
      api: values.api as string,
      nats: values.nats as string,
      partKode: values.part as string,
      store: new JsonFileMirrorStore(values.store as string),
      consumer: values.consumer,
      once: values.once,
      signal: controller.signal,
      report: (line) => process.stdout.write(`${line}\n`),
    });
    process.stdout.write(
      `${summary.walked ? 'walked, then ' : ''}applied ${summary.applied} changes (${summary.gapsFetched} gaps fetched, ${summary.ignored} older events ignored); saved ${values.store}\n`,
    );
    return 0;
  } catch (err) {
    const message =
      err instanceof PrivacyApiError
        ? `${err.message} (${err.code}${err.requestId ? `, request ${err.requestId}` : ''})`
        : err instanceof Error
          ? err.message
          : String(err);
    process.stderr.write(`privacy-mirror: ${message}\n`);
    return 1;
  }
}

main(process.argv.slice(2)).then((code) => {
  process.exit(code);
});
