/**
 * Graceful close (docs/decisions/0020): once `close()` starts (SIGTERM),
 * - every response sent from then on says `Connection: close` (those of requests already in
 *   flight included), so the client opens its next connection elsewhere instead of reusing one
 *   that is about to go away;
 * - a request still arriving on an open keep-alive connection gets 503 `service_unavailable` with
 *   `Retry-After` and `Connection: close` (server/http/server.ts);
 * - idle keep-alive connections are not cut at once (a client may be sending its next request on
 *   one at that very moment, and would see a reset): the close waits until every connection is
 *   gone or IDLE_CLOSE_AFTER_MS have passed, and only then closes the listening socket (Node's
 *   `server.close()` cuts the connections idle at that moment); connections that become idle
 *   later are cut every IDLE_CLOSE_AFTER_MS until the last is gone and the close completes.
 * During the grace time new connections are accepted and answered 503 too.
 */
import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export const CLOSING_RETRY_AFTER_SECONDS = 1;

/** How long an idle keep-alive connection may stay open once closing began. */
export const IDLE_CLOSE_AFTER_MS = 1000;

export interface Closing {
  /** True once close() began. */
  active(): boolean;
  /** Stops the server as above; resolves once every connection is gone and the socket is closed. */
  close(): Promise<void>;
}

export function trackClosing(server: Server): Closing {
  let closing = false;
  let closed: Promise<void> | null = null;
  // Open connections, counted per connection (nothing per request).
  let connections = 0;
  let allGone: (() => void) | null = null;
  server.on('connection', (socket: Socket) => {
    connections += 1;
    socket.once('close', () => {
      connections -= 1;
      if (connections === 0) allGone?.();
    });
  });

  async function close(): Promise<void> {
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
    if (!server.listening) return;
    const reaper = setInterval(() => server.closeIdleConnections(), IDLE_CLOSE_AFTER_MS);
    reaper.unref();
    try {
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    } finally {
      clearInterval(reaper);
    }
  }

  return { active: () => closing, close: () => (closed ??= close()) };
}
