/**
 * One place renders every refusal (SPEC.md Errors, STYLE.md 1):
 * - ApiError -> its status and `{error, message}` (+ Retry-After when it carries one);
 * - a query parameter out of range -> 422 `{detail: [...]}`;
 * - unknown path -> 404 `{detail: "Not Found"}`, wrong method -> 405 `{detail: "Method Not Allowed"}`;
 * - a framework refusal (malformed URL, unreadable body) -> its 4xx status with `{detail}`;
 * - anything else -> 500 `{error: "internal_error", message}`, logged with its stack.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../shared/errors.js';
import { QueryValidationError } from './call/query-params.js';
import { REQUEST_ID_HEADER } from './http/request-id.js';
import { sendJson } from './send-json.js';

export function errorHandler(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
): void {
  if (error instanceof ApiError) {
    if (error.retryAfter !== undefined) reply.header('retry-after', String(error.retryAfter));
    sendJson(reply, error.toBody(), error.status);
    return;
  }
  if (error instanceof QueryValidationError) {
    sendJson(reply, { detail: error.detail }, 422);
    return;
  }
  if ((error as FastifyError).code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    sendJson(reply, new ApiError('payload_too_large').toBody(), 413);
    return;
  }
  const status = (error as FastifyError).statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    sendJson(reply, { detail: error.message }, status);
    return;
  }
  request.log.error({ err: error }, 'request failed');
  sendJson(reply, new ApiError('internal_error').toBody(), 500);
}

export function notFound(_request: FastifyRequest, reply: FastifyReply): void {
  sendJson(reply, { detail: 'Not Found' }, 404);
}

export function methodNotAllowed(reply: FastifyReply, allow: string): FastifyReply {
  return sendJson(reply.header('allow', allow), { detail: 'Method Not Allowed' }, 405);
}

/** Fastify's own early refusals (malformed percent-encoding in the path, …) in the `detail` shape. */
export function frameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // Raised while routing, before the onRequest hook that sets the header on every other response.
  reply.header(REQUEST_ID_HEADER, request.id);
  const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 400;
  const detail =
    error.code === 'FST_ERR_BAD_URL'
      ? 'Bad Request: the path has malformed percent-encoding'
      : `Bad Request: ${error.message}`;
  sendJson(reply, { detail }, status);
}
