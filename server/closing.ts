/**
 * Graceful close: once `app.close()` starts (SIGTERM), requests still arriving on open keep-alive
 * connections get 503 `service_unavailable` with `Retry-After` and `Connection: close`, in the
 * SPEC.md envelope (Fastify's own closing answer has another body), so clients retry elsewhere
 * while the requests in flight finish.
 */
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../shared/errors.js';

export const CLOSING_RETRY_AFTER_SECONDS = 1;

/** Installs the hooks; returns whether the server is closing (the fast lane asks it). */
export function refuseWhileClosing(app: FastifyInstance): () => boolean {
  let closing = false;
  app.addHook('preClose', async () => {
    closing = true;
  });
  app.addHook('onRequest', (_request, reply, done) => {
    if (!closing) return done();
    reply.header('connection', 'close');
    done(
      new ApiError('service_unavailable', 'the server is shutting down: retry after Retry-After seconds', {
        retryAfter: CLOSING_RETRY_AFTER_SECONDS,
      }),
    );
  });
  return () => closing;
}
