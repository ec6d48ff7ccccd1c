/**
 * Every route the app serves, but the public ones, must refuse a request without a valid access
 * token. The routes are read from the app's router itself (as shared-http's allowedMethods does),
 * not listed by hand, so a route added tomorrow is covered by this test without anyone touching it.
 */
import type { Express } from 'express';
import request from 'supertest';
import { createPrivacyAuth } from '@nhp/privacy-auth';
import { createTestIssuer, type MintOptions } from '@nhp/privacy-testing';
import { createHttpApp } from '@nhp/shared-http';
import { createLogger } from '@nhp/shared-logger';
import { PUBLIC_ROUTES } from '../src/app';
import { privacyErrorFormatter } from '../src/http/error-response';
import { usePrivacyHarness } from './support/harness';
import { concrete, listRoutes, type RouteEntry } from './support/routes';

const BASE_PATH = '/personvern';
const PID = '13116900216';

const isPublic = (route: RouteEntry) =>
  PUBLIC_ROUTES.some(
    (p) =>
      p.method === route.method &&
      (route.path.toLowerCase() === p.path.toLowerCase() ||
        route.path.toLowerCase() === `${BASE_PATH}${p.path}`.toLowerCase()),
  );

describe('every route but the public ones requires a valid access token', () => {
  const h = usePrivacyHarness({ options: { basePath: BASE_PATH } });
  let protectedRoutes: RouteEntry[];

  beforeAll(() => {
    const app: Express = h.get().app;
    const all = listRoutes((app as unknown as { router: { stack: unknown } }).router.stack);
    const seen = new Set<string>();
    protectedRoutes = all.filter((route) => {
      const key = `${route.method} ${route.path.toLowerCase()}`;
      if (seen.has(key) || isPublic(route)) return false;
      seen.add(key);
      return true;
    });
  });

  async function totalDocuments(): Promise<number> {
    // Relays of earlier writes (the harness's seeds) finish first: they move audit records.
    await h.get().context.journal.idle();
    const db = h.get().connection.db;
    if (!db) throw new Error('no database');
    const collections = await db.listCollections({}, { nameOnly: true }).toArray();
    let total = 0;
    for (const { name } of collections) total += await db.collection(name).countDocuments();
    return total;
  }

  function send(route: RouteEntry, authorization: string | undefined, app: Express = h.get().app) {
    const path = concrete(route.path);
    const method = route.method.toLowerCase() as 'get' | 'post' | 'put' | 'patch' | 'delete';
    let req = request(app)[method](path);
    if (authorization !== undefined) req = req.set('Authorization', authorization);
    return method === 'get' || method === 'delete' ? req : req.send({});
  }

  /** Sends the credentials to every protected route; returns one line per route that let it pass. */
  async function sweep(
    authorization: () => Promise<string | undefined>,
    expectedCategory: 'ClientValidationError' | 'SessionExpired',
    target: { app: Express; routes: RouteEntry[] } = { app: h.get().app, routes: protectedRoutes },
  ): Promise<string[]> {
    const failures: string[] = [];
    for (const route of target.routes) {
      const res = await send(route, await authorization(), target.app);
      const ok =
        res.status === 401 &&
        res.body?.code === 'EPVK-100401' &&
        res.body?.errorCategory === expectedCategory &&
        typeof res.body?.message === 'string' &&
        typeof res.headers['www-authenticate'] === 'string';
      if (!ok) {
        failures.push(`${route.method} ${route.path}: ${res.status} ${JSON.stringify(res.body)}`);
      }
    }
    return failures;
  }

  /** A token that would pass every route's scope and citizen check, had it been valid. */
  const strongClaims: MintOptions = { scopes: ['admin'], pid: PID, clientId: 'coverage-client' };

  it('when the routes are read from the router, then the interface operations are among them, at the root and under the base path', () => {
    const paths = new Set(protectedRoutes.map((r) => `${r.method} ${r.path.toLowerCase()}`));
    for (const op of ['POST /part/v1', 'PUT /part/v1', 'POST /innstillingdefinisjon/v1']) {
      const [method, path] = op.split(' ');
      expect(paths).toContain(`${method} ${path}`);
      expect(paths).toContain(`${method} ${BASE_PATH}${path}`);
    }
    expect(protectedRoutes.some((r) => r.path.toLowerCase() === '/health')).toBe(false);
  });

  it('when no token comes, then every protected route answers 401 EPVK-100401 and nothing is written', async () => {
    const before = await totalDocuments();
    expect(await sweep(async () => undefined, 'ClientValidationError')).toEqual([]);
    expect(await totalDocuments()).toBe(before);
  });

  it('when the token is malformed, then every protected route answers 401', async () => {
    const before = await totalDocuments();
    expect(await sweep(async () => 'Bearer not.a.jwt', 'ClientValidationError')).toEqual([]);
    expect(await sweep(async () => 'Basic dXNlcjpwYXNz', 'ClientValidationError')).toEqual([]);
    expect(await totalDocuments()).toBe(before);
  });

  it('when the token has expired, then every protected route answers 401 SessionExpired', async () => {
    const before = await totalDocuments();
    const iat = Math.floor(Date.now() / 1000) - 3600;
    const expired = () => h.get().issuer.bearer({ ...strongClaims, iat, expiresInSec: 600 });
    expect(await sweep(expired, 'SessionExpired')).toEqual([]);
    expect(await totalDocuments()).toBe(before);
  });

  it('when the token is signed by another key under the same key id, then every protected route answers 401', async () => {
    const before = await totalDocuments();
    const { issuer } = h.get();
    const impostor = await createTestIssuer({
      issuer: issuer.issuer,
      audience: issuer.audience,
      kid: issuer.kid,
    });
    expect(await sweep(() => impostor.bearer(strongClaims), 'ClientValidationError')).toEqual([]);
    expect(await totalDocuments()).toBe(before);
  });

  it('when the token is for another audience, then every protected route answers 401', async () => {
    const before = await totalDocuments();
    const wrongAudience = () =>
      h.get().issuer.bearer({ ...strongClaims, audience: 'someone-else' });
    expect(await sweep(wrongAudience, 'ClientValidationError')).toEqual([]);
    expect(await totalDocuments()).toBe(before);
  });

  it("when the same claims come in a valid token, then no protected route answers 401 (the refusals above are the token's doing)", async () => {
    const failures: string[] = [];
    for (const route of protectedRoutes) {
      const res = await send(route, await h.get().issuer.bearer(strongClaims));
      if (res.status === 401)
        failures.push(`${route.method} ${route.path}: ${JSON.stringify(res.body)}`);
    }
    expect(failures).toEqual([]);
  });

  it('when a route is mounted before authenticate, then this sweep reports it (the test can fail)', async () => {
    const { issuer } = h.get();
    const auth = createPrivacyAuth(issuer.authOptions());
    const leaky = createHttpApp({
      logger: createLogger({ name: 'auth-coverage', level: 'silent' }),
      errorFormatter: privacyErrorFormatter,
      routes(app) {
        app.post('/forgot-auth/v1', (_req, res) => {
          res.json({});
        });
        app.use(auth.authenticate);
        app.post('/guarded/v1', (_req, res) => {
          res.json({});
        });
      },
    });
    const routes = listRoutes((leaky as unknown as { router: { stack: unknown } }).router.stack);
    expect(routes.map((r) => `${r.method} ${r.path}`)).toEqual([
      'POST /forgot-auth/v1',
      'POST /guarded/v1',
    ]);
    const failures = await sweep(async () => undefined, 'ClientValidationError', {
      app: leaky,
      routes,
    });
    expect(failures).toHaveLength(1);
    expect(failures[0]).toMatch(/^POST \/forgot-auth\/v1: 200/);
  });
});
