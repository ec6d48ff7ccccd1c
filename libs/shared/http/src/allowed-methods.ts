/**
 * Which methods would the app's router serve for a path? Used to tell 405 (the path exists for
 * another method, with an Allow header) from 404.
 *
 * The answer comes from the router that dispatched the request, by asking each layer's own
 * matcher. That keeps it true to routing whatever way routes were declared (app.get, app.route()
 * chains, express.Router() mounted under a prefix, path parameters, the app's strict and
 * case-sensitivity settings) and nothing has to be registered twice. The price is reading
 * internals of the `router` package (Express 5's router: `stack`, `layer.match`, `layer.route`,
 * `route.methods`). They are read defensively: anything of an unexpected shape is skipped, which
 * degrades 405 to 404 rather than failing a request, and the tests pin the behaviour so a router
 * upgrade that changes it is caught.
 *
 * Not covered: sub-applications mounted with app.use(prefix, express()) (their router is hidden
 * behind a wrapper function) and regular-expression routes that rely on lookbehind; both answer 404.
 */

interface LayerMatch {
  path: string;
}

interface RouterLayer {
  match?: (path: string) => LayerMatch | false;
  route?: { methods?: Record<string, boolean> };
  handle?: { stack?: unknown };
}

function isLayer(value: unknown): value is RouterLayer {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as RouterLayer).match === 'function'
  );
}

function safeMatch(layer: RouterLayer, path: string): LayerMatch | false {
  try {
    return layer.match?.(path) ?? false;
  } catch {
    // A malformed %-escape in a would-be parameter; routing itself rejects that with a 400.
    return false;
  }
}

function collect(stack: unknown, path: string, into: Set<string>, depth: number): void {
  if (!Array.isArray(stack) || depth > 16) return;
  for (const layer of stack) {
    if (!isLayer(layer)) continue;
    const match = safeMatch(layer, path);
    if (!match) continue;
    if (layer.route) {
      for (const [method, enabled] of Object.entries(layer.route.methods ?? {})) {
        // `_all` (app.all) serves every method, so such a path never reaches the 404 handler.
        if (enabled && method !== '_all') into.add(method.toUpperCase());
      }
    } else if (layer.handle && Array.isArray(layer.handle.stack)) {
      // A mounted router: it sees the path with the mount prefix removed, as routing does.
      const rest = path.slice(match.path.length);
      collect(layer.handle.stack, rest.startsWith('/') ? rest : `/${rest}`, into, depth + 1);
    }
  }
}

/** Methods the router would serve for `path`, in a stable order; HEAD is implied by GET as in Express. */
export function allowedMethods(router: unknown, path: string): string[] {
  const methods = new Set<string>();
  collect((router as { stack?: unknown } | undefined)?.stack, path, methods, 0);
  if (methods.has('GET')) methods.add('HEAD');
  return [...methods].sort();
}

function findTemplate(
  stack: unknown,
  path: string,
  prefix: string,
  depth: number,
): string | undefined {
  if (!Array.isArray(stack) || depth > 16) return undefined;
  for (const layer of stack) {
    if (!isLayer(layer)) continue;
    const match = safeMatch(layer, path);
    if (!match) continue;
    const routePath = (layer.route as { path?: unknown } | undefined)?.path;
    if (layer.route) {
      if (typeof routePath === 'string')
        return `${prefix}${routePath === '/' && prefix ? '' : routePath}`;
      continue;
    }
    if (layer.handle && Array.isArray(layer.handle.stack)) {
      // Only a mount without parameters names its own template (the matched text is it); a
      // parameter's value is the client's, never a label.
      const params = (match as { params?: Record<string, unknown> }).params ?? {};
      if (Object.keys(params).length > 0) continue;
      const mount = match.path === '/' ? '' : match.path;
      const rest = path.slice(match.path.length);
      const found = findTemplate(
        layer.handle.stack,
        rest.startsWith('/') ? rest : `/${rest}`,
        `${prefix}${mount}`,
        depth + 1,
      );
      if (found !== undefined) return found;
    }
  }
  return undefined;
}

/**
 * The template of the first route whose path matches `path` (any method), as mounted, or
 * undefined: the request metrics' label of a request answered before routing reached its route
 * (a 401 from authentication, a 405). Read like `allowedMethods`, from the router's own matchers.
 */
export function routeTemplate(router: unknown, path: string): string | undefined {
  return findTemplate((router as { stack?: unknown } | undefined)?.stack, path, '', 0);
}
