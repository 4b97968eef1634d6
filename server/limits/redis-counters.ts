/**
 * Counters shared by every replica in Redis (REDIS_URL). One Lua script checks the monthly quota,
 * the project cap and the minute window and takes the unit from all of them, atomically in Redis:
 * never read-then-write from a replica, so N replicas under any load answer exactly what the
 * limits allow. The minute window is fixed and uses Redis's clock (TIME), so replicas with skewed
 * clocks still share one window.
 *
 * Redis keeps nothing on disk here, so it is not the durable copy of the monthly counts: kept units
 * also go to the accounts store (UsageLedger), and a month counter missing from Redis (first use,
 * Redis restarted) is seeded from it (`SET … NX`, so concurrent seeders agree).
 *
 * Redis unreachable: each replica falls back to in-process counters seeded with the last counts it
 * saw, so lookups keep being answered (the minute limit then holds per replica). The units kept
 * meanwhile go to the durable usage as always and, when Redis answers again, are added to its
 * counters (if Redis lost them, the next take seeds from the durable usage instead).
 */
import type { Redis } from 'ioredis';
import type { AccountsStore, UsageScope } from '../../accounts/index.js';
import {
  MINUTE_MS,
  monthOf,
  msToNextMonth,
  type Counters,
  type TakeOutcome,
  type TakeRequest,
  type TakeResult,
  type Ticket,
} from './counters.js';
import { MemoryCounters } from './memory-counters.js';
import type { UsageLedger } from './usage-ledger.js';

/**
 * Takes up to N units at once, as N takes one after the other would: the first `granted` succeed,
 * the rest are refused by the first limit that is then reached (quota, project cap, minute).
 * KEYS: minute-key base, workspace month key, project month key.
 * ARGV: requests per minute, monthly quota, project cap (-1: none), N.
 * Returns {granted, refusal, minuteUsed, monthUsed, projectUsed, window, nowMs}, the counts as they
 * were before; granted -1/-2: the workspace/project month counter is missing and must be seeded.
 */
const TAKE_SCRIPT = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = now - (now % 60000)
local minuteKey = KEYS[1] .. ':' .. window
local q = redis.call('GET', KEYS[2])
if not q then return {-1, 0, 0, 0, 0, window, now} end
q = tonumber(q)
local cap = tonumber(ARGV[3])
local c = 0
if cap >= 0 then
  local cv = redis.call('GET', KEYS[3])
  if not cv then return {-2, 0, 0, 0, 0, window, now} end
  c = tonumber(cv)
end
local m = tonumber(redis.call('GET', minuteKey) or '0')
local n = tonumber(ARGV[4])
local quota = tonumber(ARGV[2])
local granted = math.min(n, quota - q, tonumber(ARGV[1]) - m)
if cap >= 0 then granted = math.min(granted, cap - c) end
if granted < 0 then granted = 0 end
local refusal = 0
if granted < n then
  if q + granted >= quota then refusal = 2
  elseif cap >= 0 and c + granted >= cap then refusal = 3
  else refusal = 1 end
end
if granted > 0 then
  if redis.call('INCRBY', minuteKey, granted) == granted then redis.call('PEXPIRE', minuteKey, 61000) end
  redis.call('INCRBY', KEYS[2], granted)
  if cap >= 0 then redis.call('INCRBY', KEYS[3], granted) end
end
return {granted, refusal, m, q, c, window, now}
`;

/** KEYS: counters to give one unit back to, each only if it still exists and is above zero. */
const GIVE_SCRIPT = `
for i = 1, #KEYS do
  local v = tonumber(redis.call('GET', KEYS[i]) or '0')
  if v > 0 then redis.call('DECR', KEYS[i]) end
end
return 1
`;

/** KEYS[i] += ARGV[i] for each counter that exists (a missing one is seeded from the durable usage). */
const ADD_SCRIPT = `
for i = 1, #KEYS do
  if redis.call('EXISTS', KEYS[i]) == 1 then redis.call('INCRBY', KEYS[i], ARGV[i]) end
end
return 1
`;

const OUTCOMES: Record<number, TakeOutcome> = {
  0: 'ok',
  1: 'rate_limited',
  2: 'quota_exceeded',
  3: 'project_cap_exceeded',
};

type ScriptedRedis = Redis & {
  ipscopeTake(...args: (string | number)[]): Promise<number[]>;
  ipscopeGive(count: number, ...keys: string[]): Promise<number>;
  ipscopeAdd(count: number, ...keysAndArgs: (string | number)[]): Promise<number>;
};

export interface RedisCountersOptions {
  redis: Redis;
  /** Prefix of every key (REDIS_KEY_PREFIX). */
  prefix: string;
  store: Pick<AccountsStore, 'getUsage'>;
  ledger: UsageLedger;
  log?: (message: string, error?: unknown) => void;
}

/** A take waiting for its batch's answer. */
interface WaitingTake {
  /** Its own request: taken from the in-process counters if Redis fails meanwhile. */
  request: TakeRequest;
  resolve(result: TakeResult): void;
  reject(error: unknown): void;
}

/** Takes of the same counters and limits, sent to Redis together. */
interface TakeBatch {
  /** The first take's request (the others differ only in `now`). */
  request: TakeRequest;
  month: string;
  waiting: WaitingTake[];
}

/** Whether a take of `month` under `request`'s limits joins `batch` (same counters, same limits). */
function joins(batch: TakeBatch, request: TakeRequest, month: string): boolean {
  const first = batch.request;
  return (
    first.projectId === request.projectId &&
    batch.month === month &&
    first.requestsPerMinute === request.requestsPerMinute &&
    first.monthlyQuota === request.monthlyQuota &&
    first.projectCap === request.projectCap
  );
}

/** An error of Redis itself (unreachable, timed out): the caller falls back to in-process counters. */
class RedisUnavailable extends Error {}

export class RedisCounters implements Counters {
  private readonly redis: ScriptedRedis;
  private fallback: MemoryCounters | null = null;
  /** Units kept while Redis was unreachable, per Redis month key: added back on recovery. */
  private keptDuringOutage = new Map<string, number>();
  /** The last counts Redis reported, per month key: what the fallback starts from. */
  private readonly lastSeen = new Map<string, number>();
  private recovering: Promise<void> | null = null;
  /**
   * Takes waiting for the next flush, per workspace, then per counters and limits (takeFromRedis):
   * looked up by the workspace id the principal carries, no key text is built per take. A new map
   * every turn, never `clear()`: a cleared (or rehashed) Map table keeps a pointer to its
   * successor, so once one table has reached the old generation, every later table, and the takes,
   * promises and request state they hold, survive young collections until the next full one
   * (docs/decisions/0037-no-per-turn-map-churn.md).
   */
  private batches = new Map<string, TakeBatch[]>();
  private flushPending = false;
  /** The flush, two turns after the first take of a batch (gatherTurn, then flush): no closure per flush. */
  private readonly gathered = (): void => this.flush();
  private readonly gatherTurn = (): void => void setImmediate(this.gathered);

  constructor(private readonly options: RedisCountersOptions) {
    const redis = options.redis as ScriptedRedis;
    if (typeof (redis as Partial<ScriptedRedis>).ipscopeTake !== 'function') {
      redis.defineCommand('ipscopeTake', { numberOfKeys: 3, lua: TAKE_SCRIPT });
      redis.defineCommand('ipscopeGive', { lua: GIVE_SCRIPT });
      redis.defineCommand('ipscopeAdd', { lua: ADD_SCRIPT });
    }
    this.redis = redis;
  }

  private monthKey(scope: UsageScope, id: string, month: string): string {
    return `${this.options.prefix}${scope === 'workspace' ? 'q' : 'c'}:${id}:${month}`;
  }

  private minuteBase(workspaceId: string): string {
    return `${this.options.prefix}m:${workspaceId}`;
  }

  /** Runs a Redis command; any failure of Redis itself becomes RedisUnavailable. */
  private async call<T>(command: () => Promise<T>): Promise<T> {
    if (this.redis.status !== 'ready') throw new RedisUnavailable(`redis is ${this.redis.status}`);
    try {
      return await command();
    } catch (error) {
      throw new RedisUnavailable((error as Error).message, { cause: error });
    }
  }

  /** The durable count of a month counter: the accounts store plus this replica's unwritten units. */
  private async durable(scope: UsageScope, id: string, month: string): Promise<number> {
    return (
      (await this.options.store.getUsage(scope, id, month)) +
      this.options.ledger.pendingCount(scope, id, month)
    );
  }

  private async seed(scope: UsageScope, id: string, month: string, now: number): Promise<void> {
    const used = await this.durable(scope, id, month);
    const ttlMs = msToNextMonth(now) + 35 * 86_400_000;
    await this.call(() => this.redis.set(this.monthKey(scope, id, month), used, 'PX', ttlMs, 'NX'));
  }

  /**
   * A take from Redis (batched, takeFromRedis); while Redis is unreachable, from the in-process
   * fallback, until Redis answers again. Redis failing under a batch moves its takes to the
   * fallback (takeBatchFailed): the caller never sees Redis's own errors.
   */
  take(request: TakeRequest): Promise<TakeResult> {
    return this.fallback === null ? this.takeFromRedis(request) : this.takeDuringOutage(request);
  }

  private async takeDuringOutage(request: TakeRequest): Promise<TakeResult> {
    if (this.redis.status === 'ready') await this.recover();
    return this.fallback === null ? this.takeFromRedis(request) : this.fallback.take(request);
  }

  /**
   * Takes of the same counters and limits go to Redis as one script call that takes them all
   * (TAKE_SCRIPT), answered in the order they were asked: the same results as one call each, for
   * one script run instead of many. A batch gathers the takes of two turns of the event loop, the
   * one of its first take and the next (docs/decisions/0040-redis-takes-gather-two-turns.md): under
   * load that halves the script calls per request, and with them what each call costs Redis and
   * this process (its write, the reply); an idle server's next turn comes at once.
   */
  private takeFromRedis(request: TakeRequest): Promise<TakeResult> {
    const month = monthOf(request.now);
    return new Promise<TakeResult>((resolve, reject) => {
      const waiting: WaitingTake = { request, resolve, reject };
      let held = this.batches.get(request.workspaceId);
      if (held === undefined) this.batches.set(request.workspaceId, (held = []));
      // Most turns hold one batch per workspace; another project or plan starts one of its own.
      let batch: TakeBatch | undefined;
      for (let i = 0; i < held.length && batch === undefined; i++) {
        if (joins(held[i]!, request, month)) batch = held[i];
      }
      if (batch !== undefined) batch.waiting.push(waiting);
      else held.push({ request, month, waiting: [waiting] });
      if (!this.flushPending) {
        this.flushPending = true;
        setImmediate(this.gatherTurn);
      }
    });
  }

  /**
   * Sends every batch gathered since the last flush. Several batches (several workspaces in one
   * turn) go out in one write: the client has no auto-pipelining (connectRedis, decision 0037), so
   * the socket is corked while their scripts are written (each is written synchronously).
   */
  private flush(): void {
    const batches = this.batches;
    this.batches = new Map();
    this.flushPending = false;
    const several = batches.size > 1 || (batches.values().next().value?.length ?? 0) > 1;
    const stream = several && this.redis.status === 'ready' ? this.redis.stream : null;
    stream?.cork();
    try {
      for (const held of batches.values()) for (const batch of held) this.sendBatch(batch);
    } finally {
      stream?.uncork();
    }
  }

  private sendBatch(batch: TakeBatch): void {
    this.takeBatch(batch).then(
      (results) => {
        const waiting = batch.waiting;
        for (let i = 0; i < waiting.length; i++) waiting[i]!.resolve(results[i]!);
      },
      (error: unknown) => this.takeBatchFailed(batch, error),
    );
  }

  /** Redis failed under a batch: its takes are taken from the fallback (started by the first). */
  private takeBatchFailed(batch: TakeBatch, error: unknown): void {
    if (!(error instanceof RedisUnavailable)) {
      for (const w of batch.waiting) w.reject(error);
      return;
    }
    if (!this.fallback) this.startFallback(error);
    const fallback = this.fallback!;
    for (const w of batch.waiting) fallback.take(w.request).then(w.resolve, w.reject);
  }

  private async takeBatch({ request, month, waiting }: TakeBatch): Promise<TakeResult[]> {
    const workspaceKey = this.monthKey('workspace', request.workspaceId, month);
    const projectKey = this.monthKey('project', request.projectId, month);
    const cap = request.projectCap ?? -1;
    const n = waiting.length;
    for (let attempt = 0; attempt < 3; attempt++) {
      const [granted, refusal, minuteUsed, monthUsed, projectUsed, window, redisNow] = await this.call(() =>
        this.redis.ipscopeTake(
          this.minuteBase(request.workspaceId),
          workspaceKey,
          projectKey,
          request.requestsPerMinute,
          request.monthlyQuota,
          cap,
          n,
        ),
      );
      if (granted === -1) {
        await this.seed('workspace', request.workspaceId, month, request.now);
        continue;
      }
      if (granted === -2) {
        await this.seed('project', request.projectId, month, request.now);
        continue;
      }
      const g = granted!;
      this.lastSeen.set(workspaceKey, monthUsed! + g);
      if (cap >= 0) this.lastSeen.set(projectKey, projectUsed! + g);
      const resetMs = window! + MINUTE_MS - redisNow!;
      // One ticket for every granted take of the batch: tickets are read, never changed.
      const ticket: Ticket = {
        workspaceId: request.workspaceId,
        projectId: request.projectId,
        month,
        window: window!,
        project: cap >= 0,
        where: 'redis',
      };
      const refused = OUTCOMES[refusal!] ?? 'rate_limited';
      const results: TakeResult[] = [];
      for (let i = 0; i < n; i++) {
        // The i-th take: after i units of the batch (at most all granted ones), plus its own if granted.
        const taken = Math.min(i, g) + (i < g ? 1 : 0);
        const result: TakeResult = {
          outcome: i < g ? 'ok' : refused,
          minuteUsed: minuteUsed! + taken,
          resetMs,
          monthUsed: monthUsed! + taken,
          projectUsed: cap >= 0 ? projectUsed! + taken : 0,
        };
        if (i < g) result.ticket = ticket;
        results.push(result);
      }
      return results;
    }
    throw new Error('redis month counters could not be seeded (evicted as soon as written?)');
  }

  private startFallback(error: unknown): void {
    this.options.log?.('redis unreachable: rate limits and quotas fall back to this process', error);
    this.fallback = new MemoryCounters({
      ledger: null,
      load: async (scope, id, month) =>
        this.lastSeen.get(this.monthKey(scope, id, month)) ?? (await this.durable(scope, id, month)),
    });
  }

  /** Redis answers again: hand it the units kept meanwhile, then use it again. */
  private recover(): Promise<void> {
    this.recovering ??= (async () => {
      const kept = this.keptDuringOutage;
      try {
        if (kept.size > 0) {
          const keys = [...kept.keys()];
          await this.call(() =>
            this.redis.ipscopeAdd(keys.length, ...keys, ...keys.map((k) => kept.get(k)!)),
          );
        }
        this.keptDuringOutage = new Map();
        this.fallback = null;
        this.options.log?.('redis answers again: shared rate limits and quotas resume');
      } catch (error) {
        if (!(error instanceof RedisUnavailable)) throw error;
      } finally {
        this.recovering = null;
      }
    })();
    return this.recovering;
  }

  async give(ticket: Ticket): Promise<void> {
    if (ticket.where === 'memory') {
      await this.fallback?.give(ticket);
      return;
    }
    const keys = [
      `${this.minuteBase(ticket.workspaceId)}:${ticket.window}`,
      this.monthKey('workspace', ticket.workspaceId, ticket.month),
    ];
    if (ticket.project) keys.push(this.monthKey('project', ticket.projectId, ticket.month));
    try {
      await this.call(() => this.redis.ipscopeGive(keys.length, ...keys));
    } catch (error) {
      // Redis went away between take and give: the unit stays taken there (it was never kept, so
      // the durable usage does not count it).
      if (!(error instanceof RedisUnavailable)) throw error;
    }
  }

  keep(ticket: Ticket): void {
    this.options.ledger.add('workspace', ticket.workspaceId, ticket.month);
    this.options.ledger.add('project', ticket.projectId, ticket.month);
    if (ticket.where === 'memory') {
      const add = (key: string) => this.keptDuringOutage.set(key, (this.keptDuringOutage.get(key) ?? 0) + 1);
      add(this.monthKey('workspace', ticket.workspaceId, ticket.month));
      if (ticket.project) add(this.monthKey('project', ticket.projectId, ticket.month));
    }
  }

  async ping(): Promise<void> {
    await this.call(() => this.redis.ping());
  }

  async close(): Promise<void> {
    await this.options.ledger.close();
  }
}
