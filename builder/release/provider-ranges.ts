/**
 * The release's published ranges: provider_range (every range the feeds' current snapshots list,
 * but a usage range past its category's freshness) and provider_segment (the address space cut
 * into pieces, each listing the ranges holding it, most specific first).
 */
import type Database from 'better-sqlite3';
import { ipKey, parseCidr, type IpVersion } from '../../shared/ip.js';
import {
  CATEGORY_FRESHNESS_SECONDS,
  HOSTING_CATEGORIES,
  type RangeCategory,
} from '../../shared/vocabulary.js';
import { RowWriter } from '../row-writer.js';
import { RangeTable } from './range-table.js';
import { buildSegments, type SegmentInput } from './segments.js';

/** A published cloud, hosting or CDN range. */
export interface HostingRange {
  version: IpVersion;
  first: bigint;
  last: bigint;
  provider: string;
  category: RangeCategory;
}

export interface ProviderRanges {
  /** Segment lookup: the most specific cloud/hosting/CDN range holding an address. */
  hostingByAddress: RangeTable<{ provider: string; category: string }>;
  /** The cloud/hosting/CDN ranges, for the per-AS providers block and the own category. */
  hostingRanges: HostingRange[];
  /** Feeds with at least one range in the release. */
  sources: Set<string>;
}

/**
 * The SQL condition of a served range at build time `builtAt` (epoch seconds): listed by its feed's
 * current snapshot and, for the categories of CATEGORY_FRESHNESS_SECONDS, recent enough.
 */
function servedCondition(builtAt: number): string {
  const stale = Object.entries(CATEGORY_FRESHNESS_SECONDS).map(
    ([category, seconds]) => `(category = '${category}' AND last_seen < ${Math.floor(builtAt - seconds!)})`,
  );
  return stale.length === 0 ? 'active = 1' : `active = 1 AND NOT (${stale.join(' OR ')})`;
}

/**
 * Writes provider_range (ids in (source, prefix, provider, category, metadata) order, which is
 * also the order of equally specific ranges in a segment) and provider_segment.
 */
export function writeProviderRanges(db: Database.Database, builtAt: number): ProviderRanges {
  const rows = db
    .prepare(
      `SELECT prefix, provider, category, metadata, first_seen, last_seen, source FROM st.provider_range
       WHERE ${servedCondition(builtAt)} ORDER BY source, prefix, provider, category, metadata`,
    )
    .raw()
    .all() as Array<[string, string, RangeCategory, string, number, number, string]>;
  const insert = new RowWriter(
    db,
    12,
    (values) =>
      `INSERT INTO provider_range (id, prefix, version, first, last, prefix_length, provider, category, metadata, first_seen, last_seen, source) VALUES ${values}`,
  );
  const inputs: SegmentInput[] = [];
  const byId = new Map<number, { provider: string; category: RangeCategory }>();
  const hostingRanges: HostingRange[] = [];
  const sources = new Set<string>();
  const mapped = (version: IpVersion, v: bigint) => (version === 4 ? (0xffffn << 32n) | v : v);
  let id = 0;
  for (const [prefix, provider, category, metadata, firstSeen, lastSeen, source] of rows) {
    const cidr = parseCidr(prefix);
    if (!cidr) continue;
    id++;
    sources.add(source);
    insert.row(
      id,
      prefix,
      cidr.version,
      ipKey(cidr.version, cidr.first),
      ipKey(cidr.version, cidr.last),
      cidr.prefixLength,
      provider,
      category,
      metadata,
      firstSeen,
      lastSeen,
      source,
    );
    inputs.push({
      id,
      first: mapped(cidr.version, cidr.first),
      last: mapped(cidr.version, cidr.last),
      prefixLength: cidr.version === 4 ? cidr.prefixLength + 96 : cidr.prefixLength,
    });
    byId.set(id, { provider, category });
    if (HOSTING_CATEGORIES.includes(category)) {
      hostingRanges.push({ version: cidr.version, first: cidr.first, last: cidr.last, provider, category });
    }
  }
  insert.flush();
  const segments = buildSegments(inputs);
  const insertSegment = new RowWriter(
    db,
    4,
    (values) => `INSERT INTO provider_segment (first, last, range_ids, hosting_range_id) VALUES ${values}`,
  );
  const hostingByAddress = new RangeTable<{ provider: string; category: string }>();
  const keyOf = (v: bigint) => {
    const buf = Buffer.allocUnsafe(16);
    buf.writeBigUInt64BE(v >> 64n, 0);
    buf.writeBigUInt64BE(v & 0xffffffffffffffffn, 8);
    return buf;
  };
  for (const s of segments) {
    const hostingId =
      s.ids.find((rangeId) => HOSTING_CATEGORIES.includes(byId.get(rangeId)!.category)) ?? null;
    insertSegment.row(keyOf(s.first), keyOf(s.last), JSON.stringify(s.ids), hostingId);
    if (hostingId !== null) {
      const isV4 = s.first >> 32n === 0xffffn && s.last >> 32n === 0xffffn;
      if (isV4) hostingByAddress.add(4, s.first & 0xffffffffn, s.last & 0xffffffffn, byId.get(hostingId)!);
      else hostingByAddress.add(6, s.first, s.last, byId.get(hostingId)!);
    }
  }
  insertSegment.flush();
  return { hostingByAddress, hostingRanges, sources };
}
