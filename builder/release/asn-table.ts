/**
 * The release's `asn` table: per AS number its name, country, routes, IPv4 size, the published
 * ranges inside its routes, its category (our own, else imported) and network role.
 */
import type Database from 'better-sqlite3';
import {
  mergeIntervals,
  overlapSize,
  rowsContaining,
  type LayeredMapping,
  type MappingRow,
} from './asn-mapping.js';
import type { HostingRange } from './provider-ranges.js';

interface AsnAggregate {
  /** Of the AS's rows, the best-ranked source's; name and country the first such rows give. */
  source: string;
  rank: number;
  name: string | null;
  country: string | null;
  routesV4: number;
  routesV6: number;
  /** The AS's IPv4 rows, merged: its routed IPv4 space. */
  v4: Array<[bigint, bigint]>;
  providers: Map<string, { provider: string; category: string; ranges: number }>;
}

/** Per field, the imported value and the AS-metadata source it came from. */
interface External {
  category?: { value: string; source: string };
  network_role?: { value: string; source: string };
  name?: { value: string; source: string };
}

/**
 * Writes the asn table; returns the AS-metadata sources whose values it uses (for attribution).
 * The observed counts are written later (writeObserved), once the addresses are placed.
 */
export function writeAsnTable(
  db: Database.Database,
  mapping: LayeredMapping,
  hostingRanges: HostingRange[],
  ownCategoryThreshold: number,
): Set<string> {
  const aggregates = aggregate(mapping.all);
  countProviders(aggregates, mapping.rows, hostingRanges);
  const hostingV4 = {
    all: mergeIntervals(
      hostingRanges.filter((r) => r.version === 4).map((r): [bigint, bigint] => [r.first, r.last]),
    ),
    cdn: mergeIntervals(
      hostingRanges
        .filter((r) => r.version === 4 && r.category === 'cdn')
        .map((r): [bigint, bigint] => [r.first, r.last]),
    ),
    other: mergeIntervals(
      hostingRanges
        .filter((r) => r.version === 4 && r.category !== 'cdn')
        .map((r): [bigint, bigint] => [r.first, r.last]),
    ),
  };
  const external = readExternal(db);
  const used = new Set<string>();
  const use = <T>(field: { value: T; source: string } | undefined): T | null => {
    if (!field) return null;
    used.add(field.source);
    return field.value;
  };
  const insert = db.prepare(
    `INSERT INTO asn (asn, name, country, source, category, category_source, network_role, routes_v4, routes_v6,
       ipv4_addresses, providers, observed_ips, observed_domains) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
  );
  for (const [asn, agg] of aggregates) {
    const ext = external.get(asn);
    const size = agg.v4.reduce((sum, [first, last]) => sum + last - first + 1n, 0n);
    const own = ownCategory(agg.v4, size, hostingV4, ownCategoryThreshold);
    const category = own ?? use(ext?.category);
    const providers = [...agg.providers.values()].sort(
      (a, b) =>
        b.ranges - a.ranges || a.provider.localeCompare(b.provider) || a.category.localeCompare(b.category),
    );
    insert.run(
      asn,
      agg.name ?? use(ext?.name),
      agg.country,
      agg.source,
      category,
      category === null ? null : own ? 'own' : 'external',
      use(ext?.network_role),
      agg.routesV4,
      agg.routesV6,
      Number(size),
      JSON.stringify(providers),
    );
  }
  // AS numbers with metadata but no mapped ranges still answer with their classification.
  for (const [asn, ext] of external) {
    if (aggregates.has(asn)) continue;
    const category = use(ext.category);
    insert.run(
      asn,
      use(ext.name),
      null,
      null,
      category,
      category ? 'external' : null,
      use(ext.network_role),
      0,
      0,
      0,
      '[]',
    );
  }
  return used;
}

/** Per AS its kept rows' aggregate; `all` in read order (best-ranked source first, file order). */
function aggregate(all: MappingRow[]): Map<number, AsnAggregate> {
  const aggregates = new Map<number, AsnAggregate>();
  const v4 = new Map<number, Array<[bigint, bigint]>>();
  for (const r of all) {
    if (r.id === 0 || r.asn === 0) continue;
    let agg = aggregates.get(r.asn);
    if (!agg) {
      agg = {
        source: r.source,
        rank: r.rank,
        name: null,
        country: null,
        routesV4: 0,
        routesV6: 0,
        v4: [],
        providers: new Map(),
      };
      aggregates.set(r.asn, agg);
      v4.set(r.asn, []);
    }
    agg.name ??= r.descr;
    agg.country ??= r.country;
    if (r.version === 4) {
      agg.routesV4++;
      v4.get(r.asn)!.push([r.first, r.last]);
    } else agg.routesV6++;
  }
  for (const [asn, agg] of aggregates) agg.v4 = mergeIntervals(v4.get(asn)!);
  return aggregates;
}

/**
 * The providers block: a published cloud, hosting or CDN range counts for the AS of the row that
 * holds all of it and would answer there (a range larger than the AS's route is not counted).
 */
function countProviders(
  aggregates: Map<number, AsnAggregate>,
  rows: MappingRow[],
  hostingRanges: HostingRange[],
): void {
  const holders = rowsContaining(rows, hostingRanges);
  hostingRanges.forEach((pr, i) => {
    const holder = holders[i];
    if (!holder || holder.asn === 0) return;
    const agg = aggregates.get(holder.asn)!;
    const key = `${pr.provider}\u0000${pr.category}`;
    const entry = agg.providers.get(key) ?? { provider: pr.provider, category: pr.category, ranges: 0 };
    entry.ranges++;
    agg.providers.set(key, entry);
  });
}

/**
 * Our own category (docs/decisions/0005): when published cloud, hosting and CDN ranges cover at
 * least `threshold` of the AS's routed IPv4 space (every part of a range inside any of its routes
 * counts), `cdn` if CDN ranges cover more of it than cloud/hosting ranges, else `hosting`.
 */
function ownCategory(
  routed: Array<[bigint, bigint]>,
  size: bigint,
  hosting: { all: Array<[bigint, bigint]>; cdn: Array<[bigint, bigint]>; other: Array<[bigint, bigint]> },
  threshold: number,
): 'cdn' | 'hosting' | null {
  if (size === 0n) return null;
  const covered = overlapSize(routed, hosting.all);
  if (covered === 0n || Number(covered) / Number(size) < threshold) return null;
  return overlapSize(routed, hosting.cdn) > overlapSize(routed, hosting.other) ? 'cdn' : 'hosting';
}

/** AS metadata by AS number: per field the value of the first source (by name) that has one. */
function readExternal(db: Database.Database): Map<number, External> {
  const meta = db.prepare(`SELECT asn, field, source, value FROM st.as_meta ORDER BY source`).all() as Array<{
    asn: number;
    field: string;
    source: string;
    value: string;
  }>;
  const external = new Map<number, External>();
  for (const m of meta) {
    const e = external.get(m.asn) ?? {};
    if (m.field === 'category' || m.field === 'network_role' || m.field === 'name')
      e[m.field] ??= { value: m.value, source: m.source };
    external.set(m.asn, e);
  }
  return external;
}
