import { defaultDevDataDir, ensureDevKey, type DevKey } from '@nhp/privacy-auth';
import { readDevStack } from '@nhp/shared-config';
import { mint, parseCli, USAGE, UsageError } from './token';

export interface Io {
  out: (text: string) => void;
  err: (text: string) => void;
  env: NodeJS.ProcessEnv;
}

/**
 * The running \`npm start\` may run its development issuer on another port than the default (and
 * privacy-api then trusts that URL as the issuer): tokens name the issuer the stack trusts.
 */
function issuedAsTheStackTrusts(devKey: DevKey, env: NodeJS.ProcessEnv): DevKey {
  const issuer = readDevStack(env)?.privacyAuthIssuer;
  return issuer ? { ...devKey, issuer } : devKey;
}

/** The whole command, with its output and environment injected (the tests call it in-process). */
export async function run(argv: string[], io: Io): Promise<number> {
  let cli;
  try {
    cli = parseCli(argv, io.env);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`privacy-token: ${err.message}\nRun with --help for usage.\n`);
    return 2;
  }
  if (cli.kind === 'help') {
    io.out(`${USAGE}\n`);
    return 0;
  }
  const devKey = issuedAsTheStackTrusts(await ensureDevKey(defaultDevDataDir(io.env)), io.env);
  if (cli.kind === 'init') {
    io.out(
      cli.json
        ? `${JSON.stringify({ issuer: devKey.issuer, kid: devKey.kid, jwksFile: devKey.jwksFile, keyFile: devKey.keyFile })}\n`
        : `Development key ${devKey.kid}\n  issuer     ${devKey.issuer}\n  JWKS file  ${devKey.jwksFile}  (PRIVACY_AUTH_JWKS_FILE)\n  private    ${devKey.keyFile}\n`,
    );
    return 0;
  }
  let minted;
  try {
    minted = await mint(cli, devKey);
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.err(`privacy-token: ${err.message}\n`);
    return 2;
  }
  if (cli.json) {
    io.out(`${JSON.stringify(minted, null, 2)}\n`);
  } else {
    io.out(`${minted.accessToken}\n${minted.dpopProof ? `${minted.dpopProof}\n` : ''}`);
  }
  return 0;
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
      process.stderr.write(`privacy-token: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
