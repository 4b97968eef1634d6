/**
 * The key check as the server uses it: the accounts store's verifyKey behind a short cache
 * (KEY_CACHE_MS, at most 1 s), so a replica asks the shared database at most once per key and
 * interval and a revocation reaches every replica within that interval. A store that does not
 * answer turns into 503 service_unavailable with Retry-After (never a 500).
 */
import { ApiError } from '../../shared/errors.js';
import type { AccountsStore, KeyPrincipal } from '../../accounts/index.js';
import type { AccountsPort } from '../call/keys.js';
import { UNAVAILABLE_RETRY_AFTER_S } from './meter.js';

/** Most cached tokens; when full the cache starts over (a flood of distinct keys cannot grow it). */
const MAX_CACHED = 50_000;

export function cachedKeyVerifier(
  store: Pick<AccountsStore, 'verifyKey' | 'ping'>,
  options: { ttlMs: number; log?: (message: string, error?: unknown) => void },
): AccountsPort {
  const cache = new Map<string, { principal: KeyPrincipal | null; until: number }>();
  return {
    peekKey(token: string): KeyPrincipal | undefined {
      const hit = cache.get(token);
      return hit && hit.principal !== null && hit.until > Date.now() ? hit.principal : undefined;
    },
    async verifyKey(token: string, now?: Date): Promise<KeyPrincipal | null> {
      const at = Date.now();
      if (options.ttlMs > 0 && now === undefined) {
        const hit = cache.get(token);
        if (hit && hit.until > at) return hit.principal;
      }
      let principal: KeyPrincipal | null;
      try {
        principal = await store.verifyKey(token, now);
      } catch (error) {
        options.log?.('key check: the accounts store does not answer', error);
        throw new ApiError('service_unavailable', undefined, { retryAfter: UNAVAILABLE_RETRY_AFTER_S });
      }
      if (options.ttlMs > 0 && now === undefined) {
        if (cache.size >= MAX_CACHED) cache.clear();
        cache.set(token, { principal, until: at + options.ttlMs });
      }
      return principal;
    },
    ping: () => store.ping(),
  };
}
