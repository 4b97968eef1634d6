/**
 * The one HTTP stack of the API (docs/decisions/0027): every request is parsed by node:http, routed
 * once (router.ts) and answered through one Exchange (exchange.ts). Before any route, in this order
 * (docs/api.md#errors, docs/decisions/0018):
 *
 * 1. node:http refuses what is not HTTP, an oversized request line or header block, and a request
 *    whose headers or body do not arrive in time (400, 431, 408: client-error.ts);
 * 2. a malformed percent-encoding in the path: 400 `{detail}` (414 for a path parameter over
 *    2,048 characters);
 * 3. HTTP/1.1 without a Host header: 400 `{detail}`;
 * 4. anything shaped like a key anywhere in the URL (but on POST /mcp, which answers it as a tool
 *    error): 401, counted by the refused-key throttle (the envelope's rule);
 * 5. once closing began: 503 `service_unavailable` with Retry-After and `Connection: close`;
 * 6. a trailing slash: 308 to the path without it (trailing-slash.ts);
 * 7. an unknown path: 404 `{detail: "Not Found"}`;
 * then the route (its origin check, its handler). A route handler that throws answers 500
 * `internal_error`, logged.
 */
import http from 'node:http';
import type { Logger } from 'pino';
import proxyAddr from 'proxy-addr';
import { ApiError } from '../../shared/errors.js';
import type { Envelope } from '../call/envelope.js';
import type { RequestMetrics } from '../observability/metrics.js';
import { MCP_PATH } from '../mcp/path.js';
import { createClientErrorHandler } from './client-error.js';
import { CLOSING_RETRY_AFTER_SECONDS, trackClosing, type Closing } from './closing.js';
import { Exchange, type ExchangeContext } from './exchange.js';
import { installFront, type FrontStats } from './front.js';
import type { HttpRequest, HttpResponse } from './message.js';
import { urlCarriesKey } from './redact.js';
import { Router, type RouteSpec } from './router.js';
import { trailingSlashTarget } from './trailing-slash.js';
import { createTurnWrites } from './turn-writes.js';

/** How long a client has to send the headers, and the whole request with its body (408 after). */
export interface RequestTimeouts {
  headersMs: number;
  requestMs: number;
}

export interface HttpOptions {
  timeouts: RequestTimeouts;
  /** The only web origin allowed to call /v1 and /mcp (null: none). */
  consoleOrigin: string | null;
  /** Proxies whose X-Forwarded-For names the client (TRUST_PROXY); false: none. */
  trustProxy: false | string[];
  logger: Logger | undefined;
  metrics: RequestMetrics | undefined;
  /** Refusals the stack answers itself: a key in the URL of a route without a key check. */
  envelope: Envelope;
}

export interface HttpStack {
  readonly server: http.Server;
  readonly closing: Closing;
  /** Requests the front answered, connections it handed to node:http (front.ts). */
  readonly front: FrontStats;
  /** Declares a route (before the server listens). */
  route(spec: RouteSpec): void;
  /** The routes declared, in order. */
  routes(): ReadonlyArray<Pick<RouteSpec, 'method' | 'path' | 'access'>>;
}

/** Idle keep-alive connections are closed after this (Fastify's default, kept). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

const MISSING_HOST = 'Bad Request: an HTTP/1.1 request needs a Host header';
const SHUTTING_DOWN = 'the server is shutting down: retry after Retry-After seconds';

/** HTTP/1.1 without a Host header (RFC 9112 3.2). */
function lacksHost(req: HttpRequest): boolean {
  return req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1;
}

function isMcpUrl(url: string): boolean {
  return url === MCP_PATH || url.startsWith(`${MCP_PATH}?`);
}

export function createHttpStack(options: HttpOptions): HttpStack {
  const { timeouts, logger, envelope } = options;
  if (timeouts.headersMs > timeouts.requestMs) {
    throw new Error(
      `HEADERS_TIMEOUT_MS (${timeouts.headersMs}) must not exceed REQUEST_TIMEOUT_MS (${timeouts.requestMs})`,
    );
  }
  const router = new Router(options.consoleOrigin, options.metrics);
  const trust = options.trustProxy === false ? null : proxyAddr.compile(options.trustProxy);
  const server = http.createServer(
    {
      // Node checks them on every open connection each interval (its default, 30 s, would let a
      // stalled request live up to twice its timeout).
      headersTimeout: timeouts.headersMs,
      requestTimeout: timeouts.requestMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headersMs / 4))),
      // Node's own refusal of a missing Host is a bare 400; step 3 answers it in the envelope.
      requireHostHeader: false,
    },
    handle,
  );
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Before any other 'connection' listener: plain GETs are read by the front (front.ts).
  const front = installFront(server);
  server.on(
    'clientError',
    createClientErrorHandler(timeouts, () => logger),
  );
  const closing = trackClosing(server);
  const context: ExchangeContext = {
    logger,
    logsRequests:
      (logger as { isLevelEnabled?: (level: string) => boolean } | undefined)?.isLevelEnabled?.('info') ===
      true,
    metrics: options.metrics,
    // Responses are written at the end of the turn that produced them (turn-writes.ts).
    turn: createTurnWrites(),
    closing: closing.active,
    clientAddress: (req, socketAddress) => {
      if (trust === null) return socketAddress;
      try {
        // proxy-addr reads X-Forwarded-For and the socket's address (`connection`, which the front's
        // request has too).
        return proxyAddr(req as http.IncomingMessage, trust);
      } catch {
        return socketAddress;
      }
    },
    fromTrustedProxy: (socketAddress) =>
      trust !== null && socketAddress !== undefined && trust(socketAddress, 0),
    unmatched: options.metrics?.route('unmatched') ?? 0,
    errorResult: envelope.errorResult,
  };

  function handle(req: HttpRequest, res: HttpResponse): void {
    const ex = new Exchange(req, res, context);
    try {
      const url = req.url ?? '/';
      const match = router.find(req.method, url);
      if (match.kind === 'bad-url') return ex.detail(match.status, match.detail);
      // Counted under the route's label, refused or not.
      if (match.kind === 'route') ex.route = match.route;
      if (lacksHost(req)) return ex.detail(400, MISSING_HOST);
      if (urlCarriesKey(url) && !isMcpUrl(url)) {
        return envelope.refuseKeyInUrl(ex.clientAddress(), ex);
      }
      if (closing.active()) {
        return ex.refuse(
          new ApiError('service_unavailable', SHUTTING_DOWN, { retryAfter: CLOSING_RETRY_AFTER_SECONDS }),
        );
      }
      const redirect = trailingSlashTarget(url);
      if (redirect !== null) return ex.write(308, null, { location: redirect }, '');
      if (match.kind === 'none') return ex.detail(404, 'Not Found');
      match.handler(ex, match.params, match.query);
    } catch (error) {
      ex.fail(error);
    }
  }

  const declared: Array<Pick<RouteSpec, 'method' | 'path' | 'access'>> = [];
  return {
    server,
    closing,
    front,
    route: (spec) => {
      router.add(spec);
      declared.push({ method: spec.method, path: spec.path, access: spec.access });
    },
    routes: () => declared,
  };
}
