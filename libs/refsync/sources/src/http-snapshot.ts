import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable, Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import pRetry from 'p-retry';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import type { SyncLogger, UpstreamSnapshot } from '@nhp/refsync-sync';
import type { AppError } from '@nhp/shared-errors';
import { inSpan } from '@nhp/shared-tracing';
import { context, propagation, SpanKind, trace } from '@opentelemetry/api';
import {
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import { openFileSnapshot } from './file-snapshot';
import { isUpstreamError, isRetryableUpstreamError, upstreamError } from './upstream-error';

export interface HttpSourceOptions {
  /** Extra request headers, e.g. the configured Authorization header. Never logged. */
  headers?: Record<string, string>;
  /** Per attempt, covering the whole download. */
  timeoutMs: number;
  /** Further attempts after the first one, for network errors, timeouts and 5xx. */
  retries: number;
  /** First backoff delay; doubles per attempt, times a random 1-2 (p-retry), capped by maxDelayMs. */
  baseDelayMs?: number;
  maxDelayMs?: number;
  logger?: Pick<SyncLogger, 'warn'>;
  /** The importer run this download belongs to, sent as X-Request-Id (RUN_ID_HEADER). */
  runId?: string;
}

/**
 * The header that names the importer run to the upstream, so its logs and ours correlate: the
 * request-id header every service of the platform already reads and logs.
 */
export const RUN_ID_HEADER = 'X-Request-Id';

/**
 * Downloads an upstream URL into a private temp file and opens it as a snapshot: the sync reads it
 * twice, and a retry must restart a whole download, never resume a half-read stream.
 */
export async function openHttpSnapshot(
  url: URL,
  description: string,
  options: HttpSourceOptions,
): Promise<UpstreamSnapshot> {
  const dir = await mkdtemp(join(tmpdir(), 'refsync-upstream-'));
  const file = join(dir, 'snapshot.json');
  try {
    await pRetry(
      async () => {
        try {
          await download(url, description, file, options);
        } catch (err) {
          throw asUpstreamError(err, description, options.timeoutMs);
        }
      },
      {
        retries: options.retries,
        minTimeout: options.baseDelayMs ?? 500,
        maxTimeout: options.maxDelayMs ?? 30_000,
        factor: 2,
        randomize: true,
        shouldRetry: ({ error }) => isRetryableUpstreamError(error),
        onFailedAttempt: ({ error, attemptNumber, retriesLeft, retryDelay }) => {
          if (retriesLeft === 0 || !isRetryableUpstreamError(error)) return;
          options.logger?.warn(
            {
              source: description,
              attempt: attemptNumber,
              retryInMs: retryDelay,
              reason: error.message,
            },
            'upstream download failed, retrying',
          );
        },
      },
    );
    return await openFileSnapshot(file, description, { removeOnClose: dir });
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
  await inSpan(
    'GET',
    {
      kind: SpanKind.CLIENT,
      attributes: {
        [ATTR_HTTP_REQUEST_METHOD]: 'GET',
        [ATTR_URL_SCHEME]: url.protocol.replace(/:$/, ''),
        [ATTR_SERVER_ADDRESS]: url.hostname,
        [ATTR_SERVER_PORT]: Number(url.port) || (url.protocol === 'https:' ? 443 : 80),
        // The source as logged: no credentials, no query values.
        'refsync.upstream.source': description,
      },
    },
    async () => {
      await fetchSnapshot(url, description, file, options);
    },
  );
}

/** The download itself; resolves once the whole body is in `file`. */
async function fetchSnapshot(
  url: URL,
  description: string,
  file: string,
  options: HttpSourceOptions,
): Promise<void> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  const headers: Record<string, string> = {
    accept: 'application/json, application/x-ndjson;q=0.9',
    ...options.headers,
  };
  if (options.runId) headers[RUN_ID_HEADER] = options.runId;
  // The download span's context (traceparent/tracestate) while tracing is on.
  propagation.inject(context.active(), headers);
  const res = await fetch(url, { headers, signal });
  trace.getActiveSpan()?.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, res.status);
  if (!res.ok) {
    // Drain so the connection can be reused; the body of an error page is not needed.
    await res.body?.cancel().catch(() => undefined);
    throw upstreamError('http_status', `upstream ${description} answered HTTP ${res.status}`, {
      retryable: res.status >= 500,
    });
  }
  if (!res.body) {
    throw upstreamError('truncated', `upstream ${description} sent no body`, { retryable: true });
  }
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
    throw upstreamError(
      'truncated',
      `upstream ${description} sent ${received} of ${declared} bytes`,
      {
        retryable: true,
      },
    );
  }
}

function asUpstreamError(err: unknown, description: string, timeoutMs: number): AppError {
  if (isUpstreamError(err)) return err;
  const e = err as Error & { cause?: { code?: string } };
  if (e?.name === 'TimeoutError' || e?.name === 'AbortError') {
    return upstreamError(
      'timeout',
      `upstream ${description} did not answer within ${timeoutMs} ms`,
      {
        retryable: true,
        cause: err,
      },
    );
  }
  const code = e?.cause?.code ?? (e as NodeJS.ErrnoException)?.code;
  return upstreamError(
    'unreachable',
    `upstream ${description} is unreachable (${code ?? e?.message ?? 'unknown error'})`,
    { retryable: true, cause: err },
  );
}
