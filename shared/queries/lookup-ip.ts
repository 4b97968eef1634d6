/** GET /v1/ip/{ip} (docs/api.md#get-v1ipip). */
import type { z } from 'zod';
import type { ProviderRange } from '../api-schemas.js';
import { findIpBogon } from '../bogons.js';
import { ipKey, parseCidr, type Ip } from '../ip.js';
import { HOSTING_CATEGORIES, type RangeCategory } from '../vocabulary.js';
import { BoundedCache, isoOrNull, parseIpParam, requireRelease, statement } from './common.js';
import { loadAsnRanges, loadProviderSegments, type AsnRanges, type ProviderSegments } from './range-index.js';
import { ReleaseSlot, type Release } from './release.js';

export interface LookupIpParams {
  ip: string;
}

/** An item of `provider_ranges`, as the API declares it (shared/api-schemas.ts ProviderRange). */
export type ProviderRangeItem = z.output<typeof ProviderRange>;

export interface AsnRangeRow {
  asn: number | null;
  country: string | null;
  descr: string | null;
  prefixes: string;
  source: string;
}

export interface AsnRow {
  name: string | null;
  country: string | null;
  category: string | null;
  category_source: string | null;
  network_role: string | null;
}

/** A provider_range row, read raw: prefix, provider, category, metadata (JSON), first_seen, last_seen. */
export type ProviderRangeRow = [string, string, RangeCategory, string, number, number];

export function lookupIp(releaseOrNull: Release | null, params: LookupIpParams) {
  const { ip, text } = parseIpParam(params.ip);
  const bogon = findIpBogon(ip);
  // A bogon carries is_bogon, its block and nothing else (docs/api.md#get-v1ipip); it needs no data.
  if (bogon !== null) return { is_bogon: true as const, bogon: { ...bogon } };
  const release = requireRelease(releaseOrNull);
  const ptr = ptrRow(release, text);
  const summary = statement(
    release,
    `SELECT current_count, sample, first_observed, last_confirmed FROM ip_summary WHERE value = ?`,
    true,
  ).get(text) as SummaryRow | undefined;
  const network = ipNetwork(release, ip);
  // One literal, field by field (the order is the answer's): spreading the network and the blocks
  // into it cost about 0.4 µs more per lookup (of about 4).
  return {
    ip: text,
    asn: network.asn,
    is_datacenter: network.is_datacenter,
    is_cdn: network.is_cdn,
    provider: network.provider,
    prefix: network.prefix,
    provider_ranges: network.provider_ranges,
    ptr: ptrBlock(ptr),
    domains: domainsBlock(summary),
    is_bogon: false as const,
    bogon: null,
    coverage: release.coverage,
    attribution: release.attribution,
    release: release.release,
  };
}

/** ip_summary's row of an address: current_count, sample (JSON), first_observed, last_confirmed. */
export type SummaryRow = [currentCount: number, sample: string, firstObserved: number, lastConfirmed: number];

/** The `ptr` field of GET /v1/ip/{ip} from the address's PTR row (null: never checked). */
export function ptrBlock(ptr: PtrRow | undefined) {
  return ptr
    ? {
        names: JSON.parse(ptr[0]) as string[],
        status: ptr[1],
        checked_at: isoOrNull(ptr[2]),
        last_confirmed: isoOrNull(ptr[3]),
      }
    : null;
}

/** The `domains` field of GET /v1/ip/{ip} from the address's ip_summary row. */
export function domainsBlock(summary: SummaryRow | undefined) {
  return summary
    ? {
        current_count: summary[0],
        sample: JSON.parse(summary[1]) as string[],
        first_observed: isoOrNull(summary[2]),
        last_confirmed: isoOrNull(summary[3]),
      }
    : { current_count: 0, sample: [], first_observed: null, last_confirmed: null };
}

/**
 * The network part of GET /v1/ip/{ip} for a public address (no bogon check): routing network,
 * provider range flags and every published range holding it. The MMDB export and the release diff
 * read it for many addresses; lookupIp adds PTR, domains and the blocks.
 */
export function ipNetwork(release: Release, ip: Ip) {
  return networkOf(providerRanges(release, ip), routingNetwork(release, ip));
}

/** The network part from the ranges holding the address (most specific first) and its routing network. */
export function networkOf(ranges: ProviderRangeItem[], asn: ReturnType<typeof routingOf> | null) {
  const hosting = ranges.find((r) => HOSTING_CATEGORIES.includes(r.category)) ?? null;
  return {
    asn,
    is_datacenter: ranges.some((r) => r.category === 'cloud' || r.category === 'hosting') ? true : null,
    is_cdn: ranges.some((r) => r.category === 'cdn') ? true : null,
    provider: hosting?.provider ?? null,
    prefix: hosting?.prefix ?? null,
    provider_ranges: ranges,
  };
}

export type IpNetwork = ReturnType<typeof ipNetwork>;

export type LookupIpResponse = ReturnType<typeof lookupIp>;

export type PtrRow = [names: string, status: string, checkedAt: number, lastConfirmed: number | null];

/** The address's PTR row; none without a seek when the release has no PTR names at all. */
function ptrRow(release: Release, text: string): PtrRow | undefined {
  if (!HAS_PTR_NAMES.of(release)) return undefined;
  return statement(
    release,
    `SELECT names, status, checked_at, last_confirmed FROM ptr WHERE value = ?`,
    true,
  ).get(text) as PtrRow | undefined;
}

/** Whether the release has any PTR names at all. */
const HAS_PTR_NAMES = new ReleaseSlot(
  'has PTR names',
  (release) => release.db.prepare(`SELECT EXISTS (SELECT 1 FROM ptr)`).pluck().get() === 1,
);
/** The range tables in memory, once warmLookupIp has loaded them (SQL seeks until then). */
const ASN_RANGES = new ReleaseSlot<AsnRanges | undefined>('asn_range in memory', () => undefined);
const PROVIDER_SEGMENTS = new ReleaseSlot<ProviderSegments | undefined>(
  'provider_segment in memory',
  () => undefined,
);
/** Published ranges by id (null: no such row). */
const PROVIDER_RANGE_ITEMS = new ReleaseSlot(
  'provider range items',
  () => new BoundedCache<number, ProviderRangeItem | null>(50_000),
);
/** asn_range rows by id, with their AS. */
const ASN_RANGE_DETAILS = new ReleaseSlot(
  'asn_range details',
  () => new BoundedCache<number, RangeDetails>(100_000),
);

/**
 * Loads the release's range tables into memory (in chunks, yielding between them), once. Until it has
 * finished, lookups find ranges with an SQL seek; afterwards with a binary search in memory.
 */
export async function warmLookupIp(release: Release): Promise<void> {
  // Once per release: the bulk command, the export and the diff may each ask.
  if (ASN_RANGES.peek(release) !== undefined && PROVIDER_SEGMENTS.peek(release) !== undefined) return;
  const [asnRanges, segments] = [await loadAsnRanges(release.db), await loadProviderSegments(release.db)];
  ASN_RANGES.fill(release, asnRanges);
  PROVIDER_SEGMENTS.fill(release, segments);
}

/** asn_range in memory once warmLookupIp has loaded it (lookup_asn pages from it too). */
export function loadedAsnRanges(release: Release): AsnRanges | undefined {
  return ASN_RANGES.peek(release);
}

/** provider_segment in memory once warmLookupIp has loaded it. */
export function loadedProviderSegments(release: Release): ProviderSegments | undefined {
  return PROVIDER_SEGMENTS.peek(release);
}

/** Ids of the published ranges holding the address, most specific first. */
function rangeIdsAt(release: Release, ip: Ip): ArrayLike<number> {
  const segments = PROVIDER_SEGMENTS.peek(release);
  if (segments) {
    const at = segments.index.find(ip);
    return at < 0 ? [] : segments.ids.subarray(segments.offsets[at], segments.offsets[at + 1]);
  }
  const key = ipKey(ip.version, ip.value);
  const segment = statement(
    release,
    `SELECT last, range_ids FROM provider_segment WHERE first <= ? ORDER BY first DESC LIMIT 1`,
  ).get(key) as { last: Buffer; range_ids: string } | undefined;
  return !segment || Buffer.compare(segment.last, key) < 0 ? [] : (JSON.parse(segment.range_ids) as number[]);
}

/** Every published range holding the address, most specific first (the segment table lists them). */
export function providerRanges(release: Release, ip: Ip): ProviderRangeItem[] {
  const rangeIds = rangeIdsAt(release, ip);
  if (rangeIds.length === 0) return [];
  const cache = PROVIDER_RANGE_ITEMS.of(release);
  const byId = statement(
    release,
    `SELECT prefix, provider, category, metadata, first_seen, last_seen FROM provider_range WHERE id = ?`,
    true,
  );
  const out: ProviderRangeItem[] = [];
  for (let k = 0; k < rangeIds.length; k++) {
    const id = rangeIds[k]!;
    let item = cache.get(id);
    if (item === undefined) {
      const row = byId.get(id) as ProviderRangeRow | undefined;
      item = row ? providerRangeItem(row) : null;
      cache.set(id, item);
    }
    // Items are shared between responses: callers serialise them and never modify them.
    if (item) out.push(item);
  }
  return out;
}

/** An item of `provider_ranges` from its provider_range row. */
export function providerRangeItem(row: ProviderRangeRow): ProviderRangeItem {
  return {
    prefix: row[0],
    provider: row[1],
    category: row[2],
    metadata: JSON.parse(row[3]) as Record<string, string>,
    first_seen: isoOrNull(row[4])!,
    last_seen: isoOrNull(row[5])!,
  };
}

/** The id of the asn_range row answering for the address (layered mapping), or null. */
function asnRangeAt(release: Release, ip: Ip): number | null {
  const ranges = ASN_RANGES.peek(release);
  if (ranges) {
    const at = ranges.index.find(ip);
    return at < 0 ? null : ranges.segmentRows[at]! + 1;
  }
  const key = ipKey(ip.version, ip.value);
  const segment = statement(
    release,
    `SELECT last, range_id FROM asn_segment WHERE first <= ? ORDER BY first DESC LIMIT 1`,
  ).get(key) as { last: Buffer; range_id: number } | undefined;
  return !segment || Buffer.compare(segment.last, key) < 0 ? null : segment.range_id;
}

/** An asn_range row with its AS, as routing answers read them (kept per row). */
export interface RangeDetails {
  asn: number | null;
  descr: string | null;
  country: string | null;
  source: string;
  prefixes: Array<{ text: string; first: bigint; last: bigint }>;
  as: AsnRow | undefined;
}

/** The mapped row answering for the address and its AS; null when the mapping has no row for it. */
function routingNetwork(release: Release, ip: Ip) {
  const id = asnRangeAt(release, ip);
  return id === null ? null : routingOf(rangeDetailsById(release, id), ip);
}

/** The asn_range row `id` with its AS (kept per row). */
export function rangeDetailsById(release: Release, id: number): RangeDetails {
  const cache = ASN_RANGE_DETAILS.of(release);
  let details = cache.get(id);
  if (details === undefined) {
    const row = statement(
      release,
      `SELECT asn, country, descr, prefixes, source FROM asn_range WHERE id = ?`,
    ).get(id) as AsnRangeRow;
    details = rangeDetails(
      row,
      row.asn === null
        ? undefined
        : (statement(
            release,
            `SELECT name, country, category, category_source, network_role FROM asn WHERE asn = ?`,
          ).get(row.asn) as AsnRow | undefined),
    );
    cache.set(id, details);
  }
  return details;
}

/** The details of an asn_range row and the asn row of its AS (none: unrouted or not listed). */
export function rangeDetails(row: AsnRangeRow, as: AsnRow | undefined): RangeDetails {
  return {
    asn: row.asn,
    descr: row.descr,
    country: row.country,
    source: row.source,
    prefixes: (JSON.parse(row.prefixes) as string[]).flatMap((text) => {
      const cidr = parseCidr(text);
      return cidr ? [{ text, first: cidr.first, last: cidr.last }] : [];
    }),
    as,
  };
}

/** The `asn` field of GET /v1/ip/{ip} for an address inside the row of `details`. */
export function routingOf(details: RangeDetails, ip: Ip) {
  const route = details.prefixes.find((p) => p.first <= ip.value && ip.value <= p.last)?.text ?? null;
  const as = details.as;
  return {
    asn: details.asn,
    route,
    descr: details.descr ?? as?.name ?? null,
    country: details.country ?? as?.country ?? null,
    source: details.source,
    category: as?.category ?? null,
    category_source: as?.category_source ?? null,
    network_role: as?.network_role ?? null,
  };
}
