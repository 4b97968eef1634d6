/**
 * Browser requests (docs/api.md#authentication): only the console's origin may call the API. A
 * request with any other `Origin` gets 403 `{detail: "Forbidden"}`; one from the console gets CORS
 * headers (and a preflight answer) so the console's Playground can read responses and limit headers.
 */
import type { Exchange } from './exchange.js';

const ALLOWED_HEADERS = 'Authorization, Content-Type';
/** What a browser MCP client sends besides (the SDK's Streamable HTTP transport, both eras). */
export const MCP_ALLOWED_HEADERS = `${ALLOWED_HEADERS}, Accept, Mcp-Protocol-Version, Mcp-Session-Id, Mcp-Method, Mcp-Name, Last-Event-ID`;
const EXPOSED_HEADERS = [
  'X-Request-ID',
  'X-RateLimit-Limit',
  'X-RateLimit-Remaining',
  'X-RateLimit-Reset',
  'X-Quota-Limit',
  'X-Quota-Used',
  'X-Quota-Remaining',
  'X-Project-Quota-Limit',
  'X-Project-Quota-Used',
  'X-Project-Quota-Remaining',
  'Retry-After',
  'Mcp-Session-Id',
].join(', ');
const PREFLIGHT_MAX_AGE_SECONDS = '600';

/** The console's origin from CONSOLE_URL, or null when no console is configured. */
export function consoleOrigin(consoleUrl: string): string | null {
  if (consoleUrl === '') return null;
  let url: URL;
  try {
    url = new URL(consoleUrl);
  } catch {
    throw new Error(
      `CONSOLE_URL=${JSON.stringify(consoleUrl)} is not a URL: set it like https://console.example.org`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new Error(`CONSOLE_URL=${JSON.stringify(consoleUrl)} must be an http(s) URL`);
  }
  return url.origin;
}

/**
 * The origin check of an API route: adds `Vary: Origin` to every response of the exchange, and for
 * the console the CORS headers; false (and answered 403) for any other origin.
 */
export function originAllowed(ex: Exchange, allowedOrigin: string | null): boolean {
  ex.varyOrigin = true;
  const origin = ex.req.headers.origin;
  if (origin === undefined) return true;
  if (origin !== allowedOrigin) {
    ex.detail(403, 'Forbidden');
    return false;
  }
  ex.addHeader('access-control-allow-origin', origin);
  ex.addHeader('access-control-expose-headers', EXPOSED_HEADERS);
  return true;
}

/** True (and answered 204) when the request is a CORS preflight. */
export function answerPreflight(ex: Exchange, methods: string, allowedHeaders = ALLOWED_HEADERS): boolean {
  if (ex.req.method !== 'OPTIONS' || ex.req.headers.origin === undefined) return false;
  ex.write(
    204,
    null,
    {
      'access-control-allow-methods': methods,
      'access-control-allow-headers': allowedHeaders,
      'access-control-max-age': PREFLIGHT_MAX_AGE_SECONDS,
    },
    '',
  );
  return true;
}
