/**
 * In-process counters: the embedded default (one server process per accounts file), and what each
 * replica falls back to while Redis is unreachable. A take is atomic because it reads, checks and
 * increments without yielding to the event loop; only a counter not yet in memory is loaded (once)
 * from the durable usage first.
 */
import type { UsageScope } from '../../accounts/index.js';
import {
  MINUTE_MS,
  monthOf,
  windowOf,
  type Counters,
  type TakeRequest,
  type TakeResult,
  type Ticket,
} from './counters.js';
import type { UsageLedger } from './usage-ledger.js';

export interface MemoryCountersOptions {
  /** The month usage of a counter not yet in memory (durable store + not yet written counts). */
  load(scope: UsageScope, id: string, month: string): Promise<number>;
  /** Where kept units go (null: nowhere; the owner keeps them itself). */
  ledger: UsageLedger | null;
}

/** The ticket of units taken from these counters for `request` in `month` and minute `window`. */
function ticketOf(request: TakeRequest, month: string, window: number): Ticket {
  return {
    workspaceId: request.workspaceId,
    projectId: request.projectId,
    month,
    window,
    project: request.projectCap !== null,
    where: 'memory',
  };
}

/** The key of a month counter in `months`: `w:<workspace id>:<month>` or `p:<project id>:<month>`. */
function counterKey(prefix: 'w' | 'p', id: string, month: string): string {
  return `${prefix}:${id}:${month}`;
}

interface MinuteWindow {
  window: number;
  used: number;
  /**
   * The ticket of the window's last take: tickets are read, never changed, so the takes of one
   * project in one window share one (a new one when the project, month or cap differs).
   */
  ticket: Ticket | undefined;
}

export class MemoryCounters implements Counters {
  private readonly minutes = new Map<string, MinuteWindow>();
  private readonly months = new Map<string, number>();
  private readonly loading = new Map<string, Promise<number>>();
  private currentMonth = '';
  /**
   * The current month's counter keys (counterKey) by id: a take looks its keys up by the
   * principal's ids instead of building them again (their hashes are kept with them).
   */
  private workspaceKeys = new Map<string, string>();
  private projectKeys = new Map<string, string>();

  constructor(private readonly options: MemoryCountersOptions) {}

  private async ensure(scope: UsageScope, id: string, month: string): Promise<void> {
    const key = counterKey(scope === 'workspace' ? 'w' : 'p', id, month);
    if (this.months.has(key)) return;
    let pending = this.loading.get(key);
    if (!pending) {
      pending = this.options.load(scope, id, month);
      this.loading.set(key, pending);
    }
    try {
      const used = await pending;
      if (!this.months.has(key)) this.months.set(key, used);
    } finally {
      this.loading.delete(key);
    }
  }

  /** The current month's key of a counter (`month` is the current month: monthFor's). */
  private keyOf(keys: Map<string, string>, prefix: 'w' | 'p', id: string, month: string): string {
    let key = keys.get(id);
    if (key === undefined) keys.set(id, (key = counterKey(prefix, id, month)));
    return key;
  }

  async take(request: TakeRequest): Promise<TakeResult> {
    const month = this.monthFor(request.now);
    const projectKey = this.keyOf(this.projectKeys, 'p', request.projectId, month);
    const workspaceKey = this.keyOf(this.workspaceKeys, 'w', request.workspaceId, month);
    if (!this.months.has(workspaceKey)) await this.ensure('workspace', request.workspaceId, month);
    if (request.projectCap !== null && !this.months.has(projectKey)) {
      await this.ensure('project', request.projectId, month);
    }
    return this.takeLoaded(request, month, workspaceKey, projectKey);
  }

  /** take without waiting, when the counters it needs are in memory already. */
  takeNow(request: TakeRequest): TakeResult | undefined {
    const month = this.monthFor(request.now);
    const workspaceKey = this.keyOf(this.workspaceKeys, 'w', request.workspaceId, month);
    if (!this.months.has(workspaceKey)) return undefined;
    const projectKey = this.keyOf(this.projectKeys, 'p', request.projectId, month);
    if (request.projectCap !== null && !this.months.has(projectKey)) return undefined;
    return this.takeLoaded(request, month, workspaceKey, projectKey);
  }

  private monthFor(now: number): string {
    const month = monthOf(now);
    if (month !== this.currentMonth) {
      // A new month starts from the durable counts (zero): drop last month's counters.
      for (const key of this.months.keys()) if (!key.endsWith(month)) this.months.delete(key);
      this.currentMonth = month;
      // Once a month: the keys of the month that ended go with it.
      this.workspaceKeys = new Map();
      this.projectKeys = new Map();
    }
    return month;
  }

  /** The workspace's minute window `window`, started at 0 when it is a new one. */
  private minuteOf(workspaceId: string, window: number): MinuteWindow {
    let minute = this.minutes.get(workspaceId);
    if (!minute || minute.window !== window) {
      minute = { window, used: 0, ticket: undefined };
      this.minutes.set(workspaceId, minute);
    }
    return minute;
  }

  /** The check and the increments, in one step that never yields. */
  private takeLoaded(
    request: TakeRequest,
    month: string,
    workspaceKey: string,
    projectKey: string,
  ): TakeResult {
    const capped = request.projectCap !== null;
    if (!capped && this.months.size > 0) {
      // Not counted while uncapped: a cap set later loads the then-current durable count.
      this.months.delete(projectKey);
    }
    const window = windowOf(request.now);
    const minute = this.minuteOf(request.workspaceId, window);
    const monthUsed = this.months.get(workspaceKey) ?? 0;
    const projectUsed = capped ? (this.months.get(projectKey) ?? 0) : 0;
    const resetMs = window + MINUTE_MS - request.now;
    let refused: TakeResult['outcome'] | null = null;
    if (monthUsed >= request.monthlyQuota) refused = 'quota_exceeded';
    else if (capped && projectUsed >= request.projectCap!) refused = 'project_cap_exceeded';
    else if (minute.used >= request.requestsPerMinute) refused = 'rate_limited';
    if (refused !== null)
      return { outcome: refused, minuteUsed: minute.used, resetMs, monthUsed, projectUsed };
    minute.used += 1;
    this.months.set(workspaceKey, monthUsed + 1);
    if (capped) this.months.set(projectKey, projectUsed + 1);
    let ticket = minute.ticket;
    if (
      ticket === undefined ||
      ticket.projectId !== request.projectId ||
      ticket.month !== month ||
      ticket.project !== capped
    )
      minute.ticket = ticket = ticketOf(request, month, window);
    return {
      outcome: 'ok',
      minuteUsed: minute.used,
      resetMs,
      monthUsed: monthUsed + 1,
      projectUsed: capped ? projectUsed + 1 : 0,
      ticket,
    };
  }

  async give(ticket: Ticket): Promise<void> {
    this.giveUnits(ticket, 1);
  }

  /** Gives back `units` units of the counters `scope` names (a take's ticket, or a lease's). */
  giveUnits(scope: Omit<Ticket, 'where'>, units: number): void {
    const minute = this.minutes.get(scope.workspaceId);
    if (minute && minute.window === scope.window) minute.used = Math.max(0, minute.used - units);
    const lower = (key: string) => {
      const used = this.months.get(key);
      if (used !== undefined) this.months.set(key, Math.max(0, used - units));
    };
    lower(counterKey('w', scope.workspaceId, scope.month));
    if (scope.project) lower(counterKey('p', scope.projectId, scope.month));
  }

  /**
   * Up to `units` units of the request's counters for a worker to hand out itself (a lease),
   * leaving at least `headroom` units of each limit free, so that the last units of a budget are
   * taken one at a time. Undefined when none can be lent (or the month's counters are not loaded);
   * else how many, and the counts before them with the ticket that names their counters.
   */
  lend(
    request: TakeRequest,
    units: number,
    headroom: number,
  ): { units: number; before: TakeResult } | undefined {
    const month = this.monthFor(request.now);
    const workspaceKey = this.keyOf(this.workspaceKeys, 'w', request.workspaceId, month);
    const projectKey = this.keyOf(this.projectKeys, 'p', request.projectId, month);
    const capped = request.projectCap !== null;
    const monthUsed = this.months.get(workspaceKey);
    const projectUsed = capped ? this.months.get(projectKey) : 0;
    if (monthUsed === undefined || projectUsed === undefined) return undefined;
    const window = windowOf(request.now);
    const minute = this.minuteOf(request.workspaceId, window);
    let free = Math.min(request.requestsPerMinute - minute.used, request.monthlyQuota - monthUsed);
    if (capped) free = Math.min(free, request.projectCap! - projectUsed);
    const lent = Math.min(units, free - headroom);
    if (lent <= 0) return undefined;
    const before: TakeResult = {
      outcome: 'ok',
      minuteUsed: minute.used,
      resetMs: window + MINUTE_MS - request.now,
      monthUsed,
      projectUsed,
      ticket: ticketOf(request, month, window),
    };
    minute.used += lent;
    this.months.set(workspaceKey, monthUsed + lent);
    if (capped) this.months.set(projectKey, projectUsed + lent);
    return { units: lent, before };
  }

  /**
   * The counts of a workspace's minute `window` and `month` and of a project's month (0 where not
   * counted): what the limits are checked against, lent units included.
   */
  counted(
    workspaceId: string,
    projectId: string | null,
    window: number,
    month: string,
  ): { minute: number; month: number; project: number } {
    const minute = this.minutes.get(workspaceId);
    return {
      minute: minute !== undefined && minute.window === window ? minute.used : 0,
      month: this.months.get(counterKey('w', workspaceId, month)) ?? 0,
      project: projectId === null ? 0 : (this.months.get(counterKey('p', projectId, month)) ?? 0),
    };
  }

  /** Keeps `units` units at once (units a worker handed out from its leases). */
  keepUnits(workspaceId: string, projectId: string, month: string, units: number): void {
    this.options.ledger?.add('workspace', workspaceId, month, units);
    this.options.ledger?.add('project', projectId, month, units);
  }

  keep(ticket: Ticket): void {
    this.keepUnits(ticket.workspaceId, ticket.projectId, ticket.month, 1);
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    await this.options.ledger?.close();
  }
}
