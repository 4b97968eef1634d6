/**
 * The API server: the one HTTP stack (server/http/server.ts) with the routes of the operation
 * table, /health, the docs routes and POST /mcp (server/mcp/), all over one call envelope
 * (server/call/envelope.ts), which the caller composes (server/serve.ts, with the console that
 * shares it). `server serve` listens; tests listen on port 0.
 */
import type http from 'node:http';
import type { Logger } from 'pino';
import { SETTINGS } from '../shared/config.js';
import { createEnvelope, type Envelope } from './call/envelope.js';
import { dnsdbRoutes } from './dnsdb/routes.js';
import type { AccountsPort } from './call/keys.js';
import { consoleOrigin } from './http/origin.js';
import { docsRoutes } from './http/routes/docs.js';
import { healthRoute } from './http/routes/health.js';
import { operationRoutes } from './http/routes/operations.js';
import type { RouteSpec } from './http/router.js';
import type { FrontStats } from './http/front.js';
import { createHttpStack, type RequestTimeouts } from './http/server.js';
import type { RefusedKeyThrottle } from './limits/refused-keys.js';
import { unmetered, type Meter } from './limits/meter.js';
import { createMcpEndpoint, type McpEndpoint } from './mcp/dispatch.js';
import { mcpRoute } from './mcp/route.js';
import type { RequestMetrics } from './observability/metrics.js';
import type { ReleaseSource } from './releases/store.js';
import type { ChangeFeed } from '../shared/operations.js';

export type { RequestTimeouts };

export interface AppOptions {
  /** The call envelope of every keyed call (apiEnvelope()). */
  envelope: Envelope;
  releases: ReleaseSource;
  /** The /health `database` check. */
  accounts: AccountsPort;
  /** CONSOLE_URL: the only web origin allowed to call /v1 and /mcp (empty: none). */
  consoleUrl?: string;
  /** A pino logger (server serve passes one at LOG_LEVEL); none: no logs. */
  logger?: Logger;
  /** The /health `cache` check (Redis); none: in-process counters, always ok. */
  cache?: { ping(): Promise<void> };
  /** Proxies whose X-Forwarded-For names the client (TRUST_PROXY); default none. */
  trustProxy?: false | string[];
  /** HEADERS_TIMEOUT_MS and REQUEST_TIMEOUT_MS (shared/config.ts); default: their defaults there. */
  timeouts?: RequestTimeouts;
  /** Request counts and latencies for /metrics (METRICS_PORT); none: nothing is measured. */
  metrics?: RequestMetrics;
}

export interface App {
  readonly server: http.Server;
  /** What the front counts: requests it answered, connections it handed to node:http (front.ts). */
  readonly front: FrontStats;
  /** Proves the MCP fast call against the SDK, then listens. */
  listen(options: { port: number; host: string }): Promise<void>;
  /** Closes gracefully (server/http/closing.ts). */
  close(): Promise<void>;
  /** Declares another route (before listen). */
  route(spec: RouteSpec): void;
  /** The routes it serves (POST /mcp once listening). */
  routes(): ReadonlyArray<Pick<RouteSpec, 'method' | 'path' | 'access'>>;
}

/** The defaults of the settings table, so they are declared once. */
export function defaultTimeouts(): RequestTimeouts {
  return {
    headersMs: SETTINGS.HEADERS_TIMEOUT_MS.schema.parse(undefined),
    requestMs: SETTINGS.REQUEST_TIMEOUT_MS.schema.parse(undefined),
  };
}

export interface EnvelopeOptions {
  releases: ReleaseSource;
  /** The key check. */
  accounts: AccountsPort;
  /** Rate limits, quotas and caps of /v1 and MCP tool calls (server/limits); none: unmetered. */
  meter?: Meter | undefined;
  /** 429 after too many refused keys from one address (server/limits/refused-keys.ts). */
  refusedKeys?: RefusedKeyThrottle | undefined;
  logger?: Logger | undefined;
  metrics?: RequestMetrics | undefined;
  /** The change feed (list_changes); none: that operation answers 503. */
  changes?: ChangeFeed | undefined;
}

/** The call envelope of a server: every transport's keyed calls, the console's playground's too. */
export function apiEnvelope(options: EnvelopeOptions): Envelope {
  const logger = options.logger;
  return createEnvelope({
    releases: options.releases,
    accounts: options.accounts,
    meter: options.meter ?? unmetered,
    refusedKeys: options.refusedKeys,
    changes: options.changes,
    onMeterRefusal: options.metrics?.meteringRefused,
    logError: (error, op) =>
      logger?.error({ err: error, ...(op === null ? {} : { operation: op.id }) }, 'request failed'),
  });
}

export function buildApp(options: AppOptions): App {
  const { logger, envelope } = options;
  const http = createHttpStack({
    timeouts: options.timeouts ?? defaultTimeouts(),
    consoleOrigin: consoleOrigin(options.consoleUrl ?? ''),
    trustProxy: options.trustProxy ?? false,
    logger,
    metrics: options.metrics,
    envelope,
  });
  for (const spec of operationRoutes(envelope)) http.route(spec);
  http.route(healthRoute(options));
  for (const spec of docsRoutes(options.releases)) http.route(spec);
  for (const spec of dnsdbRoutes(envelope)) http.route(spec);

  let mcp: Promise<McpEndpoint> | null = null;
  const endpoint = () =>
    (mcp ??= createMcpEndpoint({ envelope, logWarning: (message) => logger?.warn(message) }).then((ready) => {
      http.route(mcpRoute(ready));
      return ready;
    }));

  return {
    server: http.server,
    front: http.front,
    route: (spec) => http.route(spec),
    routes: () => http.routes(),
    async listen({ port, host }) {
      await endpoint();
      await new Promise<void>((resolve, reject) => {
        const failed = (error: Error) => reject(error);
        http.server.once('error', failed);
        http.server.listen(port, host, () => {
          http.server.off('error', failed);
          resolve();
        });
      });
    },
    async close() {
      await http.closing.close();
      if (mcp !== null) await (await mcp).close();
    },
  };
}
