import { writeFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { defaultDevDataDir } from '@nhp/privacy-auth';
import { createLogger } from '@nhp/shared-logger';
import {
  clientsFilePath,
  DEV_ISSUER_PORT,
  registerClient,
  SCOPE_KINDS,
  type ScopeKind,
} from './clients';

const USAGE = `Usage: npm run privacy-issuer -- [serve] [--port 3004] [--host 127.0.0.1] [--issuer URL]
       npm run privacy-issuer -- register --client-id ID [--scope read,write,admin]
                                          [--pid FNR] [--no-dpop] [--key-out FILE]

The development OpenID provider for privacy-api (never in production; \`npm start\` runs it on
http://localhost:${DEV_ISSUER_PORT}). It issues access tokens by the client-credentials grant with
private_key_jwt client authentication, bound to a DPoP key, signed with the development key in
.data/ (DEV_DATA_DIR moves it).

serve                 run the issuer (the default); --port (PRIVACY_DEV_ISSUER_PORT), --host
                      (PRIVACY_DEV_ISSUER_HOST), --issuer: its identifier (PRIVACY_DEV_ISSUER_URL,
                      default http://localhost:<port>)
register              make a client: a new ES256 key pair; the public key is registered in
                      .data/privacy-issuer/clients.json (the running issuer sees it at once),
                      the private key is printed (and written to --key-out) and kept nowhere else
  --client-id ID      the client id (the token's client_id: what privacy-api's grants name)
  --scope LIST        scope kinds the client may ask for (default read)
  --pid FNR           citizen tokens (a development shortcut): every token of this client carries
                      the identity number FNR as pid, as a citizen's app would after a login
  --no-dpop           also issue Bearer tokens without a DPoP proof (default: DPoP-bound only)
  --key-out FILE      write the private JWK to FILE (mode 0600)`;

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        port: { type: 'string' },
        host: { type: 'string' },
        issuer: { type: 'string' },
        'client-id': { type: 'string' },
        scope: { type: 'string', default: 'read' },
        pid: { type: 'string' },
        'no-dpop': { type: 'boolean', default: false },
        'key-out': { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    });
  } catch (err) {
    process.stderr.write(`${(err as Error).message}\n\n${USAGE}\n`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return 0;
  }
  const command = positionals[0] ?? 'serve';
  const dataDir = defaultDevDataDir();

  if (command === 'register') {
    const scopes = values.scope
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean);
    const bad = scopes.filter((s) => !(SCOPE_KINDS as readonly string[]).includes(s));
    if (!values['client-id'] || bad.length > 0) {
      process.stderr.write(
        `${!values['client-id'] ? '--client-id is required\n' : ''}${bad.length ? `unknown scope kind: ${bad.join(', ')} (read, write, admin)\n` : ''}\n${USAGE}\n`,
      );
      return 2;
    }
    const made = await registerClient(dataDir, {
      clientId: values['client-id'],
      scopes: scopes as ScopeKind[],
      pid: values.pid,
      dpopBound: !values['no-dpop'],
    });
    if (values['key-out']) {
      await writeFile(values['key-out'], `${JSON.stringify(made.privateJwk, null, 2)}\n`, {
        mode: 0o600,
      });
    }
    process.stdout.write(
      `${JSON.stringify({ registration: made.registration, privateJwk: made.privateJwk }, null, 2)}\n`,
    );
    process.stderr.write(
      `registered ${made.registration.client_id} in ${clientsFilePath(dataDir)}${values['key-out'] ? `; private key in ${values['key-out']}` : ''}\n`,
    );
    return 0;
  }
  if (command !== 'serve') {
    process.stderr.write(`unknown command ${command}\n\n${USAGE}\n`);
    return 2;
  }

  const logger = createLogger({
    name: 'privacy-dev-issuer',
    level: process.env['LOG_LEVEL'] ?? 'info',
    pretty: process.env['LOG_PRETTY'] === 'true',
  });
  const portText = values.port ?? process.env['PRIVACY_DEV_ISSUER_PORT'];
  const port = portText !== undefined ? Number(portText) : DEV_ISSUER_PORT;
  if (!Number.isInteger(port) || port < 0 || port > 65535) {
    process.stderr.write(`--port must be a port number\n`);
    return 2;
  }
  // Loaded only to serve: oidc-provider has nothing to do with registering a client.
  const { startDevIssuer } = await import('./issuer');
  const issuer = await startDevIssuer({
    dataDir,
    port,
    host: values.host ?? process.env['PRIVACY_DEV_ISSUER_HOST'],
    issuer: values.issuer ?? process.env['PRIVACY_DEV_ISSUER_URL'],
    audience: process.env['PRIVACY_AUTH_AUDIENCE'],
    logger,
  });
  logger.info(
    { issuer: issuer.issuer, jwksUri: issuer.jwksUri, clients: clientsFilePath(dataDir) },
    'development issuer listening',
  );
  const stop = () => {
    void issuer.close().then(() => process.exit(0));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  return await new Promise<number>(() => undefined);
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  },
);
