/** The request and response the stack works with, whoever parsed the request (front.ts). */
import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';
import type { Socket } from 'node:net';

/**
 * What the stack reads of a request: node:http's IncomingMessage, or the front's (front.ts), which
 * takes only plain GETs (a body is read from node:http's alone).
 */
export interface HttpRequest {
  readonly method?: string | undefined;
  readonly url?: string | undefined;
  readonly headers: IncomingHttpHeaders;
  readonly httpVersionMajor: number;
  readonly httpVersionMinor: number;
  readonly socket: Socket;
  readonly complete: boolean;
  readonly readableLength: number;
}

/** What the stack uses of a response: node:http's ServerResponse, or the front's. */
export interface HttpResponse {
  writeHead(status: number, headers: OutgoingHttpHeaders): unknown;
  write(chunk: string | Buffer): unknown;
  end(chunk: string | Buffer): unknown;
  destroy(): unknown;
  readonly socket: { cork(): void } | null;
}
