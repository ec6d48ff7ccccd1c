/**
 * What the status fast path found for a request it then handed to Express: the use case's error,
 * so that the route answers it without running the use case a second time. A second run would
 * answer the same for a refusal, and during a database outage it would wait out the driver's
 * server selection again, doubling the time before the 503 (issue 18: answer within about a
 * second once the database is known to be down).
 */
const failures = new WeakMap<object, { error: unknown }>();

/** The fast path: the use case threw `error` for `req`, which now goes to Express. */
export function rememberUseCaseFailure(req: object, error: unknown): void {
  failures.set(req, { error });
}

/** The route: the fast path's failure for `req`, once (undefined when there was none). */
export function takeUseCaseFailure(req: object): { error: unknown } | undefined {
  const failure = failures.get(req);
  if (failure) failures.delete(req);
  return failure;
}
