/**
 * A count of events per key in a fixed window (rate-limiter-flexible), kept where every process of
 * the deployment sees the same count: in this process (one server process), in the primary of
 * `server serve --workers N` (rate-limiter-flexible's cluster limiter over the IPC channel), or in
 * Redis (REDIS_URL; while Redis does not answer, each process counts for itself). Used by the
 * refused-key throttle (refused-keys.ts) and the console's e-mail limits (console/send-limiter.ts).
 *
 * Once a key is over its limit, the process remembers it until the window ends and refuses it
 * without asking the shared store again: a flood of one key costs one round trip per process and
 * window, not one per event.
 */
import type { Redis } from 'ioredis';
import {
  RateLimiterCluster,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';

/** Where the counts of every process of the deployment live. */
export type SharedStore =
  { kind: 'process' } | { kind: 'primary' } | { kind: 'redis'; redis: Redis; prefix: string };

export interface WindowLimiterOptions {
  /** The limiter's name: counts of different limiters never mix. */
  name: string;
  /** Events allowed per key and window. */
  points: number;
  durationS: number;
}

export interface Consumed {
  /** False: the key is over its limit in this window. */
  ok: boolean;
  /** Milliseconds until the window ends. */
  msBeforeNext: number;
}

export interface WindowLimiter {
  /** Counts one event of `key` (nothing is counted when it is refused). */
  consume(key: string): Promise<Consumed>;
  /** Takes one counted event of `key` back. */
  reward(key: string): Promise<void>;
}

/** Keys known to be over their limit, until their window ends; at most this many remembered. */
const MAX_BLOCKED = 100_000;

export function windowLimiter(store: SharedStore, options: WindowLimiterOptions): WindowLimiter {
  const { name, points, durationS: duration } = options;
  const memory = new RateLimiterMemory({ keyPrefix: name, points, duration });
  const limiter: RateLimiterAbstract =
    store.kind === 'redis'
      ? new RateLimiterRedis({
          storeClient: store.redis,
          keyPrefix: `${store.prefix}${name}`,
          points,
          duration,
          insuranceLimiter: memory,
          rejectIfRedisNotReady: true,
        })
      : store.kind === 'primary'
        ? new RateLimiterCluster({ keyPrefix: name, points, duration, timeoutMs: 2_000 })
        : memory;
  const blocked = new Map<string, number>();
  return {
    async consume(key) {
      const until = blocked.get(key);
      if (until !== undefined) {
        const left = until - Date.now();
        if (left > 0) return { ok: false, msBeforeNext: left };
        blocked.delete(key);
      }
      try {
        const res = await limiter.consume(key);
        return { ok: true, msBeforeNext: res.msBeforeNext };
      } catch (rejection) {
        if (!(rejection instanceof RateLimiterRes)) throw rejection;
        if (blocked.size >= MAX_BLOCKED) blocked.clear();
        blocked.set(key, Date.now() + rejection.msBeforeNext);
        return { ok: false, msBeforeNext: rejection.msBeforeNext };
      }
    },
    async reward(key) {
      await limiter.reward(key);
    },
  };
}
