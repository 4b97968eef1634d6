/**
 * Browser requests (SPEC.md Authentication 8): only the console's origin may call the API. A request
 * with any other `Origin` gets 403 `{detail: "Forbidden"}`; one from the console gets CORS headers
 * (and a preflight answer) so the console's Playground can read responses and limit headers.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { sendJson } from '../send-json.js';

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

export function browserOriginHook(allowedOrigin: string | null) {
  // Callback style (no promise per request); a 403 ends the request without calling done.
  return function checkOrigin(
    request: FastifyRequest,
    reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ): void {
    reply.header('vary', 'Origin');
    const origin = request.headers.origin;
    if (origin === undefined) return done();
    if (origin !== allowedOrigin) {
      sendJson(reply, { detail: 'Forbidden' }, 403);
      return;
    }
    reply.header('access-control-allow-origin', origin);
    reply.header('access-control-expose-headers', EXPOSED_HEADERS);
    done();
  };
}

/** True (and answered) when the request is a CORS preflight from the allowed origin. */
export function answerPreflight(
  request: FastifyRequest,
  reply: FastifyReply,
  methods: string,
  allowedHeaders = ALLOWED_HEADERS,
): boolean {
  if (request.method !== 'OPTIONS' || request.headers.origin === undefined) return false;
  reply
    .code(204)
    .header('access-control-allow-methods', methods)
    .header('access-control-allow-headers', allowedHeaders)
    .header('access-control-max-age', PREFLIGHT_MAX_AGE_SECONDS)
    .send();
  return true;
}
