/**
 * Refusals of the HTTP layer, before a request exists (node:http's 'clientError'): an oversized
 * request line or header block (431), bytes the parser refuses (400), a request whose headers or
 * body did not arrive in time (408). Answered in the framework envelope `{detail}`
 * (docs/api.md#errors) with an `X-Request-ID`, then the connection is closed.
 */
import { randomUUID } from 'node:crypto';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { REQUEST_ID_HEADER } from './request-id.js';
import { JSON_CONTENT_TYPE, responseJson } from '../encoding/json.js';

/** Node's limit on the request line and headers together (http.maxHeaderSize, 16 KiB). */
const MAX_HEADER_KIB = 16;

/** How long a refused connection may take to read the answer before it is cut. */
const LINGER_MS = 2_000;

interface ClientError extends Error {
  code?: string;
  /** llhttp's reason, e.g. "Invalid header value char". */
  reason?: string;
  /** The bytes the parser refused (a Buffer, parse errors only). */
  rawPacket?: unknown;
}

/** The status and `detail` text for a parser or timeout error. */
export function clientErrorAnswer(
  error: ClientError,
  timeouts: { headersMs: number; requestMs: number },
): { status: number; detail: string } {
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return {
      status: 408,
      detail: `Request Timeout: send the headers within ${timeouts.headersMs} ms and the whole request within ${timeouts.requestMs} ms`,
    };
  }
  if (error.code === 'HPE_HEADER_OVERFLOW') {
    return {
      status: 431,
      detail: `Request Header Fields Too Large: the request line and headers must fit in ${MAX_HEADER_KIB} KiB`,
    };
  }
  const reason = typeof error.reason === 'string' && error.reason !== '' ? error.reason : 'malformed request';
  return { status: 400, detail: `Bad Request: ${reason}` };
}

/**
 * The raw response bytes (there is no request object to answer through); without the body when the
 * refused request was a HEAD.
 */
export function clientErrorResponse(
  status: number,
  detail: string,
  options: { head?: boolean; requestId?: string } = {},
): string {
  const body = responseJson({ detail });
  const requestId = options.requestId ?? randomUUID();
  return (
    `HTTP/1.1 ${status} ${STATUS_CODES[status] ?? 'Error'}\r\n` +
    `content-type: ${JSON_CONTENT_TYPE}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `${REQUEST_ID_HEADER}: ${requestId}\r\n` +
    'connection: close\r\n\r\n' +
    (options.head === true ? '' : body)
  );
}

export function createClientErrorHandler(
  timeouts: { headersMs: number; requestMs: number },
  log: () => Logger | undefined,
) {
  return function clientErrorHandler(error: ClientError, socket: Socket): void {
    // A reset connection: nobody to answer.
    if (error.code === 'ECONNRESET' || socket.destroyed) return;
    // Node's caution: never write into a response that has already started on this socket.
    const inFlight = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
    const { status, detail } = clientErrorAnswer(error, timeouts);
    log()?.debug({ code: error.code, status }, 'client error');
    if (!socket.writable || inFlight?.headersSent === true) {
      socket.destroy();
      return;
    }
    const packet = error.rawPacket;
    const head = Buffer.isBuffer(packet) && packet.subarray(0, 5).toString('latin1') === 'HEAD ';
    socket.end(clientErrorResponse(status, detail, { head }));
    setTimeout(() => socket.destroy(), LINGER_MS).unref();
  };
}
