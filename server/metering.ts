/**
 * The seam between the lookups (REST routes and MCP tools) and plans, rate limits and quotas
 * (SPEC.md Limits). A call reserves one unit for its principal (server/call/envelope.ts): a
 * refusal throws ApiError (429 rate_limited, 402 quota_exceeded / project_cap_exceeded, 503
 * service_unavailable). An answered lookup commits the unit, anything refused (400, 410, 422, a
 * bogon lookup_ip) releases it, so nothing refused is counted and nothing served goes uncounted.
 * Both return the X-RateLimit-* / X-Quota-* / X-Project-Quota-* headers to send.
 */
import type { KeyPrincipal } from '../accounts/index.js';

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
 * so a transport can tell it needs no wait (`done === SETTLED`) and a request allocates none.
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
 * be metered). It grants at once too, so an unmetered fast-lane request takes the same synchronous
 * path as a metered one (the baseline of the metering benchmark).
 */
export const unmetered: Meter = {
  reserve: async () => FREE_PASS,
  reserveNow: () => FREE_PASS,
};
