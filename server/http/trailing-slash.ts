/**
 * SPEC.md Errors 2: a path with a trailing slash is redirected (308, method and body kept) to the
 * path without it, keeping the query string. Paths that would become protocol-relative (`//host`,
 * `/\host`) are not redirected: that would be an open redirect.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** An onRequest hook (callback style: no promise per request); a redirect ends the request. */
export function trailingSlashRedirect(
  request: FastifyRequest,
  reply: FastifyReply,
  done: HookHandlerDoneFunction,
): void {
  const url = request.url;
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.length <= 1 || !path.endsWith('/')) return done();
  const trimmed = path.replace(/\/+$/, '');
  if (trimmed === '' || !/^\/[^/\\]/.test(trimmed)) return done();
  reply.redirect(trimmed + (q === -1 ? '' : url.slice(q)), 308);
}
