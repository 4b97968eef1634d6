/**
 * What a meter asks of its counters: take one unit of a workspace's minute window, monthly quota
 * and (when capped) its project's monthly cap in one atomic step, or say which limit refuses;
 * give the unit back; keep it for good. In-process (memory-counters.ts) or Redis (redis-counters.ts).
 *
 * Windows: the per-minute limit is a fixed window per UTC minute (X-RateLimit-Reset says when it
 * ends); the monthly quota and cap are per UTC calendar month (`YYYY-MM`).
 */
export const MINUTE_MS = 60_000;

export interface TakeRequest {
  workspaceId: string;
  projectId: string;
  requestsPerMinute: number;
  monthlyQuota: number;
  /** The project's own monthly cap; null: none. */
  projectCap: number | null;
  now: number;
}

export type TakeOutcome = 'ok' | 'rate_limited' | 'quota_exceeded' | 'project_cap_exceeded';

export interface Ticket {
  workspaceId: string;
  projectId: string;
  month: string;
  /** Start of the minute window the unit was taken from (epoch ms). */
  window: number;
  /** Whether the project's own counter was taken too (only for capped projects). */
  project: boolean;
  /** Which counters hold the unit (a Redis ticket taken during an outage is an in-process one). */
  where: 'memory' | 'redis';
}

export interface TakeResult {
  outcome: TakeOutcome;
  /** Units of the minute window in use after this take (before it, on a refusal). */
  minuteUsed: number;
  /** Milliseconds until the minute window ends. */
  resetMs: number;
  monthUsed: number;
  /** The project's month usage (0 for a project without cap). */
  projectUsed: number;
  /** Present when outcome is ok. */
  ticket?: Ticket;
  /**
   * A unit a worker of `--workers N` handed out from a lease: resolves once the primary has been
   * told (server/cluster/ipc-counters.ts); the call's response waits for it, so that the next
   * request, on any worker, counts this unit. Absent: nothing to wait for.
   */
  sent?: Promise<void>;
}

export interface Counters {
  take(request: TakeRequest): Promise<TakeResult>;
  /**
   * The same take without waiting, when these counters can answer at once (in-process counters
   * already in memory); undefined: call take.
   */
  takeNow?(request: TakeRequest): TakeResult | undefined;
  /** Gives a taken unit back (the call was refused after all). */
  give(ticket: Ticket): Promise<void>;
  /** Keeps a taken unit: it goes to the durable monthly usage. */
  keep(ticket: Ticket): void;
  /** Resolves when the counters' store answers (Redis PING); in-process counters always do. */
  ping(): Promise<void>;
  /** Writes what is still pending and stops. */
  close(): Promise<void>;
}

/** The last month computed and its bounds: a request asks for the month once per call. */
let month = { name: '', start: 0, end: 0 };

export function monthOf(epochMs: number): string {
  if (epochMs >= month.start && epochMs < month.end) return month.name;
  const d = new Date(epochMs);
  const start = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1);
  const end = Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  const name = d.toISOString().slice(0, 7);
  month = { name, start, end };
  return name;
}

export function windowOf(epochMs: number): number {
  return epochMs - (epochMs % MINUTE_MS);
}

/** Milliseconds from `epochMs` to the first instant of the next UTC month. */
export function msToNextMonth(epochMs: number): number {
  const d = new Date(epochMs);
  return Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) - epochMs;
}
