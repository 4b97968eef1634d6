/**
 * The limits of a principal's plan: the Free plan's from settings (FREE_REQUESTS_PER_MINUTE,
 * FREE_MONTHLY_QUOTA, FREE_MAX_PAGE_SIZE), other plans from the accounts store's plan table. Table
 * plans are cached for `ttlMs` and refreshed in the background, so a plan change reaches every
 * replica within that time without a store round trip per request. A workspace whose plan is not
 * in the table gets the Free plan's limits (and a log line), never unlimited access.
 */
import { DEFAULT_PLAN, type AccountsStore, type Plan } from '../../accounts/index.js';

export interface FreePlanSettings {
  FREE_REQUESTS_PER_MINUTE: number;
  FREE_MONTHLY_QUOTA: number;
  FREE_MAX_PAGE_SIZE: number;
}

export function freePlan(settings: FreePlanSettings): Plan {
  return {
    name: DEFAULT_PLAN,
    requestsPerMinute: settings.FREE_REQUESTS_PER_MINUTE,
    monthlyQuota: settings.FREE_MONTHLY_QUOTA,
    maxPageSize: settings.FREE_MAX_PAGE_SIZE,
  };
}

interface Cached {
  plan: Plan | null;
  fetchedAt: number;
  refreshing: boolean;
}

export class PlanBook {
  private readonly cache = new Map<string, Cached>();
  private readonly warned = new Set<string>();

  constructor(
    private readonly free: Plan,
    private readonly store: Pick<AccountsStore, 'getPlan'>,
    private readonly ttlMs = 5_000,
    private readonly log?: (message: string, error?: unknown) => void,
  ) {}

  /** limitsFor without waiting: the Free plan, or a plan fetched less than ttlMs ago; else undefined. */
  limitsNow(name: string, now = Date.now()): Plan | undefined {
    if (name === DEFAULT_PLAN) return this.free;
    const entry = this.cache.get(name);
    if (!entry || now - entry.fetchedAt > this.ttlMs || !entry.plan) return undefined;
    return entry.plan;
  }

  async limitsFor(name: string, now = Date.now()): Promise<Plan> {
    if (name === DEFAULT_PLAN) return this.free;
    let entry = this.cache.get(name);
    if (!entry) {
      entry = { plan: await this.store.getPlan(name), fetchedAt: now, refreshing: false };
      this.cache.set(name, entry);
    } else if (now - entry.fetchedAt > this.ttlMs && !entry.refreshing) {
      const stale = entry;
      stale.refreshing = true;
      this.store.getPlan(name).then(
        (plan) => this.cache.set(name, { plan, fetchedAt: Date.now(), refreshing: false }),
        (error: unknown) => {
          stale.refreshing = false;
          this.log?.(`plan "${name}": cannot refresh its limits, keeping the cached ones`, error);
        },
      );
    }
    if (entry.plan) return entry.plan;
    if (!this.warned.has(name)) {
      this.warned.add(name);
      this.log?.(`plan "${name}" is not in the plan table: its workspaces get the Free plan's limits`);
    }
    return this.free;
  }
}
