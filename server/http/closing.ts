/**
 * Graceful close (docs/decisions/0020): once `app.close()` starts (SIGTERM),
 * - every response sent from then on says `Connection: close` (those of requests already in
 *   flight included), so the client opens its next connection elsewhere instead of reusing one
 *   that is about to go away;
 * - a request still arriving on an open keep-alive connection gets 503 `service_unavailable` with
 *   `Retry-After` and `Connection: close`, in the SPEC.md envelope (Fastify's own closing answer
 *   has another body);
 * - idle keep-alive connections are not cut at once (a client may be sending its next request on
 *   one at that very moment, and would see a reset): the close waits until every connection is
 *   gone or IDLE_CLOSE_AFTER_MS have passed, and only then closes the listening socket (Node's
 *   `server.close()` cuts the connections idle at that moment); connections that become idle
 *   later are cut every IDLE_CLOSE_AFTER_MS until the last is gone and the close completes.
 * Fastify's own reaping of idle connections at close is switched off (`forceCloseConnections:
 * false` in app.ts). During the grace time new connections are accepted and answered 503 too.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../../shared/errors.js';

export const CLOSING_RETRY_AFTER_SECONDS = 1;

/** How long an idle keep-alive connection may stay open once closing began. */
export const IDLE_CLOSE_AFTER_MS = 1000;

/** Installs the hooks; returns whether the server is closing (the fast lane asks it). */
export function refuseWhileClosing(app: FastifyInstance): () => boolean {
  let closing = false;
  let reaper: NodeJS.Timeout | null = null;
  // Open connections, counted per connection (nothing per request).
  let connections = 0;
  let allGone: (() => void) | null = null;
  app.server.on('connection', (socket: Socket) => {
    connections += 1;
    socket.once('close', () => {
      connections -= 1;
      if (connections === 0) allGone?.();
    });
  });
  app.addHook('preClose', async () => {
    closing = true;
    if (connections > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((resolve) => {
        allGone = resolve;
        timer = setTimeout(resolve, IDLE_CLOSE_AFTER_MS);
      });
      clearTimeout(timer);
      allGone = null;
    }
    const server: Server = app.server;
    reaper = setInterval(() => server.closeIdleConnections(), IDLE_CLOSE_AFTER_MS);
    reaper.unref();
  });
  app.addHook('onClose', async () => {
    if (reaper !== null) clearInterval(reaper);
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
  // Requests that were in flight when closing began.
  app.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) reply.header('connection', 'close');
    done(null, payload);
  });
  return () => closing;
}
