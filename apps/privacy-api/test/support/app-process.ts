/**
 * privacy-api as a process, as an operator runs it (exit code, stderr, probes), with tokens from a
 * test issuer whose keys it trusts through PRIVACY_AUTH_JWKS_FILE.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';
import { freePort } from '@nhp/shared-testing';

const root = resolve(__dirname, '../../../..');
const entry = resolve(__dirname, '../../src/main.ts');

export interface AppProcess {
  child: ChildProcess;
  port: number;
  url: string;
  exited: Promise<number | null>;
  stderr(): string;
  /** Everything the process wrote, stdout and stderr (for what must not be in it). */
  output(): string;
  /** The JSON log lines written to stdout so far. */
  lines(): Array<Record<string, unknown>>;
  /** Resolves true once /health answers 200 (false if the process exits first). */
  healthy(): Promise<boolean>;
  stop(): Promise<void>;
}

/**
 * Starts privacy-api from its source with the given environment (PATH and test defaults added);
 * `preload` modules are imported before it (e.g. @nhp/shared-testing's processFaultsPreload).
 */
export async function runApp(
  env: Record<string, string>,
  options: { preload?: readonly string[] } = {},
): Promise<AppProcess> {
  const port = env['PRIVACY_API_PORT'] ? Number(env['PRIVACY_API_PORT']) : await freePort();
  const imports = (options.preload ?? []).flatMap((path) => ['--import', path]);
  const child = spawn(process.execPath, ['--import', 'tsx', ...imports, entry], {
    cwd: root,
    env: {
      PATH: process.env['PATH'] ?? '',
      TSX_TSCONFIG_PATH: resolve(root, 'tsconfig.base.json'),
      NODE_ENV: 'test',
      LOG_LEVEL: 'warn',
      PRIVACY_API_PORT: String(port),
      PRIVACY_API_HOST: '127.0.0.1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  let stdout = '';
  child.stderr?.setEncoding('utf8').on('data', (c: string) => (stderr += c));
  child.stdout?.setEncoding('utf8').on('data', (c: string) => (stdout += c));
  let exitCode: number | null | undefined;
  const exited = new Promise<number | null>((done) =>
    child.once('exit', (code) => {
      exitCode = code;
      done(code);
    }),
  );
  const url = `http://127.0.0.1:${port}`;
  return {
    child,
    port,
    url,
    exited,
    stderr: () => stderr,
    output: () => stdout + stderr,
    lines: () =>
      stdout
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as Record<string, unknown>),
    async healthy() {
      for (let i = 0; i < 600 && exitCode === undefined; i++) {
        const ok = await fetch(`${url}/health`)
          .then((r) => r.status === 200)
          .catch(() => false);
        if (ok) return true;
        await new Promise((r) => setTimeout(r, 100));
      }
      return false;
    },
    async stop() {
      if (exitCode === undefined) child.kill('SIGTERM');
      await exited;
    },
  };
}

export { trustedIssuer, type TrustedIssuer } from '@nhp/privacy-testing';
