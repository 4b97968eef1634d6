/**
 * One log line per request: request id (pino's `reqId`), method, URL with key-like query
 * parameters redacted, status and time in milliseconds. Headers are never logged, so neither is
 * the Authorization header.
 */
import { LogController, type FastifyReply, type FastifyRequest } from 'fastify';
import { redactUrl } from './redact.js';

export class RequestLogController extends LogController {
  override incomingRequest(): void {}

  override requestCompleted(
    error: Error | null | undefined,
    request: FastifyRequest,
    reply: FastifyReply,
  ): void {
    const line = {
      method: request.method,
      url: redactUrl(request.url),
      statusCode: reply.statusCode,
      responseTime: Math.round(reply.elapsedTime * 10) / 10,
    };
    if (error) reply.log.error({ ...line, err: error }, 'request errored');
    else reply.log.info(line, 'request completed');
  }
}

/**
 * The same line for a request answered in front of Fastify (the fast lane): pino's `reqId` first,
 * as a Fastify request's child logger puts it.
 */
export function requestLine(reqId: string, method: string, url: string, statusCode: number, started: number) {
  return {
    reqId,
    method,
    url: redactUrl(url),
    statusCode,
    responseTime: Math.round((performance.now() - started) * 10) / 10,
  };
}
