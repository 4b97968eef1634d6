/**
 * GET /v1/asn/{asn} (docs/api.md#get-v1asnasn): the AS's metadata and its mapped ranges, IPv4
 * first, paged.
 */
import { ApiError } from '../errors.js';
import { findAsnBogon } from '../bogons.js';
import { RecentCache, blocks, requireRelease, statement } from './common.js';
import { decodeCursor, encodeCursor } from './paging.js';
import { ReleaseSlot, type Release } from './release.js';
import { loadedAsnRanges } from './lookup-ip.js';
import { rowsOfAsn, wordsKey, type AsnRanges } from './range-index.js';
import { formatIpv4, formatIpv6Groups, ipFromKey, ipv4RangeToCidrs, rangeToCidrs } from '../ip.js';

export interface LookupAsnParams {
  asn: string;
  limit: number;
  cursor?: string | undefined;
}

const MAX_ASN = 4294967295;

export interface AsnRow {
  name: string | null;
  country: string | null;
  source: string | null;
  category: string | null;
  category_source: string | null;
  network_role: string | null;
  routes_v4: number;
  routes_v6: number;
  ipv4_addresses: number;
  providers: string;
  observed_ips: number | null;
  observed_domains: number | null;
}

/** `64500` or `AS64500` (any case), 1 to 4294967295; else invalid_asn. */
export function parseAsnParam(text: string): number {
  const m = /^(?:as)?(\d{1,10})$/i.exec(text);
  const asn = m ? Number(m[1]) : NaN;
  if (!Number.isInteger(asn) || asn < 1 || asn > MAX_ASN) {
    throw new ApiError(
      'invalid_asn',
      `${JSON.stringify(text.slice(0, 100))} is not an AS number from 1 to 4294967295: send 64500 or AS64500`,
    );
  }
  return asn;
}

export function lookupAsn(releaseOrNull: Release | null, params: LookupAsnParams) {
  const asn = parseAsnParam(params.asn);
  const release = requireRelease(releaseOrNull);
  const query = `lookup_asn\0${asn}`;
  // The key of a page: the asn_range id of its last range (ids are in page order).
  const [afterId] = (decodeCursor(release, query, params.cursor, ['number']) ?? [0]) as [number];
  const bogon = findAsnBogon(asn);
  const row = bogon ? undefined : asnRow(release, asn);
  const page: RangePage = bogon
    ? { ranges: [], next: null }
    : currentPage(release, asn, afterId, params.limit);
  return asnAnswer(
    asn,
    bogon,
    row,
    page.ranges,
    page.next === null ? null : encodeCursor(release, query, page.next),
    blocks(release),
  );
}

/** The page of `asn`'s ranges after the range with id `afterId`: from memory once loaded, else by SQL. */
export function currentPage(release: Release, asn: number, afterId: number, limit: number): RangePage {
  const inMemory = loadedAsnRanges(release);
  return inMemory ? pageInMemory(inMemory, asn, afterId, limit) : pageFromSql(release, asn, afterId, limit);
}

/** The body of GET /v1/asn/{asn} from the AS's row, a page of its ranges and the blocks. */
export function asnAnswer<B extends object>(
  asn: number,
  bogon: ReturnType<typeof findAsnBogon>,
  row: AsnRow | undefined,
  ranges: RangePage['ranges'],
  nextCursor: string | null,
  answerBlocks: B,
) {
  return {
    asn,
    is_bogon: bogon !== null,
    bogon: bogon ? { ...bogon } : null,
    name: row?.name ?? null,
    country: row?.country ?? null,
    source: row?.source ?? null,
    category: row?.category ?? null,
    category_source: row?.category_source ?? null,
    network_role: row?.network_role ?? null,
    routes: { ipv4: row?.routes_v4 ?? 0, ipv6: row?.routes_v6 ?? 0 },
    ipv4_addresses: row?.ipv4_addresses ?? 0,
    providers: row
      ? (JSON.parse(row.providers) as Array<{ provider: string; category: string; ranges: number }>)
      : [],
    observed:
      row && row.observed_ips !== null && row.observed_domains !== null
        ? { ips: row.observed_ips, domains: row.observed_domains }
        : null,
    ranges,
    next_cursor: nextCursor,
    ...answerBlocks,
  };
}

/** Rows of the asn table kept per release: the seek and the row object cost more than the rest. */
const KEPT_ASN_ROWS = 32_768;
const ASN_ROWS = new ReleaseSlot('asn rows', () => new RecentCache<number, AsnRow | null>(KEPT_ASN_ROWS / 2));

/** The asn table's row of `asn` (null: none), from the per-release rows kept recently or by SQL. */
export function asnRow(release: Release, asn: number): AsnRow | undefined {
  const kept = ASN_ROWS.of(release);
  let row = kept.get(asn);
  if (row === undefined) {
    row =
      (statement(
        release,
        `SELECT name, country, source, category, category_source, network_role, routes_v4, routes_v6,
           ipv4_addresses, providers, observed_ips, observed_domains FROM asn WHERE asn = ?`,
      ).get(asn) as AsnRow | undefined) ?? null;
    kept.set(asn, row);
  }
  return row ?? undefined;
}

export interface RangePage {
  ranges: Array<{ first: string; last: string; prefixes: string[] }>;
  /** The cursor key after the page's last range (its id), or null on the last page. */
  next: [number] | null;
}

/** The page of `asn`'s ranges after the range with id `afterId`, by SQL. */
function pageFromSql(release: Release, asn: number, afterId: number, limit: number): RangePage {
  const rows = statement(
    release,
    `SELECT id, first_text, last_text, prefixes FROM asn_range INDEXED BY asn_range_by_asn
       WHERE asn = ? AND id > ? ORDER BY id LIMIT ?`,
  ).all(asn, afterId, limit + 1) as Array<{
    id: number;
    first_text: string;
    last_text: string;
    prefixes: string;
  }>;
  const more = rows.length > limit;
  if (more) rows.pop();
  const last = rows[rows.length - 1];
  return {
    ranges: rows.map(rangeItem),
    next: more && last ? [last.id] : null,
  };
}

/** An item of `ranges` from its asn_range row's texts. */
export function rangeItem(r: { first_text: string; last_text: string; prefixes: string }) {
  return { first: r.first_text, last: r.last_text, prefixes: JSON.parse(r.prefixes) as string[] };
}

/**
 * The same page from asn_range in memory (loaded for lookup_ip): the texts and prefixes of a range
 * are what the builder stores for it, formatted from its first and last address (formatIp,
 * rangeToCidrs), so no SQL is needed. A release's stored texts are checked against this in
 * test/shared/queries-release.test.ts.
 */
function pageInMemory(ranges: AsnRanges, asn: number, afterId: number, limit: number): RangePage {
  const rows = rowsOfAsn(ranges.byAsn, asn);
  // Row positions are ids - 1, ascending: the first row after the cursor by binary search.
  let lo = 0;
  let hi = rows.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (rows[mid]! + 1 > afterId) hi = mid;
    else lo = mid + 1;
  }
  const end = Math.min(rows.length, lo + limit);
  const out = rangeItemsInMemory(ranges.firstWords, ranges.lastWords, rows, lo, end);
  const lastRow = rows[end - 1];
  return { ranges: out, next: end < rows.length && lastRow !== undefined ? [lastRow + 1] : null };
}

/**
 * The items of `ranges` of rows[lo .. end) from their first and last addresses (row r's in
 * firstWords / lastWords [4r .. 4r + 3]), as the builder stored their texts.
 */
export function rangeItemsInMemory(
  firstWords: Uint32Array,
  lastWords: Uint32Array,
  rows: ArrayLike<number>,
  lo: number,
  end: number,
): RangePage['ranges'] {
  const out: RangePage['ranges'] = [];
  for (let k = lo; k < end; k++) {
    const at = rows[k]! * 4;
    if (isMappedIpv4(firstWords, at) && isMappedIpv4(lastWords, at)) {
      // IPv4 (most rows) in plain numbers: no key buffer, no bigint.
      const first = firstWords[at + 3]!;
      const last = lastWords[at + 3]!;
      out.push({ first: formatIpv4(first), last: formatIpv4(last), prefixes: ipv4RangeToCidrs(first, last) });
      continue;
    }
    const first = ipFromKey(wordsKey(firstWords, rows[k]!));
    const last = ipFromKey(wordsKey(lastWords, rows[k]!));
    out.push({
      first: first.version === 4 ? formatIpv4(Number(first.value)) : formatWords(firstWords, at),
      last: last.version === 4 ? formatIpv4(Number(last.value)) : formatWords(lastWords, at),
      prefixes: rangeToCidrs(first.version, first.value, last.value),
    });
  }
  return out;
}

/** Whether words[at .. at + 3] is an IPv4-mapped key (::ffff:a.b.c.d, shared/ip.ts ipKey). */
function isMappedIpv4(words: Uint32Array, at: number): boolean {
  return words[at] === 0 && words[at + 1] === 0 && words[at + 2] === 0xffff;
}

/** The text of the IPv6 address in words[at .. at + 3] (formatIp without a key buffer or bigint). */
function formatWords(words: Uint32Array, at: number): string {
  const groups = new Array<number>(8);
  for (let w = 0; w < 4; w++) {
    groups[2 * w] = words[at + w]! >>> 16;
    groups[2 * w + 1] = words[at + w]! & 0xffff;
  }
  return formatIpv6Groups(groups);
}
