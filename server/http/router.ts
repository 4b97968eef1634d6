/**
 * The routes of the API server on find-my-way (the router Fastify is built on, so paths, percent
 * decoding, absolute-form targets and parameter lengths are matched as they always were). A route
 * is declared once with its path, its access and one handler; the router adds what every route
 * has (docs/api.md#errors):
 * - GET answers HEAD too (the same status and headers; node:http drops the body);
 * - every other method Fastify knew answers 405 `{detail: "Method Not Allowed"}` with `Allow`, or,
 *   for an OPTIONS from a browser, the CORS preflight (204);
 * - `key` and `browser` routes check the browser origin first (403 for any origin but the
 *   console's, CORS headers for the console's, `Vary: Origin` always); `public` routes do not.
 * Each route has a metrics index under its path template (`/v1/ip/{ip}`).
 */
import FindMyWay from 'find-my-way';
import type { RequestMetrics } from '../observability/metrics.js';
import type { Exchange } from './exchange.js';
import { answerPreflight, originAllowed } from './origin.js';

/** Route parameters (decoded) and the parsed query string. */
export type Params = Readonly<Record<string, string | undefined>>;
export type Query = Readonly<Record<string, unknown>>;
export type Handler = (ex: Exchange, params: Params, query: Query) => void;

/**
 * `key`: /v1 operations (origin check; the envelope checks the key); `browser`: /v1 without a key
 * (openapi.json) and POST /mcp; `public`: unversioned routes (/health, /llms-full.txt).
 */
export type Access = 'key' | 'browser' | 'public';

export interface RouteSpec {
  /** The path as documented, `{name}` for a parameter. */
  path: string;
  method: 'GET' | 'POST';
  access: Access;
  handler: Handler;
  /** Request headers a browser may send (the CORS preflight's Access-Control-Allow-Headers). */
  allowedHeaders?: string;
}

/** The methods answered on a known path (Fastify's list): the route's own, or 405. */
const KNOWN_METHODS = ['GET', 'HEAD', 'TRACE', 'DELETE', 'OPTIONS', 'PATCH', 'PUT', 'POST', 'QUERY'] as const;

/** Longest path parameter matched (a domain is at most 253 characters). */
const MAX_PARAM_LENGTH = 2048;

/** What the router found for a request. */
export type Match =
  | { kind: 'route'; handler: Handler; params: Params; query: Query; route: number }
  | { kind: 'none' }
  | { kind: 'bad-url'; status: number; detail: string };

interface Store {
  route: number;
}

export class Router {
  /** Set by find-my-way's refusal handlers, which find() returns without a store. */
  private refusal: Match | null = null;
  private readonly router = FindMyWay({
    caseSensitive: true,
    ignoreTrailingSlash: false,
    ignoreDuplicateSlashes: false,
    maxParamLength: MAX_PARAM_LENGTH,
    onBadUrl: () => {
      this.refusal = {
        kind: 'bad-url',
        status: 400,
        detail: 'Bad Request: the path has malformed percent-encoding',
      };
    },
    onMaxParamLength: (path: string) => {
      this.refusal = {
        kind: 'bad-url',
        status: 414,
        detail: `Bad Request: '${path}' is exceeding the max param length`,
      };
    },
  });

  constructor(
    private readonly consoleOrigin: string | null,
    private readonly metrics: RequestMetrics | undefined,
  ) {}

  add(spec: RouteSpec): void {
    const store: Store = { route: this.metrics?.route(spec.path) ?? 0 };
    const path = spec.path.replace(/\{(\w+)\}/g, ':$1');
    const own = spec.method === 'GET' ? ['GET', 'HEAD'] : [spec.method];
    const allow = own.join(', ');
    const checksOrigin = spec.access !== 'public';
    const origin = this.consoleOrigin;
    const handler: Handler = checksOrigin
      ? (ex, params, query) => {
          if (originAllowed(ex, origin)) spec.handler(ex, params, query);
        }
      : spec.handler;
    // Answered before any body is read (a refused POST's body is drained by node:http).
    const refuse: Handler = (ex) => {
      if (checksOrigin && !originAllowed(ex, origin)) return;
      if (!answerPreflight(ex, allow, spec.allowedHeaders)) {
        ex.detail(405, 'Method Not Allowed', { allow });
      }
    };
    for (const method of KNOWN_METHODS) {
      this.router.on(
        method as FindMyWay.HTTPMethod,
        path,
        (own.includes(method) ? handler : refuse) as never,
        store,
      );
    }
  }

  find(method: string | undefined, url: string): Match {
    const found = this.router.find((method ?? 'GET') as FindMyWay.HTTPMethod, url);
    if (found === null) return { kind: 'none' };
    const store = found.store as Store | null;
    if (store === null) {
      // find-my-way's refusal of a malformed or over-long path: its handler says which.
      this.refusal = null;
      (found.handler as unknown as (req: unknown, res: unknown) => void)(undefined, undefined);
      return this.refusal ?? { kind: 'none' };
    }
    return {
      kind: 'route',
      handler: found.handler as unknown as Handler,
      params: found.params,
      query: found.searchParams,
      route: store.route,
    };
  }
}
