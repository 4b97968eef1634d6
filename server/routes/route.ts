/**
 * How every route of this server is declared: one GET handler, which answers HEAD too (the same
 * status and headers; node:http drops the body), and every other method on the same path answered 405 `{detail: "Method Not Allowed"}` with `Allow: GET` (a CORS preflight from the
 * console is answered instead). Fastify would answer those with 404; SPEC.md wants 405.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest, onRequestHookHandler } from 'fastify';
import type { AccountsPort } from '../auth.js';
import type { ReleaseSource } from '../releases/store.js';
import { answerPreflight } from '../http/origin.js';
import { methodNotAllowed } from '../error-handler.js';

export interface RouteContext {
  app: FastifyInstance;
  releases: ReleaseSource;
  accounts: AccountsPort;
  /** Refuses foreign browser origins, adds CORS headers for the console (every /v1 route). */
  originHook: onRequestHookHandler;
  /** The key check (every /v1 route but openapi.json). */
  keyHook: onRequestHookHandler;
  /** The /health `cache` check (Redis PING); absent: in-process counters, nothing to reach. */
  cache?: { ping(): Promise<void> } | undefined;
}

/**
 * `key`: /v1 operations (origin check, then the key, before any parameter); `browser`: /v1
 * without a key (openapi.json); `public`: unversioned routes (/health, /llms-full.txt).
 */
export type Access = 'key' | 'browser' | 'public';

const ALLOW = 'GET, HEAD';
const ANSWERED: readonly string[] = ['GET', 'HEAD'];

export function getRoute(
  ctx: RouteContext,
  url: string,
  access: Access,
  handler: (request: FastifyRequest, reply: FastifyReply) => unknown,
): void {
  const origin = access === 'public' ? [] : [ctx.originHook];
  const guards = access === 'key' ? [...origin, ctx.keyHook] : origin;
  ctx.app.route({ method: [...ANSWERED], url, onRequest: guards, handler });
  // The 405 is sent from an onRequest hook, before Fastify would parse (and maybe refuse) a body.
  const refuse = async (request: FastifyRequest, reply: FastifyReply) => {
    if (!answerPreflight(request, reply, ALLOW)) methodNotAllowed(reply, ALLOW);
    return reply;
  };
  ctx.app.route({
    method: ctx.app.supportedMethods.filter((m) => !ANSWERED.includes(m)),
    url,
    onRequest: [...origin, refuse],
    handler: async () => undefined,
  });
}
