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
