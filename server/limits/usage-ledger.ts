/**
 * The durable copy of the monthly counts: kept units are added up in memory and written to the
 * accounts store (SQLite or PostgreSQL) as one batch every USAGE_FLUSH_MS and at shutdown. A
 * failed write keeps the batch and retries it with the next one, so an accounts-store outage loses
 * nothing; the write is one `used = used + n` upsert per row, so any number of replicas can flush
 * into the same rows.
 */
import type {
  AccountsStore,
  DailyUsage,
  KeyPrincipal,
  UsageDelta,
  UsageScope,
} from '../../accounts/index.js';

export interface UsageLedgerOptions {
  store: Pick<AccountsStore, 'addUsage'> & Partial<Pick<AccountsStore, 'addDailyUsage'>>;
  flushMs: number;
  onError?: (error: unknown) => void;
}

export class UsageLedger {
  private pending = new Map<string, UsageDelta>();
  /** Kept units per UTC day and key (the console's usage chart and `last used`). */
  private daily = new Map<string, Map<string, DailyUsage>>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> | null = null;
  private closed = false;

  constructor(private readonly options: UsageLedgerOptions) {
    this.timer = setInterval(() => void this.flush().catch(() => {}), options.flushMs);
    this.timer.unref();
  }

  add(scope: UsageScope, id: string, month: string, count = 1): void {
    const key = `${scope}\u0000${id}\u0000${month}`;
    const entry = this.pending.get(key);
    if (entry) entry.count += count;
    else this.pending.set(key, { scope, id, month, count });
  }

  /** One kept unit of a key on `day` (YYYY-MM-DD, default today in UTC): a map update, written with the next flush. */
  addDay(principal: KeyPrincipal, day: string = this.today()): void {
    let keys = this.daily.get(day);
    if (keys === undefined) this.daily.set(day, (keys = new Map()));
    const entry = keys.get(principal.keyId);
    if (entry) entry.count += 1;
    else
      keys.set(principal.keyId, {
        keyId: principal.keyId,
        projectId: principal.projectId,
        workspaceId: principal.workspaceId,
        day,
        count: 1,
      });
  }

  private day = '';
  private dayEnds = 0;

  /** Today's UTC date, worked out once a day rather than once a request. */
  private today(): string {
    const now = Date.now();
    if (now >= this.dayEnds) {
      this.day = new Date(now).toISOString().slice(0, 10);
      this.dayEnds = (Math.floor(now / 86_400_000) + 1) * 86_400_000;
    }
    return this.day;
  }

  /** Not yet written counts of one row (added to what the store says). */
  pendingCount(scope: UsageScope, id: string, month: string): number {
    return this.pending.get(`${scope}\u0000${id}\u0000${month}`)?.count ?? 0;
  }

  /** Writes the pending counts (one at a time; a second caller waits for the running write). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => {});
    if (this.pending.size === 0 && this.daily.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    const daily = this.daily;
    this.daily = new Map();
    this.flushing = (async () => {
      try {
        if (daily.size > 0 && this.options.store.addDailyUsage) {
          const rows = [...daily.values()].flatMap((keys) => [...keys.values()]);
          try {
            await this.options.store.addDailyUsage(rows, new Date());
          } catch (error) {
            // Back in front of what arrived meanwhile, for the next flush.
            for (const row of rows) {
              let keys = this.daily.get(row.day);
              if (keys === undefined) this.daily.set(row.day, (keys = new Map()));
              const later = keys.get(row.keyId);
              if (later) row.count += later.count;
              keys.set(row.keyId, row);
            }
            throw error;
          }
        }
        if (batch.size > 0)
          await this.options.store.addUsage([...batch.values()].filter((d) => d.count !== 0));
      } catch (error) {
        // Put the batch back in front of what arrived meanwhile; the next flush retries it.
        for (const [key, delta] of batch) {
          const later = this.pending.get(key);
          if (later) delta.count += later.count;
          this.pending.set(key, delta);
        }
        this.options.onError?.(error);
        throw error;
      }
    })();
    try {
      await this.flushing;
    } finally {
      this.flushing = null;
    }
  }

  /** Stops the timer and writes what is pending (throws when the store refuses). */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.timer);
    await this.flush();
  }
}
