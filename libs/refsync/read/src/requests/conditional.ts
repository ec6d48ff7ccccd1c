/**
 * If-None-Match by RFC 9110 section 13.1.2: `*` matches any current representation; otherwise a
 * comma-separated list of entity tags compared weakly (a `W/` prefix is ignored). Hand-written
 * because the `fresh` package also treats a request `Cache-Control: no-cache` as "never fresh",
 * which is not what If-None-Match means, and this runs on the hot path.
 */
export function ifNoneMatchMatches(header: string, etag: string): boolean {
  if (header === etag) return true;
  const trimmed = header.trim();
  if (trimmed === '*') return true;
  for (const part of trimmed.split(',')) {
    let tag = part.trim();
    if (tag.startsWith('W/')) tag = tag.slice(2);
    if (tag === etag) return true;
  }
  return false;
}
