import {
  createDefinitionRequestSchema,
  emptyObjectSchema,
  errorResponseSchema,
  hentInnbyggereAktivePiForDefinisjonV2ResponseSchema,
  hentInnbyggersOpplastedeBevisV2RequestSchema,
  hentInnbyggersOpplastedeBevisV2ResponseSchema,
  hentInnbyggersPiV2RequestSchema,
  hentInnbyggersPiV2ResponseSchema,
  hentInnstillingDefinisjonerResponseSchema,
  hentRepresentasjonsforholdResponseSchema,
  partRequestSchema,
  settInkluderingRequestSchema,
  settInkluderingResponseSchema,
  settInnbyggersPersonvernInnstillingV2RequestSchema,
  settInnbyggersPersonvernInnstillingV2ResponseSchema,
  sjekkInnbyggersPiStatusV2RequestSchema,
  sjekkInnbyggersPiStatusV2ResponseSchema,
  updateDefinitionRequestSchema,
} from '@nhp/privacy-contracts';
import type { z } from 'zod';
import {
  clientCredentialsFetch,
  tokenFunctionFetch,
  type AuthorizedFetch,
  type PrivacyClientAuth,
} from './auth';
import { PRIVACY_CLIENT_CODES, PrivacyApiError } from './errors';

/** What a caller sends: the contracts' input types (fields as the interface spells them). */
type In<S extends z.ZodType> = z.input<S>;
/** What privacy-api answers: the contracts' output types. */
type Out<S extends z.ZodType> = z.output<S>;

export type SetSettingRequest = In<typeof settInnbyggersPersonvernInnstillingV2RequestSchema>;
export type SetSettingResponse = Out<typeof settInnbyggersPersonvernInnstillingV2ResponseSchema>;
export type StatusRequest = In<typeof sjekkInnbyggersPiStatusV2RequestSchema>;
export type StatusResponse = Out<typeof sjekkInnbyggersPiStatusV2ResponseSchema>;
export type ForPartRequest = In<typeof hentInnbyggersPiV2RequestSchema>;
export type ForPartResponse = Out<typeof hentInnbyggersPiV2ResponseSchema>;
export type ProofsRequest = In<typeof hentInnbyggersOpplastedeBevisV2RequestSchema>;
export type ProofsResponse = Out<typeof hentInnbyggersOpplastedeBevisV2ResponseSchema>;
export type ActiveCitizensPage = Out<typeof hentInnbyggereAktivePiForDefinisjonV2ResponseSchema>;
export type InclusionRequest = In<typeof settInkluderingRequestSchema>;
export type InclusionResponse = Out<typeof settInkluderingResponseSchema>;
export type PartRequest = In<typeof partRequestSchema>;
export type CreateDefinitionRequest = In<typeof createDefinitionRequestSchema>;
export type UpdateDefinitionRequest = In<typeof updateDefinitionRequestSchema>;
export type DefinitionsResponse = Out<typeof hentInnstillingDefinisjonerResponseSchema>;
export type RepresentationResponse = Out<typeof hentRepresentasjonsforholdResponseSchema>;

export interface ActiveCitizensQuery {
  definisjonGuid: string;
  partKode?: string;
  /** Start from this cursor (default 0: the first page). */
  pagingReference?: number;
}

export interface RetryOptions {
  /** Further attempts after the first. Default 3. */
  retries?: number;
  /** The first pause; each further one doubles, with full jitter. Default 200 ms. */
  minDelayMs?: number;
  /** The longest pause. Default 5000 ms. */
  maxDelayMs?: number;
}

export interface PrivacyClientOptions {
  /** Where privacy-api runs, e.g. http://localhost:3001 (a path prefix, such as a gateway's, is kept). */
  baseUrl: string;
  auth: PrivacyClientAuth;
  /** Validate every answer against the contracts. Default: outside NODE_ENV=production. */
  validateResponses?: boolean;
  retry?: RetryOptions;
  /** Default the global fetch (Node 20+). */
  fetch?: typeof fetch;
  /** Allow http:// for the issuer; default only for a loopback issuer. */
  allowInsecureRequests?: boolean;
  /** Seconds before a request to the issuer gives up. Default openid-client's (30). */
  timeoutSec?: number;
}

interface Call<S extends z.ZodType | undefined> {
  operation: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  path: string;
  query?: Record<string, string | number | undefined>;
  body?: unknown;
  /** The success body's contract (undefined: no body, 204). */
  schema: S;
  /** Safe to send again after no answer or a 5xx: reads, and sets (idempotent by ikkeEndret). */
  retrySafe: boolean;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function summarise(issues: ReadonlyArray<{ path: PropertyKey[]; message: string }>): string {
  return issues
    .slice(0, 3)
    .map((i) => `${i.path.map(String).join('.') || '(body)'}: ${i.message}`)
    .join('; ');
}

/**
 * A typed client of privacy-api. Every operation of the interface (and the definitions listing),
 * typed from the zod contracts; errors as one PrivacyApiError; reads and sets retried with
 * backoff and jitter when privacy-api is unreachable or answers 5xx (never on a 4xx).
 */
export function createPrivacyClient(options: PrivacyClientOptions) {
  const doFetch = options.fetch ?? globalThis.fetch;
  const base = options.baseUrl.replace(/\/+$/, '');
  const validateResponses = options.validateResponses ?? process.env['NODE_ENV'] !== 'production';
  const retries = options.retry?.retries ?? 3;
  const minDelay = options.retry?.minDelayMs ?? 200;
  const maxDelay = options.retry?.maxDelayMs ?? 5000;
  const authorized: AuthorizedFetch =
    'accessToken' in options.auth
      ? tokenFunctionFetch(options.auth, doFetch)
      : clientCredentialsFetch(options.auth, {
          fetch: options.fetch,
          allowInsecureRequests: options.allowInsecureRequests,
          timeoutSec: options.timeoutSec,
        });

  async function once<S extends z.ZodType | undefined>(
    call: Call<S>,
  ): Promise<S extends z.ZodType ? z.output<S> : undefined> {
    const url = new URL(`${base}${call.path}`);
    for (const [name, value] of Object.entries(call.query ?? {})) {
      if (value !== undefined) url.searchParams.set(name, String(value));
    }
    const headers = new Headers({ accept: 'application/json' });
    let body: string | undefined;
    if (call.body !== undefined) {
      headers.set('content-type', 'application/json');
      body = JSON.stringify(call.body);
    }
    let response: Response;
    try {
      response = await authorized.request(url, call.method, body, headers);
    } catch (err) {
      if (err instanceof PrivacyApiError) throw err;
      throw new PrivacyApiError({
        code: PRIVACY_CLIENT_CODES.unreachable,
        errorCategory: 'EndpointIsDown',
        message: `privacy-api at ${base} cannot be reached: ${String((err as { cause?: unknown }).cause ?? (err as Error).message)}`,
        httpStatus: undefined,
        operation: call.operation,
        cause: err,
      });
    }
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const text = await response.text();
    if (response.status >= 400) {
      let parsed: z.output<typeof errorResponseSchema> | undefined;
      try {
        const result = errorResponseSchema.safeParse(JSON.parse(text));
        parsed = result.success ? result.data : undefined;
      } catch {
        parsed = undefined;
      }
      throw PrivacyApiError.fromResponse(call.operation, response.status, parsed, requestId);
    }
    if (call.schema === undefined || response.status === 204) {
      return undefined as S extends z.ZodType ? z.output<S> : undefined;
    }
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw new PrivacyApiError({
        code: PRIVACY_CLIENT_CODES.protocol,
        errorCategory: 'DataMappingError',
        message: `the answer (${response.status}) is not JSON`,
        httpStatus: response.status,
        requestId,
        operation: call.operation,
      });
    }
    if (!validateResponses) return json as S extends z.ZodType ? z.output<S> : undefined;
    const result = (call.schema as z.ZodType).safeParse(json);
    if (!result.success) {
      throw new PrivacyApiError({
        code: PRIVACY_CLIENT_CODES.protocol,
        errorCategory: 'DataMappingError',
        message: `the answer breaks the contract: ${summarise(result.error.issues)}`,
        httpStatus: response.status,
        requestId,
        operation: call.operation,
      });
    }
    return result.data as S extends z.ZodType ? z.output<S> : undefined;
  }

  async function send<S extends z.ZodType | undefined>(
    call: Call<S>,
  ): Promise<S extends z.ZodType ? z.output<S> : undefined> {
    let renewedToken = false;
    for (let attempt = 0; ; attempt++) {
      try {
        return await once(call);
      } catch (err) {
        if (!(err instanceof PrivacyApiError)) throw err;
        // An expired token was not used for anything: get a new one and send again, once.
        if (err.errorCategory === 'SessionExpired' && !renewedToken) {
          renewedToken = true;
          authorized.invalidate();
          continue;
        }
        if (!call.retrySafe || !err.transient || attempt >= retries) throw err;
        const cap = Math.min(maxDelay, minDelay * 2 ** attempt);
        await sleep(Math.random() * cap);
      }
    }
  }

  const SETTINGS = '/personverninnstillinger';

  return {
    /**
     * Sets a citizen's setting. Retried like a read: without `tidspunkt` the client sets it to
     * now before the first attempt, so a retry is an exact repeat (answered `ikkeEndret`).
     */
    settInnbyggersPersonvernInnstilling(body: SetSettingRequest): Promise<SetSettingResponse> {
      const withTime = body.tidspunkt ? body : { ...body, tidspunkt: new Date().toISOString() };
      return send({
        operation: 'settInnbyggersPersonvernInnstilling',
        method: 'POST',
        path: `${SETTINGS}/settinnbyggerspersonverninnstilling/v2`,
        body: withTime,
        schema: settInnbyggersPersonvernInnstillingV2ResponseSchema,
        retrySafe: true,
      });
    },
    sjekkInnbyggersPiStatus(body: StatusRequest): Promise<StatusResponse> {
      return send({
        operation: 'sjekkInnbyggersPiStatus',
        method: 'POST',
        path: `${SETTINGS}/sjekkinnbyggerspistatus/v2`,
        body,
        schema: sjekkInnbyggersPiStatusV2ResponseSchema,
        retrySafe: true,
      });
    },
    hentInnbyggersPiForPart(body: ForPartRequest): Promise<ForPartResponse> {
      return send({
        operation: 'hentInnbyggersPiForPart',
        method: 'POST',
        path: `${SETTINGS}/hentinnbyggerspiforpart/v2`,
        body,
        schema: hentInnbyggersPiV2ResponseSchema,
        retrySafe: true,
      });
    },
    hentInnbyggersOpplastedeBevis(body: ProofsRequest): Promise<ProofsResponse> {
      return send({
        operation: 'hentInnbyggersOpplastedeBevis',
        method: 'POST',
        path: `${SETTINGS}/hentinnbyggersopplastedebevis/v2`,
        body,
        schema: hentInnbyggersOpplastedeBevisV2ResponseSchema,
        retrySafe: true,
      });
    },
    /** One page of the active citizens of a definition. */
    hentInnbyggereAktivePiForDefinisjon(query: ActiveCitizensQuery): Promise<ActiveCitizensPage> {
      return send({
        operation: 'hentInnbyggereAktivePiForDefinisjon',
        method: 'GET',
        path: `${SETTINGS}/hentinnbyggereaktivepifordefinisjon/v2`,
        query: { ...query },
        schema: hentInnbyggereAktivePiForDefinisjonV2ResponseSchema,
        retrySafe: true,
      });
    },
    /** Every page of the active citizens of a definition, first to last (keyset: no entry twice). */
    async *activeCitizens(query: ActiveCitizensQuery): AsyncGenerator<ActiveCitizensPage> {
      let pagingReference = query.pagingReference ?? 0;
      for (;;) {
        const page = await this.hentInnbyggereAktivePiForDefinisjon({ ...query, pagingReference });
        yield page;
        if (page.pagingReference === 0) return;
        pagingReference = page.pagingReference;
      }
    },
    settInnbyggersInkludering(body: InclusionRequest): Promise<InclusionResponse> {
      return send({
        operation: 'settInnbyggersInkludering',
        method: 'POST',
        path: '/settinnbyggersinkludering/v1',
        body,
        schema: settInkluderingResponseSchema,
        retrySafe: false,
      });
    },
    /** The definitions of a party the client may read (an addition to the interface). */
    hentInnstillingDefinisjoner(query: { partKode: string }): Promise<DefinitionsResponse> {
      return send({
        operation: 'hentInnstillingDefinisjoner',
        method: 'GET',
        path: '/innstillingdefinisjon/v1',
        query,
        schema: hentInnstillingDefinisjonerResponseSchema,
        retrySafe: true,
      });
    },
    async opprettInnstillingDefinisjon(body: CreateDefinitionRequest): Promise<void> {
      await send({
        operation: 'opprettInnstillingDefinisjon',
        method: 'POST',
        path: '/innstillingdefinisjon/v1',
        body,
        schema: emptyObjectSchema,
        retrySafe: false,
      });
    },
    async endreInnstillingDefinisjon(body: UpdateDefinitionRequest): Promise<void> {
      await send({
        operation: 'endreInnstillingDefinisjon',
        method: 'PATCH',
        path: '/innstillingdefinisjon/v1',
        body,
        schema: undefined,
        retrySafe: false,
      });
    },
    async opprettPart(body: PartRequest): Promise<void> {
      await send({
        operation: 'opprettPart',
        method: 'POST',
        path: '/part/v1',
        body,
        schema: emptyObjectSchema,
        retrySafe: false,
      });
    },
    async endrePart(body: PartRequest): Promise<void> {
      await send({
        operation: 'endrePart',
        method: 'PUT',
        path: '/part/v1',
        body,
        schema: undefined,
        retrySafe: false,
      });
    },
    /** The calling citizen's representation relationships (a token with `pid`). */
    hentRepresentasjonsforhold(): Promise<RepresentationResponse> {
      return send({
        operation: 'hentRepresentasjonsforhold',
        method: 'GET',
        path: '/representasjonsforhold/v1',
        schema: hentRepresentasjonsforholdResponseSchema,
        retrySafe: true,
      });
    },
    /** The calling citizen's youth-app consent (a token with `pid`). */
    async opprettUngdomsappSamtykke(): Promise<void> {
      await send({
        operation: 'opprettUngdomsappSamtykke',
        method: 'POST',
        path: '/ungdomsapp/v1',
        schema: emptyObjectSchema,
        retrySafe: false,
      });
    },
    async slettUngdomsappSamtykke(): Promise<void> {
      await send({
        operation: 'slettUngdomsappSamtykke',
        method: 'DELETE',
        path: '/ungdomsapp/v1',
        schema: emptyObjectSchema,
        retrySafe: false,
      });
    },
    /** GET /health: true on 200, false on 503 (no token needed). */
    async health(): Promise<boolean> {
      try {
        const response = await doFetch(`${base}/health`);
        return response.status === 200;
      } catch {
        return false;
      }
    },
  };
}

export type PrivacyClient = ReturnType<typeof createPrivacyClient>;
