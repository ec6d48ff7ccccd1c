/**
 * The routes an Express app serves, read from its router (as shared-http's allowedMethods does),
 * so a sweep over them covers a route added tomorrow without anyone touching the test.
 */

export interface RouteEntry {
  method: string;
  path: string;
}

interface RouterLayer {
  rawPath?: unknown;
  route?: { path?: unknown; methods?: Record<string, boolean> };
  handle?: { stack?: unknown };
}

/**
 * The (method, path) pairs an Express 5 router serves, mounted routers included. Reads the
 * `router` package's internals (`stack`, `layer.route`, `layer.rawPath`); a shape it does not know
 * throws, so a router upgrade cannot make this test quietly check nothing.
 */
export function listRoutes(stack: unknown, prefix = '', depth = 0): RouteEntry[] {
  if (!Array.isArray(stack)) throw new Error('listRoutes: a router without a stack array');
  if (depth > 16) throw new Error('listRoutes: routers nested deeper than 16');
  const routes: RouteEntry[] = [];
  for (const layer of stack as RouterLayer[]) {
    if (layer.route) {
      const paths = Array.isArray(layer.route.path) ? layer.route.path : [layer.route.path];
      for (const path of paths) {
        if (typeof path !== 'string') {
          throw new Error(`listRoutes: a route path that is not a string under ${prefix || '/'}`);
        }
        for (const [method, enabled] of Object.entries(layer.route.methods ?? {})) {
          if (!enabled) continue;
          // app.all serves every method; GET stands for it.
          routes.push({
            method: method === '_all' ? 'GET' : method.toUpperCase(),
            path: prefix + path,
          });
        }
      }
    } else if (Array.isArray(layer.handle?.stack)) {
      if (typeof layer.rawPath !== 'string') {
        throw new Error(`listRoutes: a router mounted on a non-string path under ${prefix || '/'}`);
      }
      const mount = layer.rawPath === '/' ? '' : layer.rawPath;
      routes.push(...listRoutes(layer.handle.stack, prefix + mount, depth + 1));
    }
  }
  return routes;
}

/** A concrete path for a route pattern (path parameters filled in). */
export const concrete = (path: string) => path.replace(/:(\w+)/g, 'x').replace(/\{\*\w+\}/g, 'x');

const BODY_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Every route of the app that takes a body (POST, PUT, PATCH, DELETE), each spelling once. */
export function bodyRoutes(app: unknown): RouteEntry[] {
  const seen = new Set<string>();
  return listRoutes((app as { router: { stack: unknown } }).router.stack).filter((route) => {
    const key = `${route.method} ${route.path.toLowerCase()}`;
    if (!BODY_METHODS.has(route.method) || seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
