/** GET /v1/domain/{domain}/history (docs/api.md#get-v1domaindomainhistory). */
import { outcomeClass, type Outcome } from '../vocabulary.js';
import { nowEpoch, toIso } from '../time.js';
import { blocks, isoOrNull, parseDomainParam, requireRelease, statement } from './common.js';
import { decodeCursor, encodeCursor } from './paging.js';
import { fenceCondition, fenceKey, type TimeFence } from './time-fence.js';
import type { Release } from './release.js';

export interface DomainHistoryParams {
  domain: string;
  limit: number;
  cursor?: string | undefined;
  /** Only the intervals seen in a window (time-fence.ts); none: all. */
  fence?: TimeFence | null;
}

/** Stale: more than seven days since the last confirmation (docs/api.md#states-and-staleness). */
export const STALE_AFTER_SECONDS = 7 * 24 * 3600;

/** rtype, outcome, vals, cnames, last_observed, last_confirmed, last_positive (domain_page.states) */
export type StateRow = [
  rtype: 'A' | 'AAAA',
  outcome: Outcome,
  vals: string[],
  cnames: string[],
  lastObserved: number,
  lastConfirmed: number | null,
  lastPositive: number | null,
];

/** rtype, value, first_observed, last_confirmed, ended_at (domain_page.intervals) */
export type PageInterval = [
  rtype: 'A' | 'AAAA',
  value: string,
  firstObserved: number,
  lastConfirmed: number,
  endedAt: number | null,
];

/** states, intervals, interval_lo, interval_hi */
type PageRow = [states: string, intervals: string, lo: number | null, hi: number | null];

/**
 * `bind`: more of the query's identity, which its cursors are bound to (the as-of query's moment);
 * none for the current answer.
 */
export function domainHistory(
  releaseOrNull: Release | null,
  params: DomainHistoryParams,
  now = nowEpoch(),
  bind = '',
) {
  const domain = parseDomainParam(params.domain);
  const release = requireRelease(releaseOrNull);
  const fence = params.fence ?? null;
  const query = `domain_history\0${domain}${fenceKey(fence)}${bind}`;
  const after = decodeCursor(release, query, params.cursor, ['number']);
  // One seek (docs/decisions/0022): the states and the first intervals are in the domain's row.
  // Rows as arrays (raw): building an object per row cost more than the seek itself.
  const row = statement(
    release,
    `SELECT states, intervals, interval_lo, interval_hi FROM domain_page WHERE name = ?`,
    true,
  ).get(domain) as PageRow | undefined;
  if (!row) {
    return { domain, observed: false, current: [], intervals: [], next_cursor: null, ...blocks(release) };
  }
  const [statesJson, pageJson, lo, hi] = row;
  let intervals: PageInterval[] = [];
  let lastId = 0;
  let more = false;
  if (lo !== null && hi !== null && fence !== null) {
    // A fenced page: the domain's interval rows that pass the fence, after the last one served.
    const condition = fenceCondition(fence);
    const rows = statement(
      release,
      `SELECT rtype, value, first_observed, last_confirmed, ended_at, id FROM dns_interval
         WHERE id BETWEEN ? AND ? AND ${condition.sql} ORDER BY id LIMIT ?`,
      true,
    ).all(
      Math.max(lo, ((after?.[0] as number | undefined) ?? 0) + 1),
      hi,
      ...condition.values,
      params.limit + 1,
    ) as Array<[...PageInterval, number]>;
    more = rows.length > params.limit;
    if (more) rows.pop();
    intervals = rows.map((r) => r.slice(0, 5) as PageInterval);
    lastId = rows.length > 0 ? rows[rows.length - 1]![5] : 0;
  } else if (lo !== null && hi !== null) {
    const from = Math.max(lo, ((after?.[0] as number | undefined) ?? 0) + 1);
    const page = JSON.parse(pageJson) as PageInterval[];
    // The row holds ids lo .. lo + page.length - 1: enough when it holds all of them or the rows
    // asked for and the one after (which says whether there are more).
    const end = from + params.limit; // ids from..end - 1 are served; `end` says whether more follow
    if (lo + page.length - 1 >= Math.min(end, hi)) {
      intervals = page.slice(from - lo, Math.min(end, hi + 1) - lo);
      more = end <= hi;
    } else {
      const rows = statement(
        release,
        `SELECT rtype, value, first_observed, last_confirmed, ended_at FROM dns_interval
           WHERE id BETWEEN ? AND ? ORDER BY id LIMIT ?`,
        true,
      ).all(from, hi, params.limit + 1) as PageInterval[];
      more = rows.length > params.limit;
      if (more) rows.pop();
      intervals = rows;
    }
    lastId = from + intervals.length - 1;
  }
  return {
    domain,
    observed: true,
    current: (JSON.parse(statesJson) as StateRow[]).map((s) => currentState(s, now)),
    intervals: intervals.map(intervalItem),
    next_cursor: more ? encodeCursor(release, query, [lastId]) : null,
    ...blocks(release),
  };
}

/** An item of `intervals` from its interval row. */
export function intervalItem([rtype, value, firstObserved, lastConfirmed, endedAt]: PageInterval) {
  return {
    record_type: rtype,
    value,
    first_observed: toIso(firstObserved),
    last_confirmed: toIso(lastConfirmed),
    ended_at: endedAt === null ? null : toIso(endedAt),
    current: endedAt === null,
  };
}

/** An item of `current` from its state entry, its staleness as of `now`. */
export function currentState(
  [rtype, outcome, vals, cnames, lastObserved, lastConfirmed, lastPositive]: StateRow,
  now: number,
) {
  const cls = outcomeClass(outcome);
  const staleReason =
    lastConfirmed === null
      ? ('never_confirmed' as const)
      : cls === 'transient'
        ? ('transient_failure' as const)
        : now - lastConfirmed > STALE_AFTER_SECONDS
          ? ('older_than_seven_days' as const)
          : null;
  return {
    record_type: rtype,
    outcome,
    outcome_class: cls,
    values: vals,
    cnames,
    last_observed: toIso(lastObserved),
    last_confirmed: isoOrNull(lastConfirmed),
    last_positive: isoOrNull(lastPositive),
    age_seconds: Math.max(0, now - lastObserved),
    stale: staleReason !== null,
    stale_reason: staleReason,
  };
}
