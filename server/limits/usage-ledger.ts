/**
 * The durable copy of the monthly counts: kept units are added up in memory and written to the
 * accounts store (SQLite or PostgreSQL) as one batch every USAGE_FLUSH_MS and at shutdown. A
 * failed write keeps the batch and retries it with the next one, so an accounts-store outage loses
 * nothing; the write is one `used = used + n` upsert per row, so any number of replicas can flush
 * into the same rows.
 */
import type { AccountsStore, UsageDelta, UsageScope } from '../accounts/index.js';

export interface UsageLedgerOptions {
  store: Pick<AccountsStore, 'addUsage'>;
  flushMs: number;
  onError?: (error: unknown) => void;
}

export class UsageLedger {
  private pending = new Map<string, UsageDelta>();
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

  /** Not yet written counts of one row (added to what the store says). */
  pendingCount(scope: UsageScope, id: string, month: string): number {
    return this.pending.get(`${scope}\u0000${id}\u0000${month}`)?.count ?? 0;
  }

  /** Writes the pending counts (one at a time; a second caller waits for the running write). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => {});
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    this.flushing = (async () => {
      try {
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
