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
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { FastifyBaseLogger } from 'fastify';
import { OPERATIONS, type Operation } from '../shared/operations.js';
import type { Release } from '../shared/queries/index.js';
import type { KeyPrincipal } from '../accounts/index.js';
import { bearerToken, type AccountsPort } from './auth.js';
import { isPending, type CallOutcome, type Envelope } from './call/envelope.js';
import { jsonByteLength } from './encoding/json.js';
import { createTurnWrites } from './http/turn-writes.js';
import { chunksByteLength, type BodyChunks } from './encoding/chunks.js';
import { REQUEST_ID_HEADER, requestIdFor } from './http/request-id.js';
import { requestLine } from './http/request-log.js';
import { urlCarriesKey } from './http/redact.js';
import { JSON_CONTENT_TYPE } from './send-json.js';
import { isJsonContentType } from '@modelcontextprotocol/server';
import { ApiError } from '../shared/errors.js';
import type { McpEndpoint, McpRequest, McpResponse } from './mcp/handler.js';
import { MCP_PATH } from './mcp/plugin.js';
import type { RequestMetrics } from './observability/metrics.js';
import { SETTLED } from './metering.js';

interface FastRoute {
  op: Operation;
  prefix: string;
  suffix: string;
}

/** The lookups of the table (the operations with a path parameter): the path before and after it. */
const ROUTES: readonly FastRoute[] = OPERATIONS.filter((op) => op.pathParameter !== undefined).map((op) => ({
  op,
  prefix: op.path.slice(0, op.path.indexOf('{')),
  suffix: op.path.slice(op.path.indexOf('}') + 1),
}));

/** Longer path parameters go to Fastify (a domain is at most 253 characters, an IPv6 text 45). */
const MAX_FAST_PARAM = 256;

interface FastMatch {
  op: Operation;
  param: string;
}

/** The operation and parameter of a plain lookup URL, or null. */
export function matchFastRoute(url: string): FastMatch | null {
  if (!url.startsWith('/v1/') || url.includes('?') || url.includes('%') || urlCarriesKey(url)) return null;
  for (const route of ROUTES) {
    if (!url.startsWith(route.prefix) || !url.endsWith(route.suffix)) continue;
    const end = url.length - route.suffix.length;
    if (end <= route.prefix.length || end - route.prefix.length > MAX_FAST_PARAM) continue;
    const param = url.slice(route.prefix.length, end);
    if (!param.includes('/')) return { op: route.op, param };
  }
  return null;
}

export interface FastLaneOptions {
  releases: { current(): Release | null };
  /** The call envelope every transport shares (server/call/envelope.ts). */
  envelope: Envelope;
  accounts: AccountsPort;
  logger?: FastifyBaseLogger | undefined;
  /** True once the server is closing (Fastify answers those requests 503). */
  closing(): boolean;
  /** The POST /mcp endpoint (server/mcp/handler.ts); none: /mcp stays with Fastify. */
  mcp?: McpEndpoint | undefined;
  /** Counts the requests the lane answers, under the route labels Fastify's would have. */
  metrics?: RequestMetrics | undefined;
}

/**
 * Tells node:http that a GET the lane answered, read to its end with no body bytes waiting, needs
 * no draining. When a response finishes, node:http "dumps" every request the handler did not read
 * (resume, read to the end, destroy): six process.nextTick hops per request on Node 20 (a bare
 * node:http server, 1,000 keep-alive GETs: 21 ticks per exchange, client included, against 15).
 * Measured on /v1/asn (bench-api, 2 × 2 runs alternating): 41.4 and 44.4 µs of CPU per request
 * without, 37.3 and 37.8 with. `_dumped` is the flag node:http's own `_dump()` sets (lib/_http_incoming.js) so
 * that it runs once; a Node without it drains as before. A request not yet read to its end, or with
 * body bytes buffered, is left to node:http: a buffered body may have stopped the socket's reads,
 * which only its draining starts again (test/server/fast-lane.test.ts, "one connection").
 * Called when the answer is written: at the 'request' event the message is not complete yet.
 */
function nothingToDrain(req: IncomingMessage): void {
  if (req.complete && req.readableLength === 0) {
    (req as IncomingMessage & { _dumped?: boolean })._dumped = true;
  }
}

/**
 * The exchange's request as the endpoint reads it; the URL, which only the SDK's path needs, is made
 * on demand. The client's address is read at once: a socket closed before a slow key check no
 * longer has one, and the refused-key throttle counts by it.
 */
class LaneMcpRequest implements McpRequest {
  readonly keyInUrl = false;
  readonly clientAddress: string | undefined;
  constructor(
    private readonly req: IncomingMessage,
    readonly body: Buffer,
  ) {
    this.clientAddress = req.socket.remoteAddress;
  }
  get url(): string {
    return `http://${this.req.headers.host}${MCP_PATH}`;
  }
  get headers(): IncomingHttpHeaders {
    return this.req.headers;
  }
}

/** Larger MCP bodies go through Fastify (its limit, 1 MiB, and its 413). */
const MAX_FAST_MCP_BODY = 64 * 1024;

export interface FastLane {
  /** Answers the request, or calls fallThrough (at once or after the key check) to let Fastify. */
  handle(req: IncomingMessage, res: ServerResponse, fallThrough: () => void): void;
  /** Lookups (GET) the lane answered since the start. */
  answered(): number;
  /** POST /mcp exchanges the lane took since the start (answered by the endpoint's fast path or SDK). */
  mcpExchanges(): number;
}

export function createFastLane(options: FastLaneOptions): FastLane {
  const { releases, envelope, accounts, logger } = options;
  let answered = 0;
  let mcpExchanges = 0;
  // Answers are written at the end of the turn that found them (server/turn-writes.ts).
  const turn = createTurnWrites();
  const metrics = options.metrics;
  // Route indexes of the metrics, looked up once: the request path only increments numbers.
  const routeIndex = new Map<Operation, number>(OPERATIONS.map((op) => [op, metrics?.route(op.path) ?? 0]));
  const mcpRoute = metrics?.route(MCP_PATH) ?? 0;
  // pino's level test; the level of a running server does not change.
  const logsRequests =
    (logger as { isLevelEnabled?: (level: string) => boolean } | undefined)?.isLevelEnabled?.('info') ===
    true;

  /** The outcome for the principal: only an answer (else null: Fastify answers, nothing counted). */
  function callFor(match: FastMatch, principal: KeyPrincipal) {
    return envelope.call(
      match.op,
      { principal },
      { from: 'rest', path: match.param, query: {} },
      { answersOnly: true },
    );
  }

  /** Writes a 200 outcome as the Fastify route would (server/routes/operations.ts). */
  function respond(
    req: IncomingMessage,
    res: ServerResponse,
    op: Operation,
    outcome: CallOutcome,
    started: number,
  ): void {
    if (outcome.settled !== SETTLED) {
      outcome.settled.catch((error: unknown) =>
        logger?.error({ err: error }, 'fast lane: settling a unit failed'),
      );
    }
    const id = requestIdFor(req);
    const json = outcome.answer!.json;
    const headers: Record<string, string | number> = {
      [REQUEST_ID_HEADER]: id,
      vary: 'Origin',
      'content-type': JSON_CONTENT_TYPE,
      ...outcome.headers,
      'content-length': jsonByteLength(json),
    };
    // Answered after closing began (the key check or the meter was waited for): the last one.
    if (options.closing()) headers.connection = 'close';
    // From here on the request is answered: nothing below may fall through to Fastify.
    answered += 1;
    const body = json.blocks === null ? json.head : [json.head, json.blocks.bytes];
    const url = req.url ?? '';
    turn.add(() => {
      nothingToDrain(req);
      writeAnswer(res, 200, headers, body, routeIndex.get(op)!, 'GET', url, id, started);
    });
  }

  /**
   * Writes one answer of the lane (at the end of its turn, server/turn-writes.ts), as one writev,
   * and counts and logs it as Fastify's route would.
   */
  function writeAnswer(
    res: ServerResponse,
    status: number,
    headers: Record<string, string | number>,
    body: string | Buffer | BodyChunks,
    route: number,
    method: string,
    url: string,
    id: string,
    started: number,
  ): void {
    try {
      res.writeHead(status, headers);
      if (typeof body === 'string' || Buffer.isBuffer(body)) res.end(body);
      else {
        // Corked here, end() uncorks (corked already, write() schedules no uncork of its own).
        res.socket?.cork();
        const last = body.length - 1;
        for (let i = 0; i < last; i++) res.write(body[i]);
        res.end(body[last]);
      }
      metrics?.observe(route, status, (performance.now() - started) / 1000);
      if (logsRequests) logger?.info(requestLine(id, method, url, status, started), 'request completed');
    } catch (error) {
      logger?.error({ reqId: id, err: error }, 'fast lane: writing the response failed');
      // Half written (and perhaps its socket left corked): the client must not wait for the rest.
      res.destroy();
    }
  }

  /** The same once the key check and the meter have been waited for. */
  async function serve(
    req: IncomingMessage,
    res: ServerResponse,
    match: FastMatch,
    token: string,
    started: number,
  ): Promise<boolean> {
    const principal = await accounts.verifyKey(token);
    if (principal === null) return false;
    const outcome = await callFor(match, principal);
    if (outcome === null) return false;
    respond(req, res, match.op, outcome, started);
    return true;
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

  /** False: not for the lane, nothing written; true: answered, or left to a promise to finish. */
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
    const pending =
      principal === undefined
        ? serve(req, res, match, token, started)
        : (() => {
            const outcome = callFor(match, principal);
            if (!isPending(outcome)) {
              if (outcome === null) return false;
              respond(req, res, match.op, outcome, started);
              return true;
            }
            return outcome.then((o) => {
              if (o === null) return false;
              respond(req, res, match.op, o, started);
              return true;
            });
          })();
    if (typeof pending === 'boolean') return pending;
    pending.then(
      (done) => {
        if (!done) fallThrough();
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
    mcpExchanges += 1;
    // node:http pushes the body that came with the headers right after this event returns.
    queueMicrotask(() => readBody(endpoint, req, res, length, started));
    return true;
  }

  /**
   * The body, taken at once when it is all there (a request sent in one piece, the usual case):
   * no 'data' and 'end' events and none of the stream's process.nextTick hops. Otherwise read as a
   * stream. Reading marks the request consumed, so node:http does not drain it after the answer.
   */
  function readBody(
    endpoint: McpEndpoint,
    req: IncomingMessage,
    res: ServerResponse,
    length: number,
    started: number,
  ): void {
    if (req.readableLength === length) {
      exchange(endpoint, req, res, req.read() as Buffer, started);
      return;
    }
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('error', () => {}); // the client went away: nothing to answer
    // Mostly one chunk: then no copy.
    req.on('end', () =>
      exchange(endpoint, req, res, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), started),
    );
  }

  /** The exchange: answered at once when the endpoint can (the plain-call fast path), else awaited. */
  function exchange(
    endpoint: McpEndpoint,
    req: IncomingMessage,
    res: ServerResponse,
    body: Buffer,
    started: number,
  ): void {
    const id = requestIdFor(req);
    let response: McpResponse | Promise<McpResponse>;
    try {
      response = endpoint.answer(new LaneMcpRequest(req, body));
    } catch (error) {
      respondMcp(res, id, failed(id, error), started);
      return;
    }
    if (response instanceof Promise) {
      response.then(
        (r) => respondMcp(res, id, r, started),
        (error: unknown) => respondMcp(res, id, failed(id, error), started),
      );
    } else respondMcp(res, id, response, started);
  }

  /** What server/error-handler.ts answers for a failure that is not a refusal. */
  function failed(id: string, error: unknown): McpResponse {
    logger?.error({ reqId: id, err: error }, 'request failed');
    return {
      status: 500,
      headers: { 'content-type': JSON_CONTENT_TYPE },
      body: Buffer.from(JSON.stringify(new ApiError('internal_error').toBody())),
    };
  }

  function respondMcp(res: ServerResponse, id: string, response: McpResponse, started: number): void {
    const sent = response.body;
    const headers = {
      [REQUEST_ID_HEADER]: id,
      vary: 'Origin',
      ...response.headers,
      'content-length': Buffer.isBuffer(sent) ? sent.length : chunksByteLength(sent),
      ...(options.closing() ? { connection: 'close' } : null),
    };
    turn.add(() => writeAnswer(res, response.status, headers, sent, mcpRoute, 'POST', MCP_PATH, id, started));
  }

  return { handle, answered: () => answered, mcpExchanges: () => mcpExchanges };
}
