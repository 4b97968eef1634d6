/**
 * The accounts store and the metering of one server process, from settings:
 * - embedded (default): accounts in ACCOUNTS_DB (SQLite, WAL), counters in this process, kept units
 *   written to the accounts file every USAGE_FLUSH_MS and at shutdown;
 * - shared: accounts in PostgreSQL (DATABASE_URL) and/or counters in Redis (REDIS_URL), for any
 *   number of stateless replicas.
 */
import { Redis } from 'ioredis';
import type { AccountsStore } from '../../accounts/index.js';
import { openConfiguredAccountsStore } from '../../accounts/open.js';
import type { AccountsPort } from '../call/keys.js';
import { CountingMeter, unmetered, type Meter } from './meter.js';
import type { Settings } from '../../shared/config.js';
import type { Counters } from './counters.js';
import { cachedKeyVerifier } from './key-verifier.js';
import { MemoryCounters } from './memory-counters.js';
import { PlanBook, freePlan } from './plans.js';
import { RedisCounters } from './redis-counters.js';
import { refusedKeyThrottle, type RefusedKeyThrottle } from './refused-keys.js';
import type { SharedStore } from './window-limiter.js';
import { UsageLedger } from './usage-ledger.js';

export type LimitSettings = Pick<
  Settings,
  | 'ACCOUNTS_DB'
  | 'DATABASE_URL'
  | 'DATABASE_SCHEMA'
  | 'REDIS_URL'
  | 'REDIS_KEY_PREFIX'
  | 'METERING'
  | 'FREE_REQUESTS_PER_MINUTE'
  | 'FREE_MONTHLY_QUOTA'
  | 'FREE_MAX_PAGE_SIZE'
  | 'USAGE_FLUSH_MS'
  | 'KEY_CACHE_MS'
>;

export interface ServerServices {
  /** The accounts store itself (admin operations). */
  store: AccountsStore;
  /** What the app checks keys with: cached, and 503 when the store does not answer. */
  accounts: AccountsPort;
  meter: Meter;
  refusedKeys: RefusedKeyThrottle;
  /** The /health `cache` check: Redis PING, or always ok for in-process counters. */
  cache: { ping(): Promise<void> };
  /** Where counts every process must share live (the console's e-mail limits use it too). */
  shared: SharedStore;
  /**
   * Resolves once Redis answers, or after REDIS_READY_WAIT_MS if it does not (then the limits hold
   * per replica until it does); at once without Redis. The server listens after it: a replica that
   * took requests before its client was connected counted them in process, not with the others.
   */
  ready(): Promise<void>;
  /** Writes pending counts, then closes the counters, Redis and the accounts store. */
  close(): Promise<void>;
}

export type Log = (message: string, error?: unknown) => void;

/** Each message at most once per `intervalMs`: an outage must not log once per request. */
export function throttledLog(log: Log, intervalMs = 10_000): Log {
  const last = new Map<string, number>();
  return (message, error) => {
    const now = Date.now();
    if (now - (last.get(message) ?? -Infinity) < intervalMs) return;
    last.set(message, now);
    log(message, error);
  };
}

/** The longest a starting server waits for its Redis client to connect before it listens anyway. */
export const REDIS_READY_WAIT_MS = 2_000;

/** Resolves when `redis` is ready or `waitMs` has passed, whichever comes first; true: ready. */
function redisReady(redis: Redis, waitMs: number): Promise<boolean> {
  if (redis.status === 'ready') return Promise.resolve(true);
  return new Promise((resolve) => {
    const done = (ready: boolean) => {
      clearTimeout(timer);
      redis.off('ready', onReady);
      resolve(ready);
    };
    const onReady = () => done(true);
    const timer = setTimeout(() => done(false), waitMs);
    redis.on('ready', onReady);
  });
}

/** A Redis client that fails fast while disconnected (callers fall back) and reconnects by itself. */
export function connectRedis(url: string): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 500,
    connectTimeout: 1_000,
    retryStrategy: (attempt) => Math.min(100 * attempt, 1_000),
    lazyConnect: false,
    // No auto-pipelining: RedisCounters already sends the takes of a turn as one script call per
    // counter set (one write for all of them), and the client's per-turn pipeline map made the
    // request state of every take outlive young collections (docs/decisions/0037).
    enableAutoPipelining: false,
  });
  redis.on('error', () => {}); // reported by the health check and the fallback's log line
  return redis;
}

/**
 * The embedded counters: in this process, kept units written to the accounts store by a usage
 * ledger. Used by a single server process, and by the primary of `--workers N` for all its workers.
 */
export function embeddedCounters(
  settings: Pick<LimitSettings, 'USAGE_FLUSH_MS'>,
  store: AccountsStore,
  log: Log,
  ledger: UsageLedger = new UsageLedger({
    store,
    flushMs: settings.USAGE_FLUSH_MS,
    onError: (error) =>
      log('usage: cannot write counted requests yet, keeping them for the next attempt', error),
  }),
): MemoryCounters {
  return new MemoryCounters({
    ledger,
    load: async (scope, id, month) =>
      (await store.getUsage(scope, id, month)) + ledger.pendingCount(scope, id, month),
  });
}

/**
 * What a worker of `--workers N` takes from its primary instead of owning it (server/cluster/),
 * when there is no Redis: the primary's counters; the window counts (the refused-key throttle, the
 * console's e-mail limits) are the primary's too.
 */
export interface SharedByPrimary {
  counters: Counters;
}

export function createServerServices(
  settings: LimitSettings,
  rawLog: Log = () => {},
  primary?: SharedByPrimary,
): ServerServices {
  const log = throttledLog(rawLog);
  const store = openConfiguredAccountsStore(settings);
  const redis = settings.REDIS_URL ? connectRedis(settings.REDIS_URL) : null;
  const accounts = cachedKeyVerifier(store, { ttlMs: settings.KEY_CACHE_MS, log });
  const shared: SharedStore = redis
    ? { kind: 'redis', redis, prefix: settings.REDIS_KEY_PREFIX }
    : primary
      ? { kind: 'primary' }
      : { kind: 'process' };
  const refusedKeys = refusedKeyThrottle({ store: shared });
  const cache = {
    async ping() {
      if (!redis) return;
      if (redis.status !== 'ready') throw new Error(`redis is ${redis.status}`);
      await redis.ping();
    },
  };
  let counters: Counters | null = null;
  let dayLedger: UsageLedger | null = null;
  let meter: Meter = unmetered;
  if (settings.METERING === 'on') {
    // Kept units per key and day (the console's usage chart) are written by this process's ledger;
    // the monthly counts by the counters' (the primary's, in a worker of `--workers N`).
    const ledger = new UsageLedger({
      store,
      flushMs: settings.USAGE_FLUSH_MS,
      onError: (error) =>
        log('usage: cannot write counted requests yet, keeping them for the next attempt', error),
    });
    dayLedger = ledger;
    counters = redis
      ? new RedisCounters({ redis, prefix: settings.REDIS_KEY_PREFIX, store, ledger, log })
      : (primary?.counters ?? embeddedCounters(settings, store, log, ledger));
    meter = new CountingMeter({
      plans: new PlanBook(freePlan(settings), store, 5_000, log),
      counters,
      log,
      onKept: (principal) => ledger.addDay(principal),
    });
  }
  let closing: Promise<void> | null = null;
  return {
    store,
    accounts,
    meter,
    refusedKeys,
    cache,
    shared,
    ready: async () => {
      if (redis === null || (await redisReady(redis, REDIS_READY_WAIT_MS))) return;
      log(
        `redis does not answer after ${REDIS_READY_WAIT_MS} ms: listening anyway; rate limits and quotas hold per replica until it does`,
        new Error(`redis is ${redis.status}`),
      );
    },
    close: () =>
      (closing ??= (async () => {
        try {
          await counters?.close();
          await dayLedger?.close();
        } catch (error) {
          log('usage: counted requests could not be written at shutdown', error);
        }
        redis?.disconnect();
        await store.close();
      })()),
  };
}
