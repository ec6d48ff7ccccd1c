import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
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
import { rootSampling, tracingEnabled } from './start';

export const TRACER_NAME = '@nhp/shared-tracing';

const ROUTE = Symbol('http.route');
const REQUEST_CONTEXT = Symbol('otel.requestContext');
type Routed = IncomingMessage & {
  [ROUTE]?: string;
  [REQUEST_CONTEXT]?: Context;
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
  // Off, the request object is left as it is (a new property on every request costs).
  if (tracingEnabled()) (req as Routed)[ROUTE] = route;
}

function routeOf(req: Routed): string | undefined {
  if (req[ROUTE]) return req[ROUTE];
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
  return (req: IncomingMessage, res: ServerResponse) => {
    const parent = propagation.extract(ROOT_CONTEXT, req.headers);
    const method = KNOWN_METHODS.has(req.method ?? '') ? (req.method as string) : '_OTHER';
    const attributes = {
      [ATTR_HTTP_REQUEST_METHOD]: method,
      [ATTR_URL_SCHEME]: (req.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http',
      [ATTR_NETWORK_PROTOCOL_VERSION]: req.httpVersion,
    };
    const callerTrace = trace.getSpanContext(parent);
    const roots = callerTrace === undefined ? rootSampling() : undefined;
    // A request that continues no caller's trace has its sampling decided before the tracer
    // (RootSampling): an unsampled one then costs a decision and two ids.
    const span = roots
      ? roots.startRootSpan(tracer, method, SpanKind.SERVER, attributes, parent)
      : tracer.startSpan(method, { kind: SpanKind.SERVER, attributes }, parent);
    // An unsampled request's span records nothing (setting its attributes and ending it are
    // no-ops), so it needs no listener on the response: that listener was a measurable share of
    // what tracing cost an unsampled request (tools/bench/README.md, privacy-api). Its context is
    // still entered, so that its children (MongoDB commands, a journal entry's traceparent, log
    // lines' trace_id) carry the caller's trace and the decision not to sample it.
    const recording = span.isRecording();
    if (recording) endWithResponse(span, method, req, res);
    const requestContext = trace.setSpan(parent, span);
    (req as Routed)[REQUEST_CONTEXT] = requestContext;
    // A request that is not sampled and continues no caller's trace records nothing here, and its
    // trace is known to no one else: it is not entered yet, so that its promises carry no context,
    // which was most of what tracing cost such a request (a status check on the fast path; see
    // tools/bench/README.md). A step that may log, write or publish enters it (inRequestContext:
    // shared-http's app does before its routes and its error handler), so that log lines, stored
    // changes and events still carry the trace and the decision not to sample it.
    if (recording || callerTrace !== undefined) {
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
  const requestContext = (req as Routed)[REQUEST_CONTEXT];
  if (requestContext === undefined || requestContext === context.active()) next();
  else context.with(requestContext, next);
}

/** Ends a request's span when its response closes, with the route and status it got. */
function endWithResponse(span: Span, method: string, req: IncomingMessage, res: ServerResponse) {
  res.once('close', () => {
    const route = routeOf(req as Routed);
    const status = res.statusCode;
    if (route) {
      span.setAttribute(ATTR_HTTP_ROUTE, route);
      span.updateName(`${method} ${route}`);
    }
    span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
    const requestId = res.getHeader('x-request-id');
    if (typeof requestId === 'string') {
      span.setAttribute('http.response.header.x-request-id', [requestId]);
    }
    if (status >= 500) {
      span.setAttribute(ATTR_ERROR_TYPE, String(status));
      span.setStatus({ code: SpanStatusCode.ERROR });
    } else if (!res.writableFinished) {
      // The client went away before the response was complete.
      span.setAttribute(ATTR_ERROR_TYPE, 'aborted');
      span.setStatus({ code: SpanStatusCode.ERROR });
    }
    span.end();
  });
}
