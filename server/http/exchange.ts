/**
 * One request and its response, as the one HTTP stack (server/http/server.ts) hands it to a route:
 * what was asked (the request, its id, when it arrived, the client's address) and one way to
 * answer it. Every response of the API leaves through `write()`: the request id, the headers the
 * route added (Vary, CORS), `Connection: close` once the server is closing, the content length;
 * written at the end of the turn (turn-writes.ts) in one writev, then counted in the metrics and
 * logged. A write that fails destroys the socket: a half-written response must not leave the
 * client waiting for the rest.
 */
import type { Logger } from 'pino';
import { chunksByteLength, type BodyChunks } from '../encoding/chunks.js';
import { JSON_CONTENT_TYPE, responseJson } from '../encoding/json.js';
import { ApiError } from '../../shared/errors.js';
import type { CallResult } from '../call/envelope.js';
import type { RequestMetrics } from '../observability/metrics.js';
import { nothingToDrain } from './drain.js';
import type { HttpRequest, HttpResponse } from './message.js';
import { REQUEST_ID_HEADER, requestIdFor } from './request-id.js';
import { requestLine } from './request-log.js';
import type { TurnWrites } from './turn-writes.js';

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** A response body: text, bytes, or pieces written in order. */
export type Body = string | Buffer | BodyChunks;

/** What every exchange of one server shares. */
export interface ExchangeContext {
  logger: Logger | undefined;
  /** pino's level test, once: the level of a running server does not change. */
  logsRequests: boolean;
  metrics: RequestMetrics | undefined;
  turn: TurnWrites;
  closing(): boolean;
  /** The client's address for a request (the socket's, or X-Forwarded-For's behind a trusted proxy). */
  clientAddress(req: HttpRequest, socketAddress: string | undefined): string | undefined;
  /** True when the socket's peer is a trusted proxy (TRUST_PROXY), whose X-Forwarded-* headers count. */
  fromTrustedProxy(socketAddress: string | undefined): boolean;
  /** The metrics index of requests no route took. */
  unmatched: number;
  /** The refusal an error gets (the envelope's rule: an ApiError's own, else 500 internal_error). */
  errorResult(error: unknown): CallResult;
}

export class Exchange {
  readonly id: string;
  readonly started = performance.now();
  /** The metrics index of the route that took the request. */
  route: number;
  /** True: every response of this exchange says `Vary: Origin` (an API route). */
  varyOrigin = false;
  /** Headers the route adds to every response of this exchange (CORS). */
  extra: Record<string, string> | null = null;
  /** Read when the request arrives: a socket closed during a slow key check no longer has one. */
  private readonly socketAddress: string | undefined;
  private answered = false;

  constructor(
    readonly req: HttpRequest,
    readonly res: HttpResponse,
    private readonly context: ExchangeContext,
  ) {
    this.id = requestIdFor(req);
    this.route = context.unmatched;
    this.socketAddress = req.socket.remoteAddress;
  }

  get logger(): Logger | undefined {
    return this.context.logger;
  }

  /** The client's address (the envelope reads it only to count a refused key). */
  clientAddress(): string | undefined {
    return this.context.clientAddress(this.req, this.socketAddress);
  }

  /** The host the client asked for (X-Forwarded-Host behind a trusted proxy), as sent. */
  host(): string {
    const forwarded = this.forwarded('x-forwarded-host');
    return forwarded ?? this.req.headers.host ?? '';
  }

  /** `http` or `https` (X-Forwarded-Proto behind a trusted proxy). */
  protocol(): string {
    const forwarded = this.forwarded('x-forwarded-proto');
    if (forwarded !== undefined) return forwarded;
    return (this.req.socket as { encrypted?: boolean }).encrypted === true ? 'https' : 'http';
  }

  /** The last entry of an X-Forwarded-* header, when a trusted proxy sent it. */
  private forwarded(name: string): string | undefined {
    const value = this.req.headers[name];
    if (typeof value !== 'string' || !this.context.fromTrustedProxy(this.socketAddress)) return undefined;
    const last = value.slice(value.lastIndexOf(',') + 1).trim();
    return last === '' ? undefined : last;
  }

  /** Adds a header to every response of this exchange. */
  addHeader(name: string, value: string): void {
    (this.extra ??= {})[name] = value;
  }

  /**
   * Writes the response (once: a second answer is a bug, logged and dropped): `type` is its content
   * type (null: none), `headers` the ones the route adds.
   */
  write(
    status: number,
    type: string | null,
    headers: Readonly<Record<string, string | number>>,
    body: Body,
  ): void {
    if (this.answered) {
      this.context.logger?.error({ reqId: this.id }, 'a second response to one request was dropped');
      return;
    }
    this.answered = true;
    // One object, built in one go: the request id, the route's headers, the type, the call's.
    const all: Record<string, string | number> = { [REQUEST_ID_HEADER]: this.id };
    if (this.varyOrigin) all.vary = 'Origin';
    if (this.extra !== null) Object.assign(all, this.extra);
    if (type !== null) all['content-type'] = type;
    Object.assign(all, headers);
    // A 204 has no body and says no length (RFC 9110 8.6).
    if (status !== 204) {
      all['content-length'] =
        typeof body === 'string'
          ? Buffer.byteLength(body)
          : Buffer.isBuffer(body)
            ? body.length
            : chunksByteLength(body);
    }
    // Answered after closing began: the last response of its connection.
    if (this.context.closing()) all.connection = 'close';
    this.context.turn.add(() => this.send(status, all, body));
  }

  /** A JSON object as the body. */
  json(status: number, body: object, headers: Readonly<Record<string, string>> = NO_HEADERS): void {
    this.write(status, JSON_CONTENT_TYPE, headers, responseJson(body));
  }

  /** The framework-level refusal `{detail}` (400, 403, 404, 405). */
  detail(status: number, detail: string, headers: Readonly<Record<string, string>> = NO_HEADERS): void {
    this.json(status, { detail }, headers);
  }

  /** A failure of the route itself: logged, answered 500 `internal_error`. */
  fail(error: unknown): void {
    this.context.logger?.error({ reqId: this.id, err: error }, 'request failed');
    this.result(this.context.errorResult(new ApiError('internal_error')));
  }

  /** A refusal: its status, headers (Retry-After) and `{error, message}` body. */
  refuse(error: ApiError): void {
    this.result(this.context.errorResult(error));
  }

  /** A call's result (server/call/envelope.ts) as JSON: the answer, or the refusal's body. */
  result(result: CallResult): void {
    const answer = result.answer;
    if (answer === null) {
      this.json(result.status, result.refusal!.body, result.headers);
      return;
    }
    const json = answer.json;
    const body = json.blocks === null ? json.head : [json.head, json.blocks.bytes];
    this.write(result.status, JSON_CONTENT_TYPE, result.headers, body);
  }

  private send(status: number, headers: Record<string, string | number>, body: Body): void {
    const { req, res } = this;
    try {
      nothingToDrain(req);
      res.writeHead(status, headers);
      if (typeof body === 'string' || Buffer.isBuffer(body)) res.end(body);
      else {
        // Corked here, end() uncorks (corked already, write() schedules no uncork of its own).
        res.socket?.cork();
        const last = body.length - 1;
        for (let i = 0; i < last; i++) res.write(body[i]!);
        res.end(body[last]!);
      }
      this.context.metrics?.observe(this.route, status, (performance.now() - this.started) / 1000);
      if (this.context.logsRequests) {
        this.context.logger?.info(
          requestLine(this.id, req.method ?? '', req.url ?? '', status, this.started),
          'request completed',
        );
      }
    } catch (error) {
      this.context.logger?.error({ reqId: this.id, err: error }, 'writing the response failed');
      // Half written (and perhaps its socket left corked): the client must not wait for the rest.
      res.destroy();
    }
  }
}
