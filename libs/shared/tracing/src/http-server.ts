import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Span,
} from '@opentelemetry/api';
import {
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_NETWORK_PROTOCOL_VERSION,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import { TRACER_NAME } from './start';

export { TRACER_NAME } from './start';

const REQUEST_TRACE = Symbol('otel.request');

/** Read once: the API's exports are re-export getters, which a bundle calls at each use. */
const ROOT: Context = ROOT_CONTEXT;

/**
 * What the wrapper keeps of a request, in one property (so every traced request has the same
 * shape): its context, and the route a fast path named.
 */
interface RequestTrace {
  /** The request's context: its span, in its caller's trace or a new one. */
  context: Context;
  route: string | undefined;
}
type Traced = IncomingMessage & {
  [REQUEST_TRACE]?: RequestTrace;
  // What Express leaves on a request it routed.
  route?: { path?: unknown };
  baseUrl?: string;
};

/**
 * Names the route template a request matched (`/api/v1/treatmentGroup`), for a request answered
 * outside Express's router (a fast path). Express's own routes need nothing: the matched route is
 * read from the request when the response ends.
 */
export function setHttpRoute(req: IncomingMessage, route: string): void {
  // Off, nothing is kept (the request was not wrapped).
  const state = (req as Traced)[REQUEST_TRACE];
  if (state) state.route = route;
}

function routeOf(req: Traced): string | undefined {
  const named = req[REQUEST_TRACE]?.route;
  if (named) return named;
  const path = req.route?.path;
  return typeof path === 'string' ? `${req.baseUrl ?? ''}${path}` : undefined;
}

const KNOWN_METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/**
 * A SERVER span around every request the listener answers, continuing the caller's trace
 * (`traceparent`/`tracestate`, or whatever OTEL_PROPAGATORS names). Its attributes are an
 * allow-list: method, route template, status, scheme, protocol version and the request id, never
 * the URL (a query or a path may carry an identity number), a header with credentials or a body.
 * Wrap the listener only when tracing is on (see tracingEnabled): off, nothing is wrapped.
 */
export function traceHttpRequests(listener: RequestListener): RequestListener {
  const tracer = trace.getTracer(TRACER_NAME);
  // The headers the configured propagators read (traceparent, tracestate, baggage by default): a
  // request with none of them continues no trace and carries no baggage, so extracting from it
  // would give back the root context. Most requests carry none; asking is then three lookups.
  // A propagator that names no fields (none registered yet) is always asked.
  const fields = propagation.fields().map((field) => field.toLowerCase());
  const carriesContext =
    fields.length === 0
      ? () => true
      : (headers: IncomingMessage['headers']) => fields.some((f) => headers[f] !== undefined);
  return (req: IncomingMessage, res: ServerResponse) => {
    const parent = carriesContext(req.headers) ? propagation.extract(ROOT, req.headers) : ROOT;
    const method = KNOWN_METHODS.has(req.method ?? '') ? (req.method as string) : '_OTHER';
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_SCHEME]: (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
          [ATTR_NETWORK_PROTOCOL_VERSION]: req.httpVersion,
        },
      },
      parent,
    );
    const requestContext = trace.setSpan(parent, span);
    const state: RequestTrace = { context: requestContext, route: undefined };
    (req as Traced)[REQUEST_TRACE] = state;
    // An unsampled request's span records nothing (setting its attributes and ending it are
    // no-ops), so it needs no listener on its response.
    const recording = span.isRecording();
    if (recording) endWithResponse(span, method, req, res);
    // Entered when it records or continues a caller's trace. An unsampled request that continues
    // no one's trace is entered only where a step needs it (inRequestContext: shared-http's app
    // does before its routes and its error handler, so log lines, stored changes and events still
    // carry its trace and the decision not to sample it); a fast path in front of the routes that
    // logs, writes and publishes nothing does not carry the context through its promises.
    if (recording || (parent !== ROOT && trace.getSpanContext(parent) !== undefined)) {
      context.with(requestContext, () => listener(req, res));
    } else {
      listener(req, res);
    }
  };
}

/**
 * Runs `next` in the context of the request's span (traceHttpRequests), entered again or for the
 * first time: for the step after one that calls back from outside the request's promises
 * (body-parser calls back from the stream's events, the large-body gate from another request's
 * end), and for an unsampled request that traceHttpRequests left unentered. Without tracing, or
 * already in it, `next` simply runs.
 */
export function inRequestContext(req: IncomingMessage, next: () => void): void {
  const requestContext = (req as Traced)[REQUEST_TRACE]?.context;
  if (requestContext === undefined || requestContext === context.active()) next();
  else context.with(requestContext, next);
}

/** What a request's span gets when its response closes: its name, route, status, request id. */
function responseEnd(
  method: string,
  req: IncomingMessage,
  res: ServerResponse,
): { name: string; attributes: Attributes; error: string | undefined } {
  const route = routeOf(req as Traced);
  const status = res.statusCode;
  const attributes: Attributes = { [ATTR_HTTP_RESPONSE_STATUS_CODE]: status };
  if (route) attributes[ATTR_HTTP_ROUTE] = route;
  const requestId = res.getHeader('x-request-id');
  if (typeof requestId === 'string') {
    attributes['http.response.header.x-request-id'] = [requestId];
  }
  // A server error, or a client that went away before the response was complete.
  const error = status >= 500 ? String(status) : !res.writableFinished ? 'aborted' : undefined;
  return { name: route ? `${method} ${route}` : method, attributes, error };
}

/** Ends a request's span when its response closes, with the route and status it got. */
function endWithResponse(span: Span, method: string, req: IncomingMessage, res: ServerResponse) {
  res.once('close', () => {
    const end = responseEnd(method, req, res);
    span.updateName(end.name);
    span.setAttributes(end.attributes);
    if (end.error !== undefined) {
      span.setAttribute(ATTR_ERROR_TYPE, end.error);
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
}
