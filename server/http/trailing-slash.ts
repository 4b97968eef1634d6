/**
 * A path with a trailing slash is redirected (308, method and body kept) to the path without it,
 * keeping the query string (docs/api.md#errors). Paths that would become protocol-relative
 * (`//host`, `/\host`) are not redirected: that would be an open redirect.
 */

/** Where a URL with a trailing slash is redirected, or null when it has none (or is `/`). */
export function trailingSlashTarget(url: string): string | null {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.length <= 1 || !path.endsWith('/')) return null;
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '' || !/^\/[^/\\]/.test(trimmed)) return null;
  return trimmed + (q === -1 ? '' : url.slice(q));
}
