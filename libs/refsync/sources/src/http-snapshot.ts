import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { SyncLogger, UpstreamSnapshot } from '@nhp/refsync-sync';
import { openFileSnapshot } from './file-snapshot';
import { UpstreamError } from './upstream-error';

export interface HttpSourceOptions {
  /** Extra request headers, e.g. the configured Authorization header. Never logged. */
  headers?: Record<string, string>;
  /** Per attempt, covering the whole download. */
  timeoutMs: number;
  /** Further attempts after the first one, for network errors, timeouts and 5xx. */
  retries: number;
  /** First backoff delay; doubles per attempt, with jitter, capped by maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  logger?: Pick<SyncLogger, 'warn'>;
}

/**
 * Downloads an upstream URL into a private temp file and opens it as a snapshot: the sync reads it
 * twice, and a retry must restart a whole download, never resume a half-read stream.
 */
export async function openHttpSnapshot(
  url: URL,
  description: string,
  options: HttpSourceOptions,
): Promise<UpstreamSnapshot> {
  const baseDelay = options.baseDelayMs ?? 500;
  const maxDelay = options.maxDelayMs ?? 30_000;
  const dir = await mkdtemp(join(tmpdir(), 'refsync-upstream-'));
  const file = join(dir, 'snapshot.json');
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await download(url, description, file, options);
        return await openFileSnapshot(file, description, { removeOnClose: dir });
      } catch (err) {
        const error = asUpstreamError(err, description, options.timeoutMs);
        if (!error.retryable || attempt >= options.retries) throw error;
        const delay = Math.min(maxDelay, baseDelay * 2 ** attempt) * (0.5 + Math.random() / 2);
        options.logger?.warn(
          {
            source: description,
            attempt: attempt + 1,
            retryInMs: Math.round(delay),
            reason: error.message,
          },
          'upstream download failed, retrying',
        );
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

async function download(
  url: URL,
  description: string,
  file: string,
  options: HttpSourceOptions,
): Promise<void> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const res = await fetch(url, {
    headers: { accept: 'application/json, application/x-ndjson;q=0.9', ...options.headers },
    signal,
  });
  if (!res.ok) {
    // Drain so the connection can be reused; the body of an error page is not needed.
    await res.body?.cancel().catch(() => undefined);
    throw new UpstreamError(
      'http_status',
      `upstream ${description} answered HTTP ${res.status}`,
      res.status >= 500,
    );
  }
  if (!res.body) throw new UpstreamError('truncated', `upstream ${description} sent no body`, true);
  const declared = res.headers.get('content-length');
  // fetch decodes gzip/br, so the declared length only counts bytes when no encoding was applied.
  const comparable = declared !== null && !res.headers.get('content-encoding');
  let received = 0;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      received += chunk.length;
      done(null, chunk);
    },
  });
  await pipeline(
    Readable.fromWeb(res.body as WebReadableStream<Uint8Array>),
    counter,
    createWriteStream(file),
  );
  if (comparable && received !== Number(declared)) {
    throw new UpstreamError(
      'truncated',
      `upstream ${description} sent ${received} of ${declared} bytes`,
      true,
    );
  }
}

function asUpstreamError(err: unknown, description: string, timeoutMs: number): UpstreamError {
  if (err instanceof UpstreamError) return err;
  const e = err as Error & { cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return new UpstreamError(
      'timeout',
      `upstream ${description} did not answer within ${timeoutMs} ms`,
      true,
      {
        cause: err,
      },
    );
  }
  const code = e?.cause?.code ?? (e as NodeJS.ErrnoException)?.code;
  return new UpstreamError(
    'unreachable',
    `upstream ${description} is unreachable (${code ?? e?.message ?? 'unknown error'})`,
    true,
    { cause: err },
  );
}
