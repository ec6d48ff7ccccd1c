import { METHODS } from 'node:http';
import type { Express, Request, RequestHandler } from 'express';
import { registerScraped, type AppMetrics, type ScrapedSample } from './app-metrics';

/** The route label of a request no route took (404, 405, refusals before routing). */
export const UNMATCHED_ROUTE = 'unmatched';

/**
 * Upper bounds (seconds) of the request duration histogram: from half a millisecond (a cached
 * read or a status check answered by a fast path) to ten seconds.
 */
export const HTTP_DURATION_BUCKETS: readonly number[] = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

const STATUS_CLASSES = ['1xx', '2xx', '3xx', '4xx', '5xx'] as const;
/** Node's HTTP parser accepts only these; anything else is one label, never the client's word. */
const KNOWN_METHODS = new Set(METHODS);

/** One series (route, method, status class): a count, a sum and per-bucket counts. */
class Series {
  count = 0;
  sum = 0;
  /** Observations per bucket (not cumulative); those above the last bound only in `count`. */
  readonly buckets: Float64Array;

  constructor(
    readonly method: string,
    readonly statusClass: string,
    bounds: number,
  ) {
    this.buckets = new Float64Array(bounds);
  }
}

/**
 * The request figures of one route label. A fast path keeps the one of its route and calls
 * `record` for each answer it sends; Express's answers are recorded by the middleware. Both land
 * in the same series, so a request is counted once, whichever path answered it.
 */
export class RouteMetrics {
  /** Per method: the series per status class (index 0 = 1xx). */
  private readonly byMethod = new Map<string, Array<Series | undefined>>();

  constructor(
    readonly route: string,
    private readonly bounds: readonly number[],
  ) {}

  /** Counts one answered request: its method, its status and how long it took (seconds). */
  record(method: string, status: number, seconds: number): void {
    let classes = this.byMethod.get(method);
    if (!classes) {
      const label = KNOWN_METHODS.has(method) ? method : 'other';
      classes = this.byMethod.get(label);
      if (!classes) {
        classes = [undefined, undefined, undefined, undefined, undefined];
        this.byMethod.set(label, classes);
      }
      method = label;
    }
    const index = Math.min(4, Math.max(0, Math.floor(status / 100) - 1));
    let series = classes[index];
    if (!series) {
      series = new Series(method, STATUS_CLASSES[index] as string, this.bounds.length);
      classes[index] = series;
    }
    series.count += 1;
    series.sum += seconds;
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (seconds <= (bounds[i] as number)) {
        (series.buckets[i] as number) += 1;
        break;
      }
    }
  }

  /** @internal every series, for the scrape. */
  *series(): IterableIterator<Series> {
    for (const classes of this.byMethod.values()) {
      for (const series of classes) if (series) yield series;
    }
  }
}

const TEMPLATE = Symbol('shared-metrics.routeTemplate');
const ROUTE = Symbol('shared-metrics.route');
type TemplatedRequest = Request & { [TEMPLATE]?: string; [ROUTE]?: unknown };

/** The route template as mounted: the router's mount path and the route's own path. */
function templateOf(baseUrl: string, path: unknown): string {
  const own = typeof path === 'string' ? path : String(path);
  if (baseUrl === '' || baseUrl === '/') return own;
  return own === '/' ? baseUrl : `${baseUrl}${own}`;
}

/**
 * `<app>_http_requests_total{method,route,status_class}` and
 * `<app>_http_request_duration_seconds{method,route,status_class}` (a histogram). `route` is the
 * Express route template as mounted (`/api/v1/treatmentGroup`, `/base/path/:id`), or
 * `unmatched`: never the URL a client sent, so a client cannot grow the series and no identity
 * number in a path reaches a label.
 *
 * Requests are counted in plain numbers and turned into Prometheus samples when scraped.
 */
export class HttpMetrics {
  readonly registry: AppMetrics['registry'];
  private readonly routes = new Map<string, RouteMetrics>();
  private readonly bounds: readonly number[];
  private templateOfUnrouted: ((req: Request) => string | undefined) | undefined;

  constructor(metrics: AppMetrics, options: { buckets?: readonly number[] } = {}) {
    this.registry = metrics.registry;
    this.bounds = [...(options.buckets ?? HTTP_DURATION_BUCKETS)].sort((a, b) => a - b);
    const labels = (route: RouteMetrics, series: Series) => ({
      method: series.method,
      route: route.route,
      status_class: series.statusClass,
    });
    registerScraped(this.registry, {
      name: metrics.name('http_requests_total'),
      help: 'HTTP requests answered, by method, route template (or "unmatched") and status class.',
      type: 'counter',
      samples: () => {
        const samples: ScrapedSample[] = [];
        for (const route of this.routes.values()) {
          for (const series of route.series()) {
            samples.push({ labels: labels(route, series), value: series.count });
          }
        }
        return samples;
      },
    });
    const name = metrics.name('http_request_duration_seconds');
    registerScraped(this.registry, {
      name,
      help: 'Time from receiving an HTTP request to handing its answer to Node, by method, route template and status class.',
      type: 'histogram',
      samples: () => {
        const samples: ScrapedSample[] = [];
        for (const route of this.routes.values()) {
          for (const series of route.series()) {
            const base = labels(route, series);
            let cumulative = 0;
            this.bounds.forEach((bound, i) => {
              cumulative += series.buckets[i] as number;
              samples.push({
                metricName: `${name}_bucket`,
                labels: { ...base, le: bound },
                value: cumulative,
              });
            });
            samples.push(
              {
                metricName: `${name}_bucket`,
                labels: { ...base, le: '+Inf' },
                value: series.count,
              },
              { metricName: `${name}_sum`, labels: base, value: series.sum },
              { metricName: `${name}_count`, labels: base, value: series.count },
            );
          }
        }
        return samples;
      },
    });
  }

  /** The figures of one route label (created on first use); fast paths keep theirs. */
  route(template: string): RouteMetrics {
    let route = this.routes.get(template);
    if (!route) {
      route = new RouteMetrics(template, this.bounds);
      this.routes.set(template, route);
    }
    return route;
  }

  /**
   * Prepares an Express app: its requests remember the template of the route that matched them,
   * as mounted. Express sets `req.route` when a route matches, while `req.baseUrl` is still the
   * mount path of the router that holds it; by the time an error reaches the app's error handler
   * the router has restored `req.baseUrl`, so it is read at the match. (`app.request` is the
   * prototype Express gives every request of the app.) A request no route ran for is labelled
   * by `templateOfUnrouted` (the route its path would match, if any), else `unmatched`.
   */
  instrument(app: Express, templateOfUnrouted?: (req: Request) => string | undefined): void {
    this.templateOfUnrouted = templateOfUnrouted;
    Object.defineProperty(app.request, 'route', {
      configurable: true,
      enumerable: true,
      get(this: TemplatedRequest) {
        return this[ROUTE];
      },
      set(this: TemplatedRequest, route: { path?: unknown } | undefined) {
        this[ROUTE] = route;
        this[TEMPLATE] = route ? templateOf(this.baseUrl ?? '', route.path) : undefined;
      },
    });
  }

  private unroutedTemplate(req: Request): string | undefined {
    try {
      return this.templateOfUnrouted?.(req);
    } catch {
      return undefined;
    }
  }

  /** Express middleware, mounted first: records every request when its answer is sent. */
  readonly middleware: RequestHandler = (req, res, next) => {
    const start = performance.now();
    res.once('finish', () => {
      const template =
        (req as TemplatedRequest)[TEMPLATE] ?? this.unroutedTemplate(req) ?? UNMATCHED_ROUTE;
      this.route(template).record(req.method, res.statusCode, (performance.now() - start) / 1000);
    });
    next();
  };
}
