/**
 * The raw value of one query parameter as parseSinceVersion expects it: undefined when absent, the
 * string when given once, every value when given more than once (which it rejects). Parsed from
 * the request URL in both the fast path and the Express route, so they cannot disagree.
 */
export function queryParam(url: string, name: string): string | string[] | undefined {
  const q = url.indexOf('?');
  if (q < 0) return undefined;
  const values = new URLSearchParams(url.slice(q + 1)).getAll(name);
  if (values.length === 0) return undefined;
  return values.length === 1 ? values[0] : values;
}

/** The path without the query string. */
export function pathOf(url: string): string {
  const q = url.indexOf('?');
  return q < 0 ? url : url.slice(0, q);
}
