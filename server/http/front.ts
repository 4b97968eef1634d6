/**
 * The front of the one HTTP stack (docs/decisions/0039-plain-gets-without-node-http.md): a plain
 * GET, whole in the bytes already received, is read here and answered without node:http's request
 * and response objects; everything else is node:http's, as before. node:http's own per-request
 * work (an IncomingMessage and a ServerResponse, their stream state, events and timers) was 5 to
 * 9 µs of CPU of each lookup on the bench machine (docs/performance.md, the peer section's raw
 * side): a third of a `/v1/ip` answer.
 *
 * The rule, and the only thing callers see: the server's connections start here; the first request
 * of a connection that is not a plain GET hands the connection to node:http for the rest of its
 * life, the bytes not yet parsed with it, so node:http's limits, timeouts, refusals (400, 408, 431)
 * and bodies apply exactly as they did. A plain GET (parseHead) is: the request line `GET
 * <origin-form target of RFC 3986 characters> HTTP/1.1`, at most 64 header fields of token names
 * and visible-ASCII values, each name once, none of Content-Length, Transfer-Encoding, Upgrade,
 * Expect, and a Connection header only if it says keep-alive, the whole head at most 8 KiB and
 * already received. Requests of one connection are answered one at a time, in order (pipelined
 * ones wait in the buffer, reading pauses past 64 KiB). Requests reach the server's 'request'
 * listeners as node:http's would (server.emit, so a hold of the workers applies), and responses
 * leave with the bytes node:http would write: the status line, the headers in the order given,
 * `Date`, then `Connection: keep-alive` and `Keep-Alive: timeout=N` (or `Connection: close`, then
 * the connection ends). An idle connection is closed after the server's keep-alive timeout and its
 * buffer, as node:http does, and by `closeIdleConnections()` (which `server.close()` calls); one
 * that sends nothing at all gets node:http's 408 (its 'clientError') after the headers timeout.
 */
import { STATUS_CODES, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';

/** The head of a request the front takes: at most this many bytes (node:http's limit is 16 KiB). */
export const FRONT_MAX_HEAD = 8192;
/** Header fields at most. */
const MAX_FIELDS = 64;
/** Bytes of pipelined requests buffered while one is answered before reading pauses. */
const MAX_BUFFERED = 65_536;

/** A request line's target: `/` then RFC 3986 characters (a `%` escape stays as sent). */
const TARGET = /^\/[A-Za-z0-9\-._~:/?#[\]@!$&'()*+,;=%]*$/;
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A field value's characters as the front takes them: visible ASCII, space and tab. */
const FIELD_VALUE = /^[\t\x20-\x7e]*$/;
/** What node:http refuses to write in a header (its checkInvalidHeaderChar). */
const INVALID_HEADER_CHAR = /[^\t\x20-\x7e\x80-\xff]/;
/** Fields whose request is node:http's: a body, an upgrade, an expectation, a close. */
const HANDED_OVER = new Set(['content-length', 'transfer-encoding', 'upgrade', 'expect', '__proto__']);

/** A plain GET as parseHead reads it. */
export interface PlainGet {
  url: string;
  headers: IncomingHttpHeaders;
  /** The bytes of the head, its blank line included. */
  length: number;
}

/**
 * The plain GET at the start of `bytes` (see the module's comment), or null: not one, or not all
 * there yet; either way node:http's.
 */
export function parseHead(bytes: Buffer): PlainGet | null {
  if (bytes.length < 18 || bytes[0] !== 0x47 || bytes[1] !== 0x45 || bytes[2] !== 0x54 || bytes[3] !== 0x20) {
    return null;
  }
  const end = bytes.indexOf('\r\n\r\n', 0, 'latin1');
  if (end === -1 || end + 4 > FRONT_MAX_HEAD) return null;
  const head = bytes.toString('latin1', 0, end + 2);
  let lineEnd = head.indexOf('\r\n');
  if (!head.startsWith(' HTTP/1.1', lineEnd - 9)) return null;
  const url = head.slice(4, lineEnd - 9);
  if (!TARGET.test(url)) return null;
  const headers: IncomingHttpHeaders = {};
  let fields = 0;
  for (let start = lineEnd + 2; start < head.length; start = lineEnd + 2) {
    lineEnd = head.indexOf('\r\n', start);
    const colon = head.indexOf(':', start);
    if (colon === -1 || colon > lineEnd || ++fields > MAX_FIELDS) return null;
    const name = head.slice(start, colon);
    if (!TOKEN.test(name)) return null;
    const value = head.slice(colon + 1, lineEnd).replace(/^[\t ]+|[\t ]+$/g, '');
    if (!FIELD_VALUE.test(value)) return null;
    const key = name.toLowerCase();
    if (HANDED_OVER.has(key) || Object.hasOwn(headers, key)) return null;
    if (key === 'connection' && value.toLowerCase() !== 'keep-alive') return null;
    headers[key] = value;
  }
  return { url, headers, length: end + 4 };
}

/** What the front counts (diagnostics and tests). */
export interface FrontStats {
  /** Requests the front answered. */
  taken: number;
  /** Connections handed to node:http. */
  handedOver: number;
}

/** A request the front read: the fields of IncomingMessage the stack reads. */
export class FrontRequest {
  readonly method = 'GET';
  readonly httpVersionMajor = 1;
  readonly httpVersionMinor = 1;
  readonly httpVersion = '1.1';
  readonly complete = true;
  readonly readableLength = 0;
  constructor(
    readonly url: string,
    readonly headers: IncomingHttpHeaders,
    readonly socket: Socket,
  ) {}

  /** proxy-addr reads the socket under its old name. */
  get connection(): Socket {
    return this.socket;
  }
}

/** Date as node:http writes it, its text renewed once a second. */
let dateSecond = -1;
let dateText = '';
function dateLine(): string {
  const second = Math.floor(Date.now() / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = `Date: ${new Date(second * 1000).toUTCString()}\r\n`;
  }
  return dateText;
}

/** A response the front writes: the fields of ServerResponse the stack uses (exchange.ts). */
export class FrontResponse {
  /** The exchange corks the socket only when there is one; the front writes in one go anyway. */
  readonly socket = null;
  private head: string | null = null;
  private readonly pieces: Array<string | Buffer> = [];
  private last = false;
  private done = false;

  constructor(private readonly connection: FrontConnection) {}

  writeHead(status: number, headers: Readonly<Record<string, string | number>>): this {
    if (this.head !== null) throw new Error('writeHead twice');
    let head = `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'unknown'}\r\n`;
    let sized = status === 204 || status === 304;
    for (const name in headers) {
      const value = String(headers[name]);
      if (!TOKEN.test(name)) throw new TypeError(`Header name must be a valid HTTP token ["${name}"]`);
      if (INVALID_HEADER_CHAR.test(value))
        throw new TypeError(`Invalid character in header content ["${name}"]`);
      const key = name.length === 10 || name.length === 14 ? name.toLowerCase() : '';
      if (key === 'connection' && value.toLowerCase() === 'close') this.last = true;
      else if (key === 'content-length') sized = true;
      head += `${name}: ${value}\r\n`;
    }
    // node:http would send an unsized body chunked: no response of the stack is one.
    if (!sized) throw new Error('the front writes sized responses only');
    // The client half-closed: the last of its requests closes the connection.
    if (this.connection.closeAfter && this.connection.nothingWaiting()) this.last = true;
    head += dateLine();
    head += this.last
      ? this.connection.hasConnectionField(headers)
        ? '\r\n'
        : 'Connection: close\r\n\r\n'
      : this.connection.keepAliveLines();
    this.head = head;
    return this;
  }

  write(chunk: string | Buffer): boolean {
    this.pieces.push(chunk);
    return true;
  }

  end(chunk?: string | Buffer): this {
    if (this.done) return this;
    this.done = true;
    if (chunk !== undefined) this.pieces.push(chunk);
    this.connection.send(this.head ?? '', this.pieces, this.last);
    return this;
  }

  destroy(): this {
    this.connection.socket.destroy();
    return this;
  }
}

type Deliver = (req: FrontRequest, res: FrontResponse) => void;

/** One connection while the front has it. */
class FrontConnection {
  private pending: Buffer | null = null;
  private busy = false;
  private ended = false;
  /** The client half-closed, or the server is done with it: the last response closes it. */
  closeAfter = false;
  /** A timer runs: the headers timeout before the first request, the keep-alive one after. */
  private idleTimer = true;
  /** No request has come yet: a timeout is node:http's 408, not a keep-alive close. */
  private fresh = true;
  private readonly onData = (chunk: Buffer) => this.received(chunk);
  private readonly onEnd = () => this.clientEnded();
  private readonly onTimeout = () => this.timedOut();
  private readonly onError = () => this.socket.destroy();
  private readonly onDrain = () => this.next();

  constructor(
    readonly socket: Socket,
    private readonly front: Front,
  ) {
    socket.on('data', this.onData);
    socket.on('end', this.onEnd);
    socket.on('timeout', this.onTimeout);
    socket.on('error', this.onError);
    socket.on('drain', this.onDrain);
    socket.once('close', () => front.connections.delete(this));
    // A connection that sends nothing is refused 408 after the headers timeout, as node:http does.
    socket.setTimeout(front.server.headersTimeout);
  }

  private timedOut(): void {
    if (!this.fresh) return void this.socket.destroy();
    const error = Object.assign(new Error('Request timeout'), { code: 'ERR_HTTP_REQUEST_TIMEOUT' });
    this.front.server.emit('clientError', error, this.socket);
  }

  /** No request waits behind the one being answered. */
  nothingWaiting(): boolean {
    return this.pending === null;
  }

  /** Idle: no request being answered, none waiting. */
  idle(): boolean {
    return !this.busy && this.pending === null;
  }

  hasConnectionField(headers: Readonly<Record<string, unknown>>): boolean {
    for (const name in headers) if (name.toLowerCase() === 'connection') return true;
    return false;
  }

  keepAliveLines(): string {
    return this.front.keepAliveLines();
  }

  private received(chunk: Buffer): void {
    this.pending = this.pending === null ? chunk : Buffer.concat([this.pending, chunk]);
    if (!this.busy) this.next();
    else if (this.pending.length > MAX_BUFFERED) this.socket.pause();
  }

  private clientEnded(): void {
    this.closeAfter = true;
    if (this.idle()) this.socket.end();
  }

  /** Answers the next buffered request, or hands the connection over when it is not a plain GET. */
  private next(): void {
    if (this.busy || this.ended || this.pending === null) return;
    // A client reading slowly: the next answer waits until the last has gone out.
    if (this.socket.writableNeedDrain) return;
    const get = parseHead(this.pending);
    if (get === null) return this.handOver();
    this.pending = get.length === this.pending.length ? null : this.pending.subarray(get.length);
    if (this.socket.isPaused() && (this.pending?.length ?? 0) <= MAX_BUFFERED) this.socket.resume();
    this.busy = true;
    this.fresh = false;
    if (this.idleTimer) {
      this.idleTimer = false;
      this.socket.setTimeout(0);
    }
    this.front.stats.taken += 1;
    this.front.deliver(new FrontRequest(get.url, get.headers, this.socket), new FrontResponse(this));
  }

  /** Writes one response (one write: the head and a text body as one string, else corked). */
  send(head: string, pieces: Array<string | Buffer>, last: boolean): void {
    const socket = this.socket;
    if (pieces.length === 1 && typeof pieces[0] === 'string') socket.write(head + pieces[0]);
    else {
      socket.cork();
      socket.write(head, 'latin1');
      for (let i = 0; i < pieces.length; i++) socket.write(pieces[i]!);
      socket.uncork();
    }
    this.busy = false;
    if (last) {
      this.ended = true;
      socket.off('data', this.onData);
      socket.end();
      return;
    }
    if (this.pending !== null) this.next();
    else if (this.closeAfter) socket.end();
    else {
      this.idleTimer = true;
      socket.setTimeout(this.front.idleTimeoutMs());
    }
  }

  /** node:http takes the connection, and the bytes not yet parsed, for the rest of its life. */
  private handOver(): void {
    const socket = this.socket;
    socket.off('data', this.onData);
    socket.off('end', this.onEnd);
    socket.off('timeout', this.onTimeout);
    socket.off('error', this.onError);
    socket.off('drain', this.onDrain);
    socket.setTimeout(0);
    this.front.connections.delete(this);
    this.front.stats.handedOver += 1;
    if (socket.isPaused()) socket.resume();
    if (this.pending !== null) socket.unshift(this.pending);
    this.pending = null;
    this.front.handOver(socket);
  }
}

/** The front of one server. */
class Front {
  readonly connections = new Set<FrontConnection>();
  readonly stats: FrontStats = { taken: 0, handedOver: 0 };
  private keepAliveMs = -1;
  private keepAliveText = '';

  constructor(
    readonly server: Server,
    private readonly nodeListeners: Array<(socket: Socket) => void>,
  ) {}

  deliver: Deliver = (req, res) => {
    this.server.emit('request', req, res);
  };

  handOver(socket: Socket): void {
    for (const listener of this.nodeListeners) listener.call(this.server, socket);
  }

  /** How long an idle connection stays open: the keep-alive timeout and its buffer, as node:http. */
  idleTimeoutMs(): number {
    const buffer = (this.server as { keepAliveTimeoutBuffer?: number }).keepAliveTimeoutBuffer;
    return this.server.keepAliveTimeout + (buffer ?? 1000);
  }

  keepAliveLines(): string {
    const ms = this.server.keepAliveTimeout;
    if (ms !== this.keepAliveMs) {
      this.keepAliveMs = ms;
      // node:http says the timeout in whole seconds whenever there is one (timeout=0 under 1 s).
      this.keepAliveText =
        ms > 0
          ? `Connection: keep-alive\r\nKeep-Alive: timeout=${Math.floor(ms / 1000)}\r\n\r\n`
          : 'Connection: keep-alive\r\n\r\n';
    }
    return this.keepAliveText;
  }
}

/**
 * Puts the front before node:http on `server` (before other 'connection' listeners are added:
 * node:http's own is the only one then). Returns what it counts.
 */
export function installFront(server: Server): FrontStats {
  const nodeListeners = server.listeners('connection') as Array<(socket: Socket) => void>;
  server.removeAllListeners('connection');
  const front = new Front(server, nodeListeners);
  server.on('connection', (socket: Socket) => {
    front.connections.add(new FrontConnection(socket, front));
  });
  const closeIdle = server.closeIdleConnections.bind(server);
  server.closeIdleConnections = () => {
    closeIdle();
    for (const connection of front.connections) if (connection.idle()) connection.socket.destroy();
  };
  const closeAll = server.closeAllConnections.bind(server);
  server.closeAllConnections = () => {
    closeAll();
    for (const connection of front.connections) connection.socket.destroy();
  };
  return front.stats;
}
