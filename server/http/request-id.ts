/** X-Request-ID: a sane incoming one is kept (so a proxy's id follows the request), else a new UUID. */
import { randomUUID } from 'node:crypto';
import type { HttpRequest } from './message.js';

export const REQUEST_ID_HEADER = 'x-request-id';
const SANE_REQUEST_ID = /^[A-Za-z0-9._:@/+=-]{1,128}$/;

export function requestIdFor(req: HttpRequest): string {
  const incoming = req.headers[REQUEST_ID_HEADER];
  return typeof incoming === 'string' && SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
}
