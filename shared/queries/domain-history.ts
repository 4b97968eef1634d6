/** GET /v1/domain/{domain}/history (SPEC.md DomainHistoryPage). */
import { outcomeClass, type Outcome } from '../vocabulary.js';
import { nowEpoch, toIso } from '../time.js';
import { blocks, isoOrNull, parseDomainParam, requireRelease, statement } from './common.js';
import { decodeCursor, encodeCursor } from './paging.js';
import type { Release } from './release.js';

export interface DomainHistoryParams {
  domain: string;
  limit: number;
  cursor?: string | undefined;
}

/** SPEC.md "Staleness": more than seven days since the last confirmation. */
export const STALE_AFTER_SECONDS = 7 * 24 * 3600;

/** rtype, outcome, vals, cnames, last_observed, last_confirmed, last_positive */
type StateRow = [
  rtype: 'A' | 'AAAA',
  outcome: Outcome,
  vals: string,
  cnames: string,
  lastObserved: number,
  lastConfirmed: number | null,
  lastPositive: number | null,
];

/** id, rtype, value, first_observed, last_confirmed, ended_at */
type IntervalRow = [
  id: number,
  rtype: 'A' | 'AAAA',
  value: string,
  firstObserved: number,
  lastConfirmed: number,
  endedAt: number | null,
];

export function domainHistory(releaseOrNull: Release | null, params: DomainHistoryParams, now = nowEpoch()) {
  const domain = parseDomainParam(params.domain);
  const release = requireRelease(releaseOrNull);
  const query = `domain_history\0${domain}`;
  const after = decodeCursor(release, query, params.cursor, ['number']);
  const row = statement(release, `SELECT id, interval_lo, interval_hi FROM domain WHERE name = ?`).get(
    domain,
  ) as { id: number; interval_lo: number | null; interval_hi: number | null } | undefined;
  if (!row) {
    return { domain, observed: false, current: [], intervals: [], next_cursor: null, ...blocks(release) };
  }
  // Rows as arrays (raw): building an object per row cost more than the seek itself.
  const states = statement(
    release,
    `SELECT rtype, outcome, vals, cnames, last_observed, last_confirmed, last_positive
       FROM dns_state WHERE domain_id = ? ORDER BY rtype`,
    true,
  ).all(row.id) as StateRow[];
  let intervals: IntervalRow[] = [];
  let more = false;
  if (row.interval_lo !== null && row.interval_hi !== null) {
    const from = Math.max(row.interval_lo, ((after?.[0] as number | undefined) ?? 0) + 1);
    intervals = statement(
      release,
      `SELECT id, rtype, value, first_observed, last_confirmed, ended_at FROM dns_interval
         WHERE id BETWEEN ? AND ? ORDER BY id LIMIT ?`,
      true,
    ).all(from, row.interval_hi, params.limit + 1) as IntervalRow[];
    more = intervals.length > params.limit;
    if (more) intervals.pop();
  }
  const last = intervals[intervals.length - 1];
  return {
    domain,
    observed: true,
    current: states.map((s) => currentState(s, now)),
    intervals: intervals.map(([, rtype, value, firstObserved, lastConfirmed, endedAt]) => ({
      record_type: rtype,
      value,
      first_observed: toIso(firstObserved),
      last_confirmed: toIso(lastConfirmed),
      ended_at: endedAt === null ? null : toIso(endedAt),
      current: endedAt === null,
    })),
    next_cursor: more && last ? encodeCursor(release, query, [last[0]]) : null,
    ...blocks(release),
  };
}

function currentState(
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
    values: JSON.parse(vals) as string[],
    cnames: JSON.parse(cnames) as string[],
    last_observed: toIso(lastObserved),
    last_confirmed: isoOrNull(lastConfirmed),
    last_positive: isoOrNull(lastPositive),
    age_seconds: Math.max(0, now - lastObserved),
    stale: staleReason !== null,
    stale_reason: staleReason,
  };
}
