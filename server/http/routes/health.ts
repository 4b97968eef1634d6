/**
 * GET /health (docs/api.md#get-health): no key, not counted. 503 `unhealthy` only when the accounts
 * database does not answer; a missing release fails the lookups (503 release_unavailable) but the
 * service stays healthy and the release block says why.
 */
import type { z } from 'zod';
import type { Health } from '../../../shared/api-schemas.js';
import type { AccountsPort } from '../../call/keys.js';
import type { ReleaseSource } from '../../releases/store.js';
import type { Exchange } from '../exchange.js';
import type { RouteSpec } from '../router.js';

/** A ping slower than this counts as a failed database check. */
export const DATABASE_CHECK_TIMEOUT_MS = 2_000;

export interface HealthChecks {
  releases: ReleaseSource;
  accounts: AccountsPort;
  /** The /health `cache` check (Redis PING); absent: in-process counters, nothing to reach. */
  cache?: { ping(): Promise<void> } | undefined;
}

export function healthRoute(checks: HealthChecks): RouteSpec {
  return {
    path: '/health',
    method: 'GET',
    access: 'public',
    handler: (ex) => {
      void health(checks, ex).then(
        ({ status, body }) => ex.json(status, body, { 'cache-control': 'no-store' }),
        (error: unknown) => ex.fail(error),
      );
    },
  };
}

async function health(
  checks: HealthChecks,
  ex: Exchange,
): Promise<{ status: number; body: z.input<typeof Health> }> {
  const log = ex.logger;
  let database: 'ok' | 'error' = 'ok';
  try {
    await withTimeout(checks.accounts.ping(), DATABASE_CHECK_TIMEOUT_MS);
  } catch (err) {
    database = 'error';
    log?.error({ reqId: ex.id, err }, 'health: the accounts database does not answer');
  }
  let cache: 'ok' | 'error' = 'ok';
  if (checks.cache) {
    try {
      await withTimeout(checks.cache.ping(), DATABASE_CHECK_TIMEOUT_MS);
    } catch (err) {
      cache = 'error';
      log?.warn(
        { reqId: ex.id, err },
        'health: the cache (Redis) does not answer; limits fall back to each replica',
      );
    }
  }
  const release = checks.releases.health();
  return {
    status: database === 'ok' ? 200 : 503,
    body: {
      status: database === 'ok' ? 'healthy' : 'unhealthy',
      checks: {
        database,
        // Redis down is not unhealthy: each replica falls back to in-process limits.
        cache,
        release: release.status === 'ok' && release.error === undefined ? 'ok' : 'error',
      },
      release,
    },
  };
}

function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
