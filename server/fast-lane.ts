/**
 * The fast lane: the common case of the five lookups answered in front of Fastify
 * (docs/decisions/0009-fast-lane.md).
 *
 * A request takes it only when it is a plain `GET` of a lookup path with no query string, no
 * percent-encoding, no `Origin` header, a Bearer key the accounts store accepts, a unit the meter
 * grants and an answer the query layer gives. It then gets the response the Fastify route would
 * send: the same body, status, `X-Request-ID`, `Vary`, content type and limit headers, the same
 * metering (reserve, then commit, or release for a bogon), the same log line. Everything else
 * (every refusal, every error, every other route) falls through to Fastify untouched, which
 * answers it as before: the lane looks the answer up before it reserves a unit, so a request it
 * leaves to Fastify has counted nothing and written nothing.
 *
 * Why: Fastify's per-request machinery (request and reply objects, a child logger, the hook
 * chains, promise hops, stream listeners) costs more than the lookup itself on this machine.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import {
  DEFAULT_LIMIT,
  domainHistory,
  domainHosting,
  ipDomains,
  lookupAsn,
  lookupIpAnswer,
  jsonByteLength,
  responseParts,
  type Release,
  type ResponseJson,
} from '../shared/queries/index.js';
import type { KeyPrincipal } from './accounts/index.js';
import { bearerToken, type AccountsPort } from './auth.js';
import type { Meter, Reservation } from './metering.js';
import { pageLimit } from './page-size.js';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id.js';
import { JSON_CONTENT_TYPE } from './send-json.js';
import { isJsonContentType } from '@modelcontextprotocol/server';
import { ApiError } from '../shared/errors.js';
import type { McpEndpoint, McpResponse } from './mcp/handler.js';
import { MCP_PATH } from './mcp/plugin.js';

interface FastAnswer {
  /** Written as head then the release's blocks (the blocks are encoded once per release). */
  json: ResponseJson;
  /** False: the answer is not counted (a bogon lookup_ip), the unit is given back. */
  billable: boolean;
}

interface FastRoute {
  prefix: string;
  suffix: string;
  /** The route's answer for `param` on the first page of `limit` items; throws as the route does. */
  answer(release: Release, param: string, limit: number): FastAnswer;
}

const counted = (body: object): FastAnswer => ({ json: responseParts(body), billable: true });

/** The lookup routes of server/routes/, first page, default arguments. */
const ROUTES: readonly FastRoute[] = [
  {
    prefix: '/v1/ip/',
    suffix: '',
    answer: (release, ip) => {
      const answer = lookupIpAnswer(release, { ip });
      return { json: answer, billable: !answer.isBogon };
    },
  },
  {
    prefix: '/v1/ip/',
    suffix: '/domains',
    answer: (release, ip, limit) =>
      counted(ipDomains(release, { ip, includeEnded: false, limit, cursor: undefined })),
  },
  {
    prefix: '/v1/domain/',
    suffix: '/history',
    answer: (release, domain, limit) => counted(domainHistory(release, { domain, limit, cursor: undefined })),
  },
  {
    prefix: '/v1/domain/',
    suffix: '/hosting',
    answer: (release, domain) => counted(domainHosting(release, { domain })),
  },
  {
    prefix: '/v1/asn/',
    suffix: '',
    answer: (release, asn, limit) => counted(lookupAsn(release, { asn, limit, cursor: undefined })),
  },
];

/** Longer path parameters go to Fastify (a domain is at most 253 characters, an IPv6 text 45). */
const MAX_FAST_PARAM = 256;

interface FastMatch {
  route: FastRoute;
  param: string;
}

/** The route and parameter of a plain lookup URL, or null. */
export function matchFastRoute(url: string): FastMatch | null {
  if (!url.startsWith('/v1/') || url.includes('?') || url.includes('%')) return null;
  for (const route of ROUTES) {
    if (!url.startsWith(route.prefix) || !url.endsWith(route.suffix)) continue;
    const end = url.length - route.suffix.length;
    if (end <= route.prefix.length || end - route.prefix.length > MAX_FAST_PARAM) continue;
    const param = url.slice(route.prefix.length, end);
    if (!param.includes('/')) return { route, param };
  }
  return null;
}

export interface FastLaneOptions {
  releases: { current(): Release | null };
  accounts: AccountsPort;
  meter?: Meter | undefined;
  logger?: FastifyBaseLogger | undefined;
  /** True once the server is closing (Fastify answers those requests 503). */
  closing(): boolean;
  /** The POST /mcp endpoint (server/mcp/handler.ts); none: /mcp stays with Fastify. */
  mcp?: McpEndpoint | undefined;
}

/** Larger MCP bodies go through Fastify (its limit, 1 MiB, and its 413). */
const MAX_FAST_MCP_BODY = 64 * 1024;

export interface FastLane {
  /** Answers the request, or calls fallThrough (at once or after the key check) to let Fastify. */
  handle(req: IncomingMessage, res: ServerResponse, fallThrough: () => void): void;
  /** Requests the lane answered since the start. */
  answered(): number;
}

export function createFastLane(options: FastLaneOptions): FastLane {
  const { releases, accounts, meter, logger } = options;
  let answered = 0;
  // pino's level test; the level of a running server does not change.
  const logsRequests =
    (logger as { isLevelEnabled?: (level: string) => boolean } | undefined)?.isLevelEnabled?.('info') ===
    true;

  /** The route's answer on the first page, or null when the query layer refuses the request. */
  function lookUp(match: FastMatch, principal: KeyPrincipal, maxPageSize?: number): FastAnswer | null {
    const release = releases.current();
    if (release === null) return null;
    try {
      const limit =
        maxPageSize === undefined
          ? pageLimit(principal, DEFAULT_LIMIT)
          : Math.min(DEFAULT_LIMIT, maxPageSize);
      return match.route.answer(release, match.param, limit);
    } catch {
      return null;
    }
  }

  /**
   * Sends the answer with the unit granted; false (the unit given back, nothing written) when the
   * plan's page size asks for a smaller page that the query layer then refuses.
   */
  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    match: FastMatch,
    principal: KeyPrincipal,
    first: FastAnswer,
    reservation: Reservation | null,
    started: number,
  ): boolean {
    let answer: FastAnswer | null = first;
    // The plan allows fewer items per page than the default: the page Fastify's route would give.
    if (reservation !== null && reservation.maxPageSize < DEFAULT_LIMIT) {
      answer = lookUp(match, principal, reservation.maxPageSize);
    }
    if (answer === null) {
      if (reservation !== null) settle(reservation.release());
      return false;
    }
    // The settling happens before the promise returns (server/limits/meter.ts): headers are final.
    if (reservation !== null) settle(answer.billable ? reservation.commit() : reservation.release());
    const id = requestIdFor(req);
    const headers: Record<string, string | number> = {
      [REQUEST_ID_HEADER]: id,
      vary: 'Origin',
      'content-type': JSON_CONTENT_TYPE,
    };
    if (reservation !== null) Object.assign(headers, reservation.headers);
    const { head, blocks } = answer.json;
    headers['content-length'] = jsonByteLength(answer.json);
    // From here on the request is answered: nothing below may fall through to Fastify.
    answered += 1;
    try {
      res.writeHead(200, headers);
      // One writev: write() leaves the socket corked, end() uncorks it.
      if (blocks === null) res.end(head);
      else {
        res.write(head);
        res.end(blocks.bytes);
      }
      if (logsRequests) {
        // The line of server/request-log.ts; a lane URL has no query string, so nothing to redact.
        logger?.info(
          {
            reqId: id,
            method: 'GET',
            url: req.url,
            statusCode: 200,
            responseTime: Math.round((performance.now() - started) * 10) / 10,
          },
          'request completed',
        );
      }
    } catch (error) {
      logger?.error({ reqId: id, err: error }, 'fast lane: writing the response failed');
    }
    return true;
  }

  function settle(done: Promise<void>): void {
    done.catch((error: unknown) => logger?.error({ err: error }, 'fast lane: settling a unit failed'));
  }

  /**
   * The same with the key check and the meter waited for; `known`: the key's principal and the
   * answer when take() already has them (the meter could not grant at once).
   */
  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    match: FastMatch,
    token: string,
    started: number,
    known?: { principal: KeyPrincipal; answer: FastAnswer },
  ): Promise<boolean> {
    const principal = known?.principal ?? (await accounts.verifyKey(token));
    if (principal === null) return false;
    // The lookup before the unit: a request the query layer refuses never reserves one.
    const answer = known?.answer ?? lookUp(match, principal);
    if (answer === null) return false;
    let reservation: Reservation | null = null;
    if (meter) {
      try {
        reservation = await meter.reserve(principal);
      } catch {
        return false; // a refusal: Fastify reserves again and answers it with its headers
      }
    }
    return respond(req, res, match, principal, answer, reservation, started);
  }

  function handle(req: IncomingMessage, res: ServerResponse, fallThrough: () => void): void {
    let taken: boolean;
    try {
      taken = take(req, res, fallThrough);
    } catch {
      taken = false; // a failing release store or accounts port: Fastify answers (500, 503)
    }
    if (!taken) fallThrough();
  }

  /** False: not for the lane, nothing written; true: answered, or left to serve() to finish. */
  function take(req: IncomingMessage, res: ServerResponse, fallThrough: () => void): boolean {
    if (req.method === 'POST') return takeMcp(req, res);
    if (req.method !== 'GET' || req.headers.origin !== undefined || options.closing()) return false;
    const match = matchFastRoute(req.url ?? '');
    if (match === null) return false;
    const token = bearerToken(req.headers.authorization);
    if (token === null || releases.current() === null) return false;
    const started = performance.now();
    // Without waiting when the key was verified moments ago and the meter can grant at once.
    const principal = accounts.peekKey?.(token);
    let known: { principal: KeyPrincipal; answer: FastAnswer } | undefined;
    if (principal !== undefined) {
      const answer = lookUp(match, principal);
      if (answer === null) return false;
      const reservation = meter === undefined ? null : meter.reserveNow?.(principal);
      if (reservation !== undefined) {
        return respond(req, res, match, principal, answer, reservation, started);
      }
      known = { principal, answer };
    }
    serve(req, res, match, token, started, known).then(
      (answered) => {
        if (!answered) fallThrough();
      },
      // verifyKey or the meter failed outright (503 on the Fastify side); nothing was written.
      () => fallThrough(),
    );
    return true;
  }

  /**
   * POST /mcp with a key, JSON of at most MAX_FAST_MCP_BODY and no web origin: the exchange the
   * Fastify route would run (the endpoint answers plain tool calls itself and the rest with the
   * SDK), written with the route's headers. Decided on the headers alone, before the body is read.
   */
  function takeMcp(req: IncomingMessage, res: ServerResponse): boolean {
    const endpoint = options.mcp;
    const headers = req.headers;
    if (endpoint === undefined || req.url !== MCP_PATH || headers.origin !== undefined || options.closing()) {
      return false;
    }
    if (!isJsonContentType(headers['content-type'] ?? null) || headers['transfer-encoding'] !== undefined) {
      return false;
    }
    const length = Number(headers['content-length']);
    if (!Number.isSafeInteger(length) || length <= 0 || length > MAX_FAST_MCP_BODY) return false;
    if (typeof headers.host !== 'string' || bearerToken(headers.authorization) === null) return false;
    const started = performance.now();
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => {}); // the client went away: nothing to answer
    req.on('end', () => void exchange(endpoint, req, res, Buffer.concat(chunks), started));
    return true;
  }

  async function exchange(
    endpoint: McpEndpoint,
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    started: number,
  ): Promise<void> {
    const id = requestIdFor(req);
    let response: McpResponse;
    try {
      response = await endpoint.handle({
        url: `http://${req.headers.host}${MCP_PATH}`,
        headers: req.headers,
        body,
        keyInUrl: false,
        clientAddress: req.socket.remoteAddress,
      });
    } catch (error) {
      // What server/error-handler.ts answers for a failure that is not a refusal.
      logger?.error({ reqId: id, err: error }, 'request failed');
      response = {
        status: 500,
        headers: { 'content-type': JSON_CONTENT_TYPE },
        body: Buffer.from(JSON.stringify(new ApiError('internal_error').toBody())),
      };
    }
    try {
      res.writeHead(response.status, {
        [REQUEST_ID_HEADER]: id,
        vary: 'Origin',
        ...response.headers,
        'content-length': response.body.length,
      });
      res.end(response.body);
      if (logsRequests) {
        logger?.info(
          {
            reqId: id,
            method: 'POST',
            url: MCP_PATH,
            statusCode: response.status,
            responseTime: Math.round((performance.now() - started) * 10) / 10,
          },
          'request completed',
        );
      }
    } catch (error) {
      logger?.error({ reqId: id, err: error }, 'fast lane: writing the response failed');
    }
  }

  return { handle, answered: () => answered };
}
