/** GET /v1/domain/{domain}/history (SPEC.md DomainHistoryPage). */
import { outcomeClass, type Outcome } from '../vocabulary.js';
import { nowEpoch } from '../time.js';
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

interface StateRow {
  rtype: 'A' | 'AAAA';
  outcome: Outcome;
  vals: string;
  cnames: string;
  last_observed: number;
  last_confirmed: number | null;
  last_positive: number | null;
}

interface IntervalRow {
  id: number;
  rtype: 'A' | 'AAAA';
  value: string;
  first_observed: number;
  last_confirmed: number;
  ended_at: number | null;
}

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
  const states = statement(
    release,
    `SELECT rtype, outcome, vals, cnames, last_observed, last_confirmed, last_positive
       FROM dns_state WHERE domain_id = ? ORDER BY rtype`,
  ).all(row.id) as StateRow[];
  let intervals: IntervalRow[] = [];
  let more = false;
  if (row.interval_lo !== null && row.interval_hi !== null) {
    const from = Math.max(row.interval_lo, ((after?.[0] as number | undefined) ?? 0) + 1);
    intervals = statement(
      release,
      `SELECT id, rtype, value, first_observed, last_confirmed, ended_at FROM dns_interval
         WHERE id BETWEEN ? AND ? ORDER BY id LIMIT ?`,
    ).all(from, row.interval_hi, params.limit + 1) as IntervalRow[];
    more = intervals.length > params.limit;
    if (more) intervals.pop();
  }
  const last = intervals[intervals.length - 1];
  return {
    domain,
    observed: true,
    current: states.map((s) => currentState(s, now)),
    intervals: intervals.map((i) => ({
      record_type: i.rtype,
      value: i.value,
      first_observed: isoOrNull(i.first_observed)!,
      last_confirmed: isoOrNull(i.last_confirmed)!,
      ended_at: isoOrNull(i.ended_at),
      current: i.ended_at === null,
    })),
    next_cursor: more && last ? encodeCursor(release, query, [last.id]) : null,
    ...blocks(release),
  };
}

function currentState(s: StateRow, now: number) {
  const cls = outcomeClass(s.outcome);
  const staleReason =
    s.last_confirmed === null
      ? ('never_confirmed' as const)
      : cls === 'transient'
        ? ('transient_failure' as const)
        : now - s.last_confirmed > STALE_AFTER_SECONDS
          ? ('older_than_seven_days' as const)
          : null;
  return {
    record_type: s.rtype,
    outcome: s.outcome,
    outcome_class: cls,
    values: JSON.parse(s.vals) as string[],
    cnames: JSON.parse(s.cnames) as string[],
    last_observed: isoOrNull(s.last_observed)!,
    last_confirmed: isoOrNull(s.last_confirmed),
    last_positive: isoOrNull(s.last_positive),
    age_seconds: Math.max(0, now - s.last_observed),
    stale: staleReason !== null,
    stale_reason: staleReason,
  };
}
