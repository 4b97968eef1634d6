/**
 * The refused-key throttle (docs/api.md#authentication): more than 100 refused or missing keys from
 * one client address in one minute answer 429 `rate_limited` with Retry-After (instead of 401).
 * Counted per address (IPv6 per /64, IPv4-mapped as IPv4; client-address.ts), only for refused
 * requests: a valid key never pays for the check. The count is shared by every process of the
 * deployment (window-limiter.ts: the primary of `--workers N`, or Redis across replicas), and an
 * address over its limit is refused by each process without asking again until its minute ends.
 */
import { ApiError } from '../../shared/errors.js';
import { clientAddressKey } from './client-address.js';
import { windowLimiter, type SharedStore } from './window-limiter.js';

/** More than this many refused keys per address and minute are throttled (docs/api.md#limits). */
export const REFUSED_KEYS_PER_MINUTE = 100;

export interface RefusedKeyThrottle {
  /** Counts a refused key from `address`; throws 429 rate_limited once over the limit. */
  refused(address: string | undefined): Promise<void>;
}

export interface RefusedKeyThrottleOptions {
  /** Where the counts are shared (default: this process). */
  store?: SharedStore;
  points?: number;
  durationS?: number;
}

export function refusedKeyThrottle(options: RefusedKeyThrottleOptions = {}): RefusedKeyThrottle {
  const limiter = windowLimiter(options.store ?? { kind: 'process' }, {
    name: 'refused',
    points: options.points ?? REFUSED_KEYS_PER_MINUTE,
    durationS: options.durationS ?? 60,
  });
  return {
    async refused(address) {
      let consumed;
      try {
        consumed = await limiter.consume(clientAddressKey(address));
      } catch {
        return; // the limiter itself failed (its insurance did too): stay open
      }
      if (!consumed.ok) {
        throw new ApiError(
          'rate_limited',
          'too many requests with a missing or invalid API key from this address: wait Retry-After seconds',
          { retryAfter: Math.max(1, Math.ceil(consumed.msBeforeNext / 1000)) },
        );
      }
    },
  };
}
