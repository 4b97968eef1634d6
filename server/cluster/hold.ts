/**
 * Holds the requests an HTTP server receives, for the moment a cluster's workers change release
 * together (docs/decisions/0019): a held request is parsed and waits, unanswered, until the hold
 * is let go, then goes on exactly as if it had just arrived. Nothing is added to the request path
 * outside a hold: the server's own `emit` is replaced only while one lasts.
 */
import type { Server } from 'node:http';

/** Starts holding; the function returned (idempotent) lets the held requests go, in order. */
export function holdRequests(server: Server, limitMs: number): () => void {
  const held: unknown[][] = [];
  const own = Object.getOwnPropertyDescriptor(server, 'emit');
  const emit = server.emit;
  server.emit = function (this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event === 'request') {
      held.push(args);
      return true;
    }
    return Reflect.apply(emit, this, [event, ...args]) as boolean;
  };
  let done = false;
  const letGo = () => {
    if (done) return;
    done = true;
    clearTimeout(timer);
    if (own) Object.defineProperty(server, 'emit', own);
    else delete (server as Partial<Server>).emit;
    for (const args of held) Reflect.apply(server.emit, server, ['request', ...args]);
  };
  // A hold that nobody ends (its primary gone) ends by itself.
  const timer = setTimeout(letGo, limitMs);
  timer.unref();
  return letGo;
}
