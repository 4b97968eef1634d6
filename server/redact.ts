/** Keys never reach a log: query parameters that may carry one are redacted from logged URLs. */

/** Query parameter names refused as a key in the URL (SPEC.md Authentication 4), lowercased. */
export const KEY_QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'key',
  'token',
  'authorization',
]);

/** True when the parsed query string carries a key-like parameter (any case). */
export function hasKeyInQuery(query: unknown): boolean {
  if (query === null || typeof query !== 'object') return false;
  return Object.keys(query).some((name) => KEY_QUERY_PARAMETERS.has(name.toLowerCase()));
}

/** The URL with the value of every key-like query parameter replaced by `REDACTED`. */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  if (q === -1) return url;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const rawName = eq === -1 ? part : part.slice(0, eq);
      let name: string;
      try {
        name = decodeURIComponent(rawName.replace(/\+/g, ' '));
      } catch {
        name = rawName;
      }
      return KEY_QUERY_PARAMETERS.has(name.toLowerCase()) ? `${rawName}=REDACTED` : part;
    });
  return `${url.slice(0, q)}?${parts.join('&')}`;
}
