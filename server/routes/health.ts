/**
 * GET /health (SPEC.md Health response): no key, not counted. 503 `unhealthy` only when the accounts
 * database does not answer; a missing release fails the lookups (503 release_unavailable) but the
 * service stays healthy and the release block says why.
 */
import type { z } from 'zod';
import type { Health } from '../../shared/api-schemas.js';
import { sendJson } from '../send-json.js';
import { getRoute, type RouteContext } from './route.js';

/** A ping slower than this counts as a failed database check. */
export const DATABASE_CHECK_TIMEOUT_MS = 2_000;

export function registerHealthRoute(ctx: RouteContext): void {
  getRoute(ctx, '/health', 'public', async (request, reply) => {
    let database: 'ok' | 'error' = 'ok';
    try {
      await withTimeout(ctx.accounts.ping(), DATABASE_CHECK_TIMEOUT_MS);
    } catch (err) {
      database = 'error';
      request.log.error({ err }, 'health: the accounts database does not answer');
    }
    let cache: 'ok' | 'error' = 'ok';
    if (ctx.cache) {
      try {
        await withTimeout(ctx.cache.ping(), DATABASE_CHECK_TIMEOUT_MS);
      } catch (err) {
        cache = 'error';
        request.log.warn(
          { err },
          'health: the cache (Redis) does not answer; limits fall back to each replica',
        );
      }
    }
    const release = ctx.releases.health();
    const body: z.input<typeof Health> = {
      status: database === 'ok' ? 'healthy' : 'unhealthy',
      checks: {
        database,
        // Redis down is not unhealthy: each replica falls back to in-process limits.
        cache,
        release: release.status === 'ok' && release.error === undefined ? 'ok' : 'error',
      },
      release,
    };
    reply.header('cache-control', 'no-store');
    return sendJson(reply, body, database === 'ok' ? 200 : 503);
  });
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
