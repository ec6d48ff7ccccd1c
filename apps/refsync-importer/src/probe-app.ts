import { createHash, timingSafeEqual } from 'node:crypto';
import type { Express, Request } from 'express';
import type { LeaseRepository, RunRepository } from '@nhp/refsync-data-access';
import {
  createHealth,
  healthRouter,
  type HealthCheck,
  type HealthCheckSpec,
} from '@nhp/shared-health';
import { problemDetailsFormatter } from '@nhp/refsync-http';
import { createHttpApp } from '@nhp/shared-http';
import { conflict, notFound, unauthorized } from '@nhp/shared-errors';
import type { Logger } from '@nhp/shared-logger';
import {
  refsyncAsyncApiDocument,
  type Importer,
  type ImporterMetrics,
  type RunReport,
} from '@nhp/refsync-import';

export interface ProbeAppOptions {
  logger: Logger;
  importer: Pick<Importer, 'begin'>;
  leases: Pick<LeaseRepository, 'current'>;
  runs: Pick<RunRepository, 'get'>;
  /** This process's lease holder id. */
  instance: string;
  metrics: ImporterMetrics;
  adminToken: string;
  checks: Record<string, HealthCheck | HealthCheckSpec>;
}

/** SHA-256 first, so the constant-time comparison always sees equal lengths. */
const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

function bearerToken(req: Request): string | undefined {
  const header = req.get('authorization');
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match?.[1];
}

/** What POST /sync?wait=true answers: the run's report without the (possibly huge) change lists. */
function reportBody(report: RunReport) {
  const { changes: _changes, heldBy: _heldBy, ...rest } = report;
  return rest;
}

/**
 * The importer's small HTTP server: health probes, Prometheus metrics, and POST /sync for
 * operators (and the demo) to run a synchronisation now.
 */
export function createProbeApp(options: ProbeAppOptions) {
  const health = createHealth({ checks: options.checks, logger: options.logger });
  options.metrics.watchReadiness(async () => (await health.readiness()).ready);
  const expected = digest(options.adminToken);
  const asyncApiBytes = Buffer.from(JSON.stringify(refsyncAsyncApiDocument()), 'utf8');

  const requireAdmin = (req: Request): void => {
    const token = bearerToken(req);
    if (token === undefined || !timingSafeEqual(digest(token), expected)) {
      throw unauthorized(
        'UNAUTHORIZED',
        '/sync needs the admin token as "Authorization: Bearer <token>"',
        undefined,
        {
          headers: { 'WWW-Authenticate': 'Bearer realm="refsync-importer"' },
        },
      );
    }
  };

  const app: Express = createHttpApp({
    logger: options.logger,
    errorFormatter: problemDetailsFormatter,
    health: healthRouter(health, { probes: true }),
    quietPaths: ['/health', '/livez', '/readyz', '/metrics'],
    // Requests counted by route template, and GET /metrics (no token: figures, no data).
    metrics: options.metrics.http,
    routes: (router) => {
      // The events' contract (AsyncAPI 3), without a token as the probes: schemas, no data.
      router.get('/asyncapi.json', (_req, res) => {
        res.type('application/json').send(asyncApiBytes);
      });

      router.get('/sync/:runId', async (req, res) => {
        requireAdmin(req);
        const run = await options.runs.get(String(req.params['runId']));
        if (!run) throw notFound('RUN_NOT_FOUND', `no importer run ${req.params['runId']}`);
        res.json(run);
      });

      router.post('/sync', async (req, res) => {
        requireAdmin(req);
        const wait = req.query['wait'] === 'true';
        const allowMassDelete = req.query['allowMassDelete'] === 'true';
        // Another instance syncing is visible through the lease: answer 409 now instead of
        // starting a run that can only skip.
        const lease = await options.leases.current();
        if (lease && lease.holder !== options.instance && lease.expiresAt > new Date()) {
          throw conflict(
            'SYNC_IN_PROGRESS',
            `another importer instance is syncing (lease held until ${lease.expiresAt.toISOString()})`,
          );
        }
        const started = options.importer.begin({ trigger: 'http', allowMassDelete });
        if ('busy' in started) {
          throw conflict(
            'SYNC_IN_PROGRESS',
            `run ${started.busy} is in progress; try again when it has finished`,
            {
              runId: started.busy,
            },
          );
        }
        if (!wait) {
          started.done.catch(() => undefined);
          res
            .status(202)
            .location(`/sync/${started.runId}`)
            .json({ runId: started.runId, status: 'started' });
          return;
        }
        const report = await started.done;
        if (report.outcome === 'skipped') {
          throw conflict(
            'SYNC_IN_PROGRESS',
            report.error?.message ?? 'another run is in progress',
            { runId: report.runId },
          );
        }
        res.status(200).json(reportBody(report));
      });
    },
  });
  return { app, health };
}
