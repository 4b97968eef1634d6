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

/**
 * Counts not yet written, by scope, month and id: an add looks its row up by the strings it is
 * given (a principal's ids, the counters' month), with no key text built per request.
 */
type Pending = Record<UsageScope, Map<string, Map<string, UsageDelta>>>;

function nothingPending(): Pending {
  return { workspace: new Map(), project: new Map() };
}

/** The row of `scope`, `id` and `month` in `pending`, made when missing. */
function rowOf(pending: Pending, scope: UsageScope, id: string, month: string): UsageDelta {
  let ids = pending[scope].get(month);
  if (ids === undefined) pending[scope].set(month, (ids = new Map()));
  let row = ids.get(id);
  if (row === undefined) ids.set(id, (row = { scope, id, month, count: 0 }));
  return row;
}

function pendingRows(pending: Pending): UsageDelta[] {
  const rows: UsageDelta[] = [];
  for (const scope of [pending.workspace, pending.project])
    for (const ids of scope.values()) for (const row of ids.values()) rows.push(row);
  return rows;
}

export class UsageLedger {
  private pending = nothingPending();
  /** Whether anything was added to `pending` since it was last taken. */
  private anyPending = false;
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
    rowOf(this.pending, scope, id, month).count += count;
    this.anyPending = true;
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
    return this.pending[scope].get(month)?.get(id)?.count ?? 0;
  }

  /** Writes the pending counts (one at a time; a second caller waits for the running write). */
  async flush(): Promise<void> {
    while (this.flushing) await this.flushing.catch(() => {});
    if (!this.anyPending && this.daily.size === 0) return;
    const batch = pendingRows(this.pending);
    this.pending = nothingPending();
    this.anyPending = false;
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
        const counted = batch.filter((d) => d.count !== 0);
        if (counted.length > 0) await this.options.store.addUsage(counted);
      } catch (error) {
        // Put the batch back in front of what arrived meanwhile; the next flush retries it.
        for (const delta of batch) {
          rowOf(this.pending, delta.scope, delta.id, delta.month).count += delta.count;
          this.anyPending = true;
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
