import {
  altEnvelopeSchemas,
  envelopeSchemas,
  problemDetailsSchema,
  type Dataset,
  type ItemDataOf,
  type ProblemDetails,
} from '@nhp/refsync-contracts';
import { apiErrorStatus, apiProtocolError } from './errors';

/** The two spellings of the interface; a client is written to whichever one the service offers. */
export type Spelling = 'primary' | 'alternative';

export interface RefsyncClientOptions {
  /** Where the service runs, e.g. http://localhost:3002 (a path prefix is kept). */
  baseUrl: string;
  apiKey: string;
  /** Default primary. */
  spelling?: Spelling;
  /** Default: the global fetch (Node 20+). */
  fetch?: typeof fetch;
}

/** One item whichever spelling delivered it; version and lastChanged come with the primary one. */
export interface ChangedItem<D extends Dataset = Dataset> {
  data: ItemDataOf<D>;
  isDeleted: boolean;
  version?: number;
  lastChanged?: string;
}

export interface FetchDatasetOptions {
  /** The currentVersion the caller stored; omitted for the full list of active items. */
  sinceVersion?: number;
  /** The ETag of the response the caller holds for exactly this request. */
  ifNoneMatch?: string;
  signal?: AbortSignal;
}

export type FetchDatasetResult<D extends Dataset = Dataset> =
  | { status: 200; currentVersion: number; items: ChangedItem<D>[]; etag: string | undefined }
  | { status: 304; etag: string | undefined };

export interface RefsyncClient {
  readonly spelling: Spelling;
  /** The request URL of a dataset (with the spelling's parameter when sinceVersion is given). */
  url(dataset: Dataset, sinceVersion?: number): string;
  /**
   * One GET, validated against the contracts. Resolves with the envelope (normalised across the
   * spellings) or a 304; rejects with an AppError REFSYNC_API_ERROR_STATUS for an error status and REFSYNC_API_PROTOCOL
   * for a body that breaks the contract.
   */
  fetchDataset<D extends Dataset>(
    dataset: D,
    options?: FetchDatasetOptions,
  ): Promise<FetchDatasetResult<D>>;
}

const PATHS: Record<Spelling, Record<Dataset, string>> = {
  primary: {
    treatmentGroup: '/api/v1/treatmentGroup',
    reimbursementGroup: '/api/v1/reimbursementGroup',
  },
  alternative: {
    treatmentGroup: '/api/v1/treatment-group',
    reimbursementGroup: '/api/v1/reimbursement-group',
  },
};
const SINCE_PARAM: Record<Spelling, string> = {
  primary: 'sinceVersion',
  alternative: 'since-version',
};

function summariseIssues(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`)
    .join('; ');
}

async function readProblem(response: Response): Promise<ProblemDetails | undefined> {
  try {
    const parsed = problemDetailsSchema.safeParse(await response.json());
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export function createRefsyncClient(options: RefsyncClientOptions): RefsyncClient {
  const spelling = options.spelling ?? 'primary';
  const doFetch = options.fetch ?? globalThis.fetch;
  if (typeof doFetch !== 'function') {
    throw new TypeError('no fetch available: pass options.fetch or use Node 20 or later');
  }
  const base = options.baseUrl.replace(/\/+$/, '');

  function url(dataset: Dataset, sinceVersion?: number): string {
    const path = `${base}${PATHS[spelling][dataset]}`;
    if (sinceVersion === undefined) return path;
    if (!Number.isSafeInteger(sinceVersion)) {
      throw new RangeError(`sinceVersion must be an integer, got ${sinceVersion}`);
    }
    return `${path}?${SINCE_PARAM[spelling]}=${sinceVersion}`;
  }

  return {
    spelling,
    url,
    async fetchDataset<D extends Dataset>(
      dataset: D,
      fetchOptions: FetchDatasetOptions = {},
    ): Promise<FetchDatasetResult<D>> {
      const target = url(dataset, fetchOptions.sinceVersion);
      const headers: Record<string, string> = {
        'X-API-KEY': options.apiKey,
        Accept: 'application/json',
      };
      if (fetchOptions.ifNoneMatch) headers['If-None-Match'] = fetchOptions.ifNoneMatch;
      // fetch negotiates and decodes gzip and br itself.
      const response = await doFetch(target, { headers, signal: fetchOptions.signal });
      const etag = response.headers.get('etag') ?? undefined;
      if (response.status === 304) return { status: 304, etag: etag ?? fetchOptions.ifNoneMatch };
      if (response.status !== 200) {
        throw apiErrorStatus(response.status, await readProblem(response), target);
      }

      let body: unknown;
      try {
        body = await response.json();
      } catch {
        throw apiProtocolError('response body is not JSON', target);
      }
      if (spelling === 'primary') {
        const parsed = envelopeSchemas[dataset].safeParse(body);
        if (!parsed.success) {
          throw apiProtocolError(
            `response breaks the ${dataset} envelope contract: ${summariseIssues(parsed.error.issues)}`,
            target,
          );
        }
        return {
          status: 200,
          etag,
          currentVersion: parsed.data.currentVersion,
          items: parsed.data.items as ChangedItem<D>[],
        };
      }
      const parsed = altEnvelopeSchemas[dataset].safeParse(body);
      if (!parsed.success) {
        throw apiProtocolError(
          `response breaks the ${dataset} alternative envelope contract: ${summariseIssues(parsed.error.issues)}`,
          target,
        );
      }
      return {
        status: 200,
        etag,
        currentVersion: parsed.data.currentVersion,
        items: parsed.data.entries as ChangedItem<D>[],
      };
    },
  };
}
