/**
 * Plans, rate limits and quotas as a call sees them (docs/api.md#limits, docs/decisions/0007): the
 * Meter a call reserves one unit of (server/call/envelope.ts), and the CountingMeter over a plan
 * book and counters. reserve takes one unit (or throws the refusal: 429 rate_limited with
 * Retry-After, 402 quota_exceeded / project_cap_exceeded, 503 service_unavailable when the counters
 * cannot be reached at all), commit keeps it, release gives it back: an answered lookup commits,
 * anything refused (400, 410, 422, a bogon lookup_ip) releases, so nothing refused is counted and
 * nothing served goes uncounted. Both settle once and return the X-RateLimit-* / X-Quota-* /
 * X-Project-Quota-* headers of the state after it.
 */
import { ApiError } from '../../shared/errors.js';
import type { KeyPrincipal, Plan } from '../../accounts/index.js';
import type { Counters, TakeResult, Ticket } from './counters.js';
import type { PlanBook } from './plans.js';
import { countText } from '../encoding/count-text.js';

/** A unit kept or given back: the response's final limit headers, and when the counters have it. */
export interface Settled {
  /** Header name -> value for the HTTP response of this call, as the unit now stands. */
  readonly headers: Readonly<Record<string, string>>;
  /** Resolves once the counters have the outcome (a shared store may take a round trip). */
  readonly done: Promise<void>;
}

/** One unit taken for a call, until it is committed (counted) or released (given back), once. */
export interface Reservation {
  /** Largest page size the principal's plan allows (Free: 100). */
  readonly maxPageSize: number;
  commit(): Settled;
  release(): Settled;
}

export interface Meter {
  reserve(principal: KeyPrincipal): Promise<Reservation>;
  /**
   * The same reservation without waiting, when the meter can grant it at once; undefined when it
   * cannot say without waiting or would refuse (call reserve, which answers the refusal).
   */
  reserveNow?(principal: KeyPrincipal): Reservation | undefined;
}

/**
 * `done` of a unit the counters already have (in-process counters): one shared resolved promise,
 * so the envelope can tell it needs no wait (`done === SETTLED`) and a request allocates none.
 */
export const SETTLED: Promise<void> = Promise.resolve();

/** The reservation of an unmetered call: nothing to count, no headers, the largest page. */
const NOTHING: Settled = Object.freeze({ headers: Object.freeze({}), done: SETTLED });
const FREE_PASS: Reservation = Object.freeze({
  maxPageSize: 1000,
  commit: () => NOTHING,
  release: () => NOTHING,
});

/**
 * No limits (used until a plan store is configured, with METERING=off, and by tools that must not
 * be metered). It grants at once too, so an unmetered request takes the same synchronous path as
 * a metered one (the baseline of the metering benchmark).
 */
export const unmetered: Meter = {
  reserve: async () => FREE_PASS,
  reserveNow: () => FREE_PASS,
};

/** Seconds a client is told to wait when the accounts store or the counters do not answer. */
export const UNAVAILABLE_RETRY_AFTER_S = 5;

function limitHeaders(plan: Plan, cap: number | null, r: TakeResult): Record<string, string> {
  const headers: Record<string, string> = {
    // The limits and the seconds to the reset come from a small set: String(), whose cache hits.
    'x-ratelimit-limit': String(plan.requestsPerMinute),
    'x-ratelimit-remaining': countText(Math.max(0, plan.requestsPerMinute - r.minuteUsed)),
    'x-ratelimit-reset': String(Math.max(1, Math.ceil(r.resetMs / 1000))),
    'x-quota-limit': String(plan.monthlyQuota),
    'x-quota-used': countText(Math.min(r.monthUsed, plan.monthlyQuota)),
    'x-quota-remaining': countText(Math.max(0, plan.monthlyQuota - r.monthUsed)),
  };
  if (cap !== null) {
    headers['x-project-quota-limit'] = String(cap);
    headers['x-project-quota-used'] = countText(Math.min(r.projectUsed, cap));
    headers['x-project-quota-remaining'] = countText(Math.max(0, cap - r.projectUsed));
  }
  return headers;
}

export interface CountingMeterOptions {
  plans: PlanBook;
  counters: Counters;
  log?: (message: string, error?: unknown) => void;
  /** Each kept unit, after the counters have it (the console's daily usage per key). */
  onKept?: (principal: KeyPrincipal) => void;
}

export class CountingMeter implements Meter {
  constructor(private readonly options: CountingMeterOptions) {}

  reserveNow(principal: KeyPrincipal): Reservation | undefined {
    const counters = this.options.counters;
    if (counters.takeNow === undefined) return undefined;
    const plan = this.options.plans.limitsNow(principal.plan);
    if (plan === undefined) return undefined;
    const cap = principal.projectMonthlyCap;
    const result = counters.takeNow(this.takeRequest(principal, plan));
    if (result === undefined || result.outcome !== 'ok') return undefined;
    return new CountedReservation(
      counters,
      result.ticket!,
      limitHeaders(plan, cap, result),
      plan.maxPageSize,
      principal,
      this.options.onKept,
      result.sent,
    );
  }

  private takeRequest(principal: KeyPrincipal, plan: Plan) {
    return {
      workspaceId: principal.workspaceId,
      projectId: principal.projectId,
      requestsPerMinute: plan.requestsPerMinute,
      monthlyQuota: plan.monthlyQuota,
      projectCap: principal.projectMonthlyCap,
      now: Date.now(),
    };
  }

  /**
   * The reservation once the counters answer (a plan the book has not loaded yet is loaded first).
   * Written with `then` rather than `await`: with Redis every metered call comes this way, and each
   * `await` of an async function costs a promise and a turn of the microtask queue more.
   */
  reserve(principal: KeyPrincipal): Promise<Reservation> {
    const plans = this.options.plans;
    let loading: Promise<Plan>;
    try {
      const plan = plans.limitsNow(principal.plan);
      if (plan !== undefined) return this.reserveUnder(principal, plan);
      loading = plans.limitsFor(principal.plan);
    } catch (error) {
      return Promise.reject(this.unavailable(error));
    }
    return loading.then(
      (loaded) => this.reserveUnder(principal, loaded),
      (error: unknown) => {
        throw this.unavailable(error);
      },
    );
  }

  /** What a caller hears when the counters or the accounts store do not answer: 503, logged. */
  private unavailable(error: unknown): ApiError {
    this.options.log?.('metering: the counters or the accounts store do not answer', error);
    return new ApiError('service_unavailable', undefined, { retryAfter: UNAVAILABLE_RETRY_AFTER_S });
  }

  private reserveUnder(principal: KeyPrincipal, plan: Plan): Promise<Reservation> {
    let taking: Promise<TakeResult>;
    try {
      taking = this.options.counters.take(this.takeRequest(principal, plan));
    } catch (error) {
      return Promise.reject(this.unavailable(error));
    }
    return taking.then(
      (result) => this.reserved(principal, plan, result),
      (error: unknown) => {
        throw this.unavailable(error);
      },
    );
  }

  /** The reservation of a unit the counters granted, or the refusal they answered (thrown). */
  private reserved(principal: KeyPrincipal, plan: Plan, result: TakeResult): Reservation {
    const cap = principal.projectMonthlyCap;
    const headers = limitHeaders(plan, cap, result);
    if (result.outcome !== 'ok') {
      const retryAfter =
        result.outcome === 'rate_limited' ? Math.max(1, Math.ceil(result.resetMs / 1000)) : undefined;
      // A refusal of the meter carries the limit headers of the response.
      throw new ApiError(
        result.outcome,
        undefined,
        retryAfter === undefined ? { headers } : { retryAfter, headers },
      );
    }
    return new CountedReservation(
      this.options.counters,
      result.ticket!,
      headers,
      plan.maxPageSize,
      principal,
      this.options.onKept,
      result.sent,
    );
  }
}

/** A reservation is its own Settled once committed (its headers, its `done`): no object more per call. */
class CountedReservation implements Reservation, Settled {
  private settled: Settled | null = null;

  constructor(
    private readonly counters: Counters,
    private readonly ticket: Ticket,
    /** The limit headers with this unit counted. */
    readonly headers: Record<string, string>,
    readonly maxPageSize: number,
    private readonly principal: KeyPrincipal,
    private readonly onKept?: (principal: KeyPrincipal) => void,
    /** The counters are told of the unit (a worker's leased unit): the response waits for it. */
    readonly done: Promise<void> = SETTLED,
  ) {}

  commit(): Settled {
    if (this.settled) return this.settled;
    this.counters.keep(this.ticket);
    this.onKept?.(this.principal);
    this.settled = this;
    return this;
  }

  /** The headers as if the unit had not been taken; the counters get it back. */
  release(): Settled {
    if (this.settled) return this.settled;
    const h = { ...this.headers };
    const bump = (used: string, remaining: string) => {
      if (h[used] === undefined) return;
      h[used] = countText(Math.max(0, Number(h[used]) - 1));
      h[remaining] = countText(Number(h[remaining]) + 1);
    };
    bump('x-quota-used', 'x-quota-remaining');
    bump('x-project-quota-used', 'x-project-quota-remaining');
    h['x-ratelimit-remaining'] = countText(
      Math.min(Number(h['x-ratelimit-limit']), Number(h['x-ratelimit-remaining']) + 1),
    );
    this.settled = { headers: h, done: this.counters.give(this.ticket) };
    return this.settled;
  }
}
