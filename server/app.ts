/**
 * The HTTP application (Fastify 5), without listening: `buildApp(options)` wires the hooks, the
 * error rendering and the route groups. `server serve` (server/cli.ts) listens; tests listen on
 * port 0 or use `inject()`.
 *
 * Order of checks on a request: HTTP parsing and timeouts (400, 408, 431: server/client-error.ts)
 * -> request id -> a key anywhere in the URL (401) -> trailing-slash redirect -> route match
 * (404/405) -> browser origin (403, CORS) -> key (401) -> query parameters (422 detail) -> query
 * layer. HEAD is answered wherever GET is (server/routes/route.ts).
 */
import http from 'node:http';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import { keyCheckHook, keyInUrlHook, type AccountsPort } from './auth.js';
import { createClientErrorHandler } from './http/client-error.js';
import { SETTINGS } from '../shared/config.js';
import type { RefusedKeyThrottle } from './limits/refused-keys.js';
import { unmetered, type Meter } from './metering.js';
import { createEnvelope, type Envelope } from './call/envelope.js';
import { browserOriginHook, consoleOrigin } from './http/origin.js';
import { refuseWhileClosing } from './http/closing.js';
import { errorHandler, frameworkError, notFound } from './error-handler.js';
import { createFastLane, type FastLane } from './fast-lane.js';
import { countRequests, type RequestMetrics } from './observability/metrics.js';
import type { ReleaseSource } from './releases/store.js';
import { REQUEST_ID_HEADER, requestIdFor } from './http/request-id.js';
import { RequestLogController } from './http/request-log.js';
import { trailingSlashRedirect } from './http/trailing-slash.js';
import type { McpEndpoint } from './mcp/handler.js';
import { registerMcpRoute } from './mcp/plugin.js';
import { registerDocsRoutes } from './routes/docs.js';
import { registerHealthRoute } from './routes/health.js';
import { registerOperationRoutes } from './routes/operations.js';
import type { RouteContext } from './routes/route.js';

export interface AppOptions {
  releases: ReleaseSource;
  accounts: AccountsPort;
  /** CONSOLE_URL: the only web origin allowed to call /v1 (empty: none). */
  consoleUrl?: string;
  /** A pino logger (server serve passes one at LOG_LEVEL); none: no logs. */
  logger?: FastifyBaseLogger;
  /** Rate limits, quotas and caps of /v1 and MCP tool calls (server/limits); none: unmetered. */
  meter?: Meter;
  /** 429 after too many refused keys from one address (server/limits/refused-keys.ts). */
  refusedKeys?: RefusedKeyThrottle;
  /** The /health `cache` check (Redis); none: in-process counters, always ok. */
  cache?: { ping(): Promise<void> };
  /** Fastify's trustProxy: proxies whose X-Forwarded-For names the client (TRUST_PROXY); default none. */
  trustProxy?: false | string[];
  /** false: every request goes through Fastify (tests compare the two paths); default true. */
  fastLane?: boolean;
  /** HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS (shared/config.ts); default: their defaults there. */
  timeouts?: RequestTimeouts;
  /** Request counts and latencies for /metrics (METRICS_PORT); none: nothing is measured. */
  metrics?: RequestMetrics;
}

/** How long a client has to send the headers, and the whole request with its body (408 after). */
export interface RequestTimeouts {
  headersMs: number;
  requestMs: number;
}

/** The defaults of the settings table, so they are declared once. */
export function defaultTimeouts(): RequestTimeouts {
  return {
    headersMs: SETTINGS.HEADERS_TIMEOUT_MS.schema.parse(undefined),
    requestMs: SETTINGS.REQUEST_TIMEOUT_MS.schema.parse(undefined),
  };
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Requests the fast lane and the MCP fast path answered (docs/decisions/0009); 0 when off. */
    fastLaneAnswered(): number;
    /** POST /mcp exchanges the fast lane took in front of Fastify (docs/decisions/0009). */
    mcpLaneExchanges(): number;
    /** The call envelope of every keyed call (the console's playground runs through it too). */
    callEnvelope: Envelope;
  }
}

/** Idle keep-alive connections are closed after this (Fastify's default). */
const KEEP_ALIVE_TIMEOUT_MS = 72_000;

/** Longest path parameter accepted before the query layer judges it (a domain is up to 253). */
const MAX_PARAM_LENGTH = 2048;

/** HTTP/1.1 without a Host header (RFC 9112 3.2): refused 400 in the envelope. */
function lacksHost(req: http.IncomingMessage): boolean {
  return req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor === 1;
}
const MISSING_HOST = () =>
  Object.assign(new Error('Bad Request: an HTTP/1.1 request needs a Host header'), { statusCode: 400 });

export function buildApp(options: AppOptions): FastifyInstance {
  // Set once the app exists: the fast lane needs the closing state of the app it stands in front of.
  let lane: FastLane | null = null;
  let mcp: McpEndpoint | null = null;
  const timeouts = options.timeouts ?? defaultTimeouts();
  if (timeouts.headersMs > timeouts.requestMs) {
    throw new Error(
      `HEADERS_TIMEOUT_MS (${timeouts.headersMs}) must not exceed REQUEST_TIMEOUT_MS (${timeouts.requestMs})`,
    );
  }
  const app: FastifyInstance = Fastify({
    ...(options.logger ? { loggerInstance: options.logger } : { logger: false }),
    logController: new RequestLogController(),
    genReqId: requestIdFor,
    exposeHeadRoutes: false,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    frameworkErrors: frameworkError,
    clientErrorHandler: createClientErrorHandler(timeouts, () => app.log),
    trustProxy: options.trustProxy ?? false,
    // Closing is answered by refuseWhileClosing (the SPEC.md envelope), not by Fastify, and idle
    // keep-alive connections are closed by it after a grace time, not cut at once (closing.ts).
    return503OnClosing: false,
    forceCloseConnections: false,
    // The fast lane answers the common lookups in front of Fastify (server/fast-lane.ts).
    // Fastify's own server settings, which it leaves to a serverFactory to apply.
    keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS,
    serverFactory: (handler) => {
      const server = http.createServer(
        {
          // Node checks them on every open connection each interval (its default, 30 s, would let
          // a stalled request live up to twice its timeout).
          headersTimeout: timeouts.headersMs,
          requestTimeout: timeouts.requestMs,
          connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(timeouts.headersMs / 4))),
          // Node's own refusal of a missing Host is a bare 400; the onRequest hook below answers it.
          requireHostHeader: false,
        },
        (req, res) => {
          if (lane === null || lacksHost(req)) handler(req, res);
          else lane.handle(req, res, () => handler(req, res));
        },
      );
      server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
      return server;
    },
  });

  app.decorate('fastLaneAnswered', () => (lane?.answered() ?? 0) + (mcp?.fastAnswered() ?? 0));
  app.decorate('mcpLaneExchanges', () => lane?.mcpExchanges() ?? 0);
  app.decorateRequest('principal', null);

  // Hooks on every request are plain callbacks, not async functions: no promise per request.
  app.addHook('onRequest', (request, reply, done) => {
    reply.header(REQUEST_ID_HEADER, request.id);
    if (lacksHost(request.raw)) return done(MISSING_HOST());
    done();
  });
  app.addHook('onRequest', keyInUrlHook(options.refusedKeys));
  const closing = refuseWhileClosing(app);
  app.addHook('onRequest', trailingSlashRedirect);

  // Every keyed call, whatever its transport, goes through this one envelope.
  const envelope = createEnvelope({
    releases: options.releases,
    meter: options.meter ?? unmetered,
    ...(options.metrics ? { onMeterRefusal: options.metrics.meteringRefused } : {}),
    logError: (error, op) => app.log.error({ err: error, operation: op.id }, 'request failed'),
  });

  app.decorate('callEnvelope', envelope);
  if (options.metrics) countRequests(app, options.metrics);
  app.setErrorHandler(errorHandler);
  app.setNotFoundHandler(notFound);

  const ctx: RouteContext = {
    app,
    releases: options.releases,
    accounts: options.accounts,
    originHook: browserOriginHook(consoleOrigin(options.consoleUrl ?? '')),
    keyHook: keyCheckHook(options.accounts, options.refusedKeys),
    cache: options.cache,
  };
  registerOperationRoutes(ctx, envelope);
  registerHealthRoute(ctx);
  registerDocsRoutes(ctx);
  mcp = registerMcpRoute(app, {
    fastPath: options.fastLane !== false,
    envelope,
    accounts: options.accounts,
    refusedKeys: options.refusedKeys,
    consoleOrigin: consoleOrigin(options.consoleUrl ?? ''),
  });
  if (options.fastLane !== false) {
    lane = createFastLane({
      releases: options.releases,
      envelope,
      accounts: options.accounts,
      logger: options.logger,
      closing,
      metrics: options.metrics,
      // Behind a trusted proxy the client address is Fastify's to work out: MCP stays with Fastify.
      mcp: options.trustProxy ? undefined : mcp,
    });
  }
  return app;
}
