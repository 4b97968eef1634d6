/**
 * GET /v1/asn/{asn}?as_of=T (docs/api.md#as-of-a-past-moment): the AS's row and its mapped ranges
 * as the epoch that answered at T held them, paged in that epoch's page order. The newest epoch is
 * the release itself: its current tables answer.
 */
import { findAsnBogon } from '../../bogons.js';
import { nowEpoch } from '../../time.js';
import { RecentCache, statement } from '../common.js';
import {
  asnAnswer,
  asnRow,
  currentPage,
  parseAsnParam,
  rangeItem,
  type AsnRow,
  type LookupAsnParams,
} from '../lookup-asn.js';
import { decodeCursor, encodeCursor } from '../paging.js';
import { ReleaseSlot, type Release } from '../release.js';
import { VALID_AT, resolveAsOf, type Epoch } from './common.js';
import { versionRowAt } from './rows.js';
import { asnPageAt } from './epoch-index.js';

export function lookupAsnAsOf(
  releaseOrNull: Release | null,
  params: LookupAsnParams,
  asOf: string | number,
  now = nowEpoch(),
) {
  const asn = parseAsnParam(params.asn);
  const resolved = resolveAsOf(releaseOrNull, asOf, now);
  const release = releaseOrNull!;
  const query = `lookup_asn\0${asn}${resolved.cursorKey}`;
  // The key of a page: the newest epoch's asn_range id of its last range (lookup-asn.ts), or in an
  // older epoch the number of ranges served before the next page.
  const [after] = (decodeCursor(release, query, params.cursor, ['number']) ?? [0]) as [number];
  const bogon = findAsnBogon(asn);
  if (bogon !== null) return asnAnswer(asn, bogon, undefined, [], null, resolved.blocks);
  if (resolved.newest) {
    const page = currentPage(release, asn, after, params.limit);
    const next = page.next === null ? null : encodeCursor(release, query, page.next);
    return asnAnswer(asn, null, asnRow(release, asn), page.ranges, next, resolved.blocks);
  }
  const epoch = resolved.epoch;
  // The epoch's pages in memory once built (epoch-index.ts); SQL until then.
  const inMemory = asnPageAt(release, epoch, asn, after, params.limit);
  if (inMemory !== undefined) {
    const next = inMemory.next === null ? null : encodeCursor(release, query, [inMemory.next]);
    return asnAnswer(asn, null, asnRowAt(release, epoch, asn), inMemory.ranges, next, resolved.blocks);
  }
  const rows = statement(
    release,
    `SELECT first_text, last_text, prefixes FROM asn_range_hist
       WHERE asn = ? AND ${VALID_AT} ORDER BY version, first, last DESC, ord LIMIT ? OFFSET ?`,
  ).all(asn, epoch.epoch, epoch.epoch, params.limit + 1, after) as Array<{
    first_text: string;
    last_text: string;
    prefixes: string;
  }>;
  const more = rows.length > params.limit;
  if (more) rows.pop();
  const next = more ? encodeCursor(release, query, [after + rows.length]) : null;
  return asnAnswer(asn, null, asnRowAt(release, epoch, asn), rows.map(rangeItem), next, resolved.blocks);
}

/** Rows of asn_hist kept per release by AS and epoch, as lookup-asn.ts keeps the asn table's. */
const ASN_ROWS_AT = new ReleaseSlot('asn rows as of', () => new RecentCache<number, AsnRow | null>(16_384));

/** The asn row of `asn` as `epoch` held it; none when it had none. */
export function asnRowAt(release: Release, epoch: Epoch, asn: number): AsnRow | undefined {
  const kept = ASN_ROWS_AT.of(release);
  // AS numbers are below 2^32 and epoch positions below 2^16: the key is exact below 2^53.
  const key = asn * 65_536 + epoch.index;
  let row = kept.get(key);
  if (row === undefined) {
    row = asnRowAtBySql(release, epoch, asn) ?? null;
    kept.set(key, row);
  }
  return row ?? undefined;
}

function asnRowAtBySql(release: Release, epoch: Epoch, asn: number): AsnRow | undefined {
  return versionRowAt<AsnRow>(
    release,
    'asn_hist',
    'asn',
    `name, country, source, category, category_source, network_role, routes_v4, routes_v6,
       ipv4_addresses, providers, observed_ips, observed_domains`,
    asn,
    epoch,
  );
}
