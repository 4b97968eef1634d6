/**
 * Keys never reach a log, and a key in a URL is refused (docs/api.md#authentication):
 * - by value: anything shaped like a key (accounts/api-key.ts), anywhere in the URL (path,
 *   query names or values, any parameter name, `api_key[]`, percent-encoded), whatever the route;
 * - by name: the five refused query parameter names, whatever their value, on keyed routes.
 */
import { containsKeyShape, redactKeyShapes } from '../../accounts/api-key.js';

/** Query parameter names refused as a key in the URL (docs/api.md#authentication), lowercased. */
export const KEY_QUERY_PARAMETERS: ReadonlySet<string> = new Set([
  'api_key',
  'apikey',
  'key',
  'token',
  'authorization',
]);

const REDACTED = 'REDACTED';

/** A query parameter name as compared: lowercased, array brackets dropped (`api_key[]`, `key[0]`). */
function normalName(name: string): string {
  const bracket = name.indexOf('[');
  return (bracket === -1 ? name : name.slice(0, bracket)).toLowerCase();
}

/** True when the parsed query string carries a parameter named like a key (any case, array forms). */
export function hasKeyInQuery(query: unknown): boolean {
  if (query === null || typeof query !== 'object') return false;
  return Object.keys(query).some((name) => KEY_QUERY_PARAMETERS.has(normalName(name)));
}

/** Percent-decoding (and `+` as space) until nothing changes; malformed escapes stay as they are. */
function decoded(text: string): string {
  let out = text;
  for (let i = 0; i < 3 && (out.includes('%') || out.includes('+')); i++) {
    let next: string;
    try {
      next = decodeURIComponent(out.replace(/\+/g, ' '));
    } catch {
      next = out
        .replace(/\+/g, ' ')
        .replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
    }
    if (next === out) break;
    out = next;
  }
  return out;
}

/** True when the URL (path and query, raw or percent-decoded) holds anything shaped like a key. */
export function urlCarriesKey(url: string): boolean {
  return (
    containsKeyShape(url) || ((url.includes('%') || url.includes('+')) && containsKeyShape(decoded(url)))
  );
}

/** One part of a URL with what is shaped like a key replaced (the whole part when it was encoded). */
function redactPart(part: string): string {
  if (containsKeyShape(part)) return redactKeyShapes(part, REDACTED);
  return containsKeyShape(decoded(part)) ? REDACTED : part;
}

/**
 * The URL as logged: every path segment, query name and value that holds something shaped like a
 * key redacted, and the value of every parameter named like a key replaced by `REDACTED`.
 */
export function redactUrl(url: string): string {
  const q = url.indexOf('?');
  const path = (q === -1 ? url : url.slice(0, q)).split('/').map(redactPart).join('/');
  if (q === -1) return path;
  const parts = url
    .slice(q + 1)
    .split('&')
    .map((part) => {
      const eq = part.indexOf('=');
      const rawName = eq === -1 ? part : part.slice(0, eq);
      const name = redactPart(rawName);
      if (KEY_QUERY_PARAMETERS.has(normalName(decoded(rawName)))) return `${name}=${REDACTED}`;
      return eq === -1 ? name : `${name}=${redactPart(part.slice(eq + 1))}`;
    });
  return `${path}?${parts.join('&')}`;
}

/** A serialised log line with everything shaped like a key replaced (pino's streamWrite hook). */
export function redactLogLine(line: string): string {
  return containsKeyShape(line) ? redactKeyShapes(line, REDACTED) : line;
}
