/** GET /v1/ping: checks a key; counted like a lookup (by the limits layer). */
import { sendJson } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

export function registerPingRoute(ctx: RouteContext): void {
  getRoute(ctx, '/v1/ping', 'key', (_request, reply) =>
    sendJson(reply, { ok: true, timestamp: new Date().toISOString() }),
  );
}
