/**
 * The seam between the lookups (REST routes and MCP tools) and plans, rate limits and quotas
 * (SPEC.md Limits). A call first reserves one unit for its principal: a refusal throws ApiError
 * (429 rate_limited, 402 quota_exceeded / project_cap_exceeded, 503 service_unavailable). The
 * lookup then runs; an answered lookup commits the unit, anything refused afterwards (400, 410,
 * 422, a bogon lookup_ip) releases it, so nothing refused is counted and nothing served goes
 * uncounted. Headers are the X-RateLimit-* / X-Quota-* / X-Project-Quota-* values to send.
 */
import type { KeyPrincipal } from './accounts/index.js';

export interface Reservation {
  /** Header name -> value for the HTTP response of this call. */
  readonly headers: Record<string, string>;
  /** Largest page size the principal's plan allows (Free: 100). */
  readonly maxPageSize: number;
  commit(): Promise<void>;
  release(): Promise<void>;
}

export interface Meter {
  reserve(principal: KeyPrincipal): Promise<Reservation>;
  /**
   * The same reservation without waiting, when the meter can grant it at once; undefined when it
   * cannot say without waiting or would refuse (call reserve, which answers the refusal).
   */
  reserveNow?(principal: KeyPrincipal): Reservation | undefined;
}

/** The reservation of an unmetered call: nothing to count, no headers, the largest page. */
const FREE_PASS: Reservation = Object.freeze({
  headers: Object.freeze({}) as Record<string, string>,
  maxPageSize: 1000,
  commit: async () => {},
  release: async () => {},
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
