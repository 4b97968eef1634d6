/** GET /v1/ip/{ip}/domains (docs/api.md#get-v1ipipdomains): intervals on one address, oldest first. */
import { ApiError } from '../errors.js';
import { findIpBogon } from '../bogons.js';
import { blocks, isoOrNull, parseIpParam, requireRelease, statement } from './common.js';
import { decodeCursor, encodeCursor } from './paging.js';
import { fenceCondition, fenceKey, type TimeFence } from './time-fence.js';
import type { Release } from './release.js';

export interface IpDomainsParams {
  ip: string;
  includeEnded: boolean;
  limit: number;
  cursor?: string | undefined;
  /** Only the intervals seen in a window (time-fence.ts); none: all. */
  fence?: TimeFence | null;
}

interface Row {
  domain_id: number;
  first_observed: number;
  last_confirmed: number;
  ended_at: number | null;
}

// (value, first_observed, domain_id) identifies an interval: a name cannot open two intervals of
// one address at one instant. The covering index serves these in order without a sort.
/** The page's SQL: every interval or current ones only, with or without a time fence. */
function pageSql(includeEnded: boolean, fence: string | null): string {
  return `SELECT domain_id, first_observed, last_confirmed, ended_at FROM dns_interval
  INDEXED BY dns_interval_by_value WHERE value = ? AND (first_observed, domain_id) > (?, ?)${
    includeEnded ? '' : ' AND ended_at IS NULL'
  }${fence === null ? '' : ` AND ${fence}`}
  ORDER BY first_observed, domain_id LIMIT ?`;
}

/**
 * `bind`: more of the query's identity, which its cursors are bound to (the as-of query's moment);
 * none for the current answer.
 */
export function ipDomains(releaseOrNull: Release | null, params: IpDomainsParams, bind = '') {
  const { ip, text } = parseIpParam(params.ip);
  const bogon = findIpBogon(ip);
  if (bogon !== null) {
    throw new ApiError(
      'non_public_ip',
      `${text} is in ${bogon.prefix} (${bogon.name}, ${bogon.rfc}): reverse lookups need a public address`,
    );
  }
  const release = requireRelease(releaseOrNull);
  const fence = params.fence ?? null;
  const query = `ip_domains\0${text}\0${params.includeEnded ? 1 : 0}${fenceKey(fence)}${bind}`;
  const after = decodeCursor(release, query, params.cursor, ['number', 'number']) ?? [-1, -1];
  const condition = fence === null ? null : fenceCondition(fence);
  const rows = statement(release, pageSql(params.includeEnded, condition?.sql ?? null)).all(
    text,
    after[0],
    after[1],
    ...(condition?.values ?? []),
    params.limit + 1,
  ) as Row[];
  const more = rows.length > params.limit;
  if (more) rows.pop();
  const name = statement(release, `SELECT name FROM domain WHERE id = ?`).pluck();
  const recordType = ip.version === 4 ? ('A' as const) : ('AAAA' as const);
  const last = rows[rows.length - 1];
  return {
    ip: text,
    include_ended: params.includeEnded,
    items: rows.map((r) => domainItem(name.get(r.domain_id) as string, recordType, r)),
    next_cursor: more && last ? encodeCursor(release, query, [last.first_observed, last.domain_id]) : null,
    ...blocks(release),
  };
}

/** An item of `items`: the interval of `domain` on the address. */
export function domainItem(
  domain: string,
  recordType: 'A' | 'AAAA',
  r: { first_observed: number; last_confirmed: number; ended_at: number | null },
) {
  return {
    domain,
    record_type: recordType,
    first_observed: isoOrNull(r.first_observed)!,
    last_confirmed: isoOrNull(r.last_confirmed)!,
    ended_at: isoOrNull(r.ended_at),
    current: r.ended_at === null,
  };
}
