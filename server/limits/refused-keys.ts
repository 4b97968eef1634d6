/**
 * The refused-key throttle (docs/api.md#authentication): more than 100 refused or missing keys from one client address in one
 * minute answer 429 `rate_limited` with Retry-After (instead of 401). Counted per address (IPv6 per
 * /64, IPv4-mapped as IPv4; client-address.ts), only for refused requests: a valid key never pays
 * for the check. With Redis the count is shared by every replica (rate-limiter-flexible's atomic
 * Redis limiter); while Redis is unreachable its in-memory insurance limiter keeps the throttle
 * enforced per replica. The workers of one `--workers N` server without Redis count in their primary.
 */
import type { Redis } from 'ioredis';
import {
  RateLimiterCluster,
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import { ApiError } from '../../shared/errors.js';
import { clientAddressKey } from './client-address.js';

/** More than this many refused keys per address and minute are throttled (docs/api.md#limits). */
export const REFUSED_KEYS_PER_MINUTE = 100;

export interface RefusedKeyThrottle {
  /** Counts a refused key from `address`; throws 429 rate_limited once over the limit. */
  refused(address: string | undefined): Promise<void>;
}

export interface RefusedKeyThrottleOptions {
  redis?: Redis;
  prefix?: string;
  points?: number;
  durationS?: number;
  /**
   * A worker of `server serve --workers N` without Redis: counted by the primary process (which
   * runs rate-limiter-flexible's RateLimiterClusterMaster), so the limit holds across workers.
   */
  cluster?: boolean;
}

export function refusedKeyThrottle(options: RefusedKeyThrottleOptions = {}): RefusedKeyThrottle {
  const points = options.points ?? REFUSED_KEYS_PER_MINUTE;
  const duration = options.durationS ?? 60;
  const memory = new RateLimiterMemory({ points, duration });
  const limiter: RateLimiterAbstract = options.redis
    ? new RateLimiterRedis({
        storeClient: options.redis,
        keyPrefix: `${options.prefix ?? 'ipscope:'}refused`,
        points,
        duration,
        insuranceLimiter: memory,
        rejectIfRedisNotReady: true,
      })
    : options.cluster
      ? new RateLimiterCluster({ keyPrefix: 'refused', points, duration, timeoutMs: 2_000 })
      : memory;
  return {
    async refused(address) {
      try {
        await limiter.consume(clientAddressKey(address));
      } catch (rejection) {
        if (rejection instanceof RateLimiterRes) {
          throw new ApiError(
            'rate_limited',
            'too many requests with a missing or invalid API key from this address: wait Retry-After seconds',
            { retryAfter: Math.max(1, Math.ceil(rejection.msBeforeNext / 1000)) },
          );
        }
        // The limiter itself failed (should not happen with the insurance limiter): stay open.
      }
    },
  };
}
