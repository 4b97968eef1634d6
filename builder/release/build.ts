/**
 * Compiles the state database into a release file at `file` (which must not exist). The caller
 * (publish.ts) builds into a temp path, checks, fsyncs and renames.
 */
import Database from 'better-sqlite3';
import { parseCidr, parseIp, ipKey, rangeToCidrs, rangeSize } from '../../shared/ip.js';
import { findIpBogon } from '../../shared/bogons.js';
import { HOSTING_CATEGORIES, type RangeCategory } from '../../shared/vocabulary.js';
import {
  META_KEYS,
  RELEASE_INDEXES,
  RELEASE_SCHEMA_VERSION,
  RELEASE_TABLES,
  SEMANTICS,
} from '../../shared/release-schema.js';
import { toIso } from '../../shared/time.js';
import { getSource } from '../sources/index.js';
import { buildSegments, type SegmentInput } from './segments.js';
import { RangeTable } from './range-table.js';
import { buildHostingRuns, encodeRun, type IntervalOnNetwork, type NetworkInfo } from './hosting-runs.js';

export interface BuildOptions {
  stateFile: string;
  releaseId: string;
  builtAt: number;
  /** Preference order of IP-to-ASN mapping sources, per address family the first with rows wins. */
  asnMappingPreference: string[];
  /** 'demo' labels the release as demo data in its coverage block. */
  dataset: 'production' | 'demo';
  /** Share of an AS's routed IPv4 space that published cloud/hosting/CDN ranges must cover for our own category. */
  ownCategoryThreshold: number;
  log: (line: string) => void;
}

export interface BuildResult {
  counts: Record<string, number>;
  phases: Array<{ name: string; seconds: number }>;
}

interface AsnAggregate {
  name: string | null;
  country: string | null;
  source: string;
  routesV4: number;
  routesV6: number;
  ipv4Addresses: bigint;
  providers: Map<string, { provider: string; category: string; ranges: number }>;
  coveredV4: Array<[number, number, string]>;
}

export function buildRelease(file: string, options: BuildOptions): BuildResult {
  const phases: BuildResult['phases'] = [];
  const phase = <T>(name: string, fn: () => T): T => {
    const started = performance.now();
    const result = fn();
    const seconds = (performance.now() - started) / 1000;
    phases.push({ name, seconds });
    options.log(`  ${name}: ${seconds.toFixed(1)} s`);
    return result;
  };

  const db = new Database(file);
  try {
    db.pragma('journal_mode = OFF');
    db.pragma('synchronous = OFF');
    db.pragma('cache_size = -131072'); // 128 MiB, and as much for the attached state: peak RSS stays < 1.5 GB
    db.pragma('temp_store = FILE');
    db.exec(`ATTACH DATABASE '${options.stateFile.replace(/'/g, "''")}' AS st`);
    db.pragma('st.cache_size = -131072');
    for (const ddl of Object.values(RELEASE_TABLES)) db.exec(ddl);

    const ranges = phase('provider ranges', () => writeProviderRanges(db));
    const asnTable = phase('asn mapping', () => writeAsnRanges(db, options, ranges));
    phase('domains and intervals', () => writeDomains(db));
    phase('indexes', () => {
      for (const ddl of RELEASE_INDEXES) db.exec(ddl);
    });
    const networks = new NetworkResolver(db, asnTable, ranges);
    phase('ip summaries and observed counts', () => writeIpSummaryAndObserved(db, networks));
    phase('hosting runs', () => writeHostingRuns(db, networks));
    db.exec(`INSERT INTO ptr SELECT ip, names, status, checked_at, last_confirmed FROM st.ptr`);
    const counts = phase('meta', () => writeMeta(db, options));
    db.exec('DETACH DATABASE st');
    phase('analyze', () => db.exec('ANALYZE'));
    return { counts, phases };
  } finally {
    db.close();
  }
}

interface ProviderRanges {
  /** Segment lookup: the most specific cloud/hosting/CDN range holding an address. */
  hostingByAddress: RangeTable<{ provider: string; category: string }>;
  /** Hosting-category ranges, for the per-AS providers block. */
  hostingRanges: Array<{ version: 4 | 6; first: bigint; last: bigint; provider: string; category: string }>;
}

function writeProviderRanges(db: Database.Database): ProviderRanges {
  const rows = db
    .prepare(
      `SELECT prefix, provider, category, metadata, first_seen, last_seen, source FROM st.provider_range
       WHERE active = 1 ORDER BY source, prefix, provider, category, metadata`,
    )
    .all() as Array<{
    prefix: string;
    provider: string;
    category: RangeCategory;
    metadata: string;
    first_seen: number;
    last_seen: number;
    source: string;
  }>;
  const insert = db.prepare(
    `INSERT INTO provider_range (id, prefix, version, first, last, prefix_length, provider, category, metadata, first_seen, last_seen, source)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  const inputs: SegmentInput[] = [];
  const byId = new Map<number, { provider: string; category: string }>();
  const hostingRanges: ProviderRanges['hostingRanges'] = [];
  const mapped = (version: 4 | 6, v: bigint) => (version === 4 ? (0xffffn << 32n) | v : v);
  db.transaction(() => {
    let id = 0;
    for (const r of rows) {
      const cidr = parseCidr(r.prefix);
      if (!cidr) continue;
      id++;
      insert.run(
        id,
        r.prefix,
        cidr.version,
        ipKey(cidr.version, cidr.first),
        ipKey(cidr.version, cidr.last),
        cidr.prefixLength,
        r.provider,
        r.category,
        r.metadata,
        r.first_seen,
        r.last_seen,
        r.source,
      );
      inputs.push({
        id,
        first: mapped(cidr.version, cidr.first),
        last: mapped(cidr.version, cidr.last),
        prefixLength: cidr.version === 4 ? cidr.prefixLength + 96 : cidr.prefixLength,
      });
      byId.set(id, { provider: r.provider, category: r.category });
      if (HOSTING_CATEGORIES.includes(r.category)) {
        hostingRanges.push({
          version: cidr.version,
          first: cidr.first,
          last: cidr.last,
          provider: r.provider,
          category: r.category,
        });
      }
    }
  })();
  const segments = buildSegments(inputs);
  const insertSegment = db.prepare(
    `INSERT INTO provider_segment (first, last, range_ids, hosting_range_id) VALUES (?, ?, ?, ?)`,
  );
  const hostingByAddress = new RangeTable<{ provider: string; category: string }>();
  const keyOf = (v: bigint) => {
    const buf = Buffer.allocUnsafe(16);
    buf.writeBigUInt64BE(v >> 64n, 0);
    buf.writeBigUInt64BE(v & 0xffffffffffffffffn, 8);
    return buf;
  };
  db.transaction(() => {
    for (const s of segments) {
      const hostingId =
        s.ids.find((id) => HOSTING_CATEGORIES.includes(byId.get(id)!.category as RangeCategory)) ?? null;
      insertSegment.run(keyOf(s.first), keyOf(s.last), JSON.stringify(s.ids), hostingId);
      if (hostingId !== null) {
        const isV4 = s.first >> 32n === 0xffffn && s.last >> 32n === 0xffffn;
        if (isV4) hostingByAddress.add(4, s.first & 0xffffffffn, s.last & 0xffffffffn, byId.get(hostingId)!);
        else hostingByAddress.add(6, s.first, s.last, byId.get(hostingId)!);
      }
    }
  })();
  return { hostingByAddress, hostingRanges };
}

interface AsnLookupValue {
  asn: number | null;
}

function writeAsnRanges(
  db: Database.Database,
  options: BuildOptions,
  providerRanges: ProviderRanges,
): RangeTable<AsnLookupValue> {
  const available = db
    .prepare(`SELECT source, version, count(*) AS n FROM st.asn_range GROUP BY source, version`)
    .all() as Array<{
    source: string;
    version: number;
    n: number;
  }>;
  const chosen = new Map<number, string>();
  for (const version of [4, 6]) {
    const candidates = available.filter((a) => a.version === version).map((a) => a.source);
    const preferred =
      options.asnMappingPreference.find((s) => candidates.includes(s)) ?? candidates.sort()[0];
    if (preferred) chosen.set(version, preferred);
  }
  const table = new RangeTable<AsnLookupValue>();
  const aggregates = new Map<number, AsnAggregate>();
  const insert = db.prepare(
    `INSERT OR IGNORE INTO asn_range (first, last, version, first_text, last_text, asn, country, descr, prefixes, source)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.transaction(() => {
    for (const [version, source] of chosen) {
      const rows = db
        .prepare(`SELECT first, last, asn, country, descr FROM st.asn_range WHERE source = ? AND version = ?`)
        .all(source, version) as Array<{
        first: string;
        last: string;
        asn: number;
        country: string | null;
        descr: string | null;
      }>;
      const parsed = rows
        .map((r) => ({ r, first: parseIp(r.first)!, last: parseIp(r.last)! }))
        .sort((a, b) => (a.first.value < b.first.value ? -1 : a.first.value > b.first.value ? 1 : 0));
      let previousLast = -1n;
      for (const { r, first, last } of parsed) {
        if (first.value <= previousLast) continue; // overlapping row in the mapping: keep the first
        previousLast = last.value;
        const asn = r.asn === 0 ? null : r.asn;
        insert.run(
          ipKey(first.version, first.value),
          ipKey(last.version, last.value),
          version,
          r.first,
          r.last,
          asn,
          r.country,
          r.descr,
          JSON.stringify(rangeToCidrs(first.version, first.value, last.value)),
          source,
        );
        table.add(first.version, first.value, last.value, { asn });
        if (asn === null) continue;
        let agg = aggregates.get(asn);
        if (!agg) {
          agg = {
            name: r.descr,
            country: r.country,
            source,
            routesV4: 0,
            routesV6: 0,
            ipv4Addresses: 0n,
            providers: new Map(),
            coveredV4: [],
          };
          aggregates.set(asn, agg);
        }
        if (version === 4) {
          agg.routesV4++;
          agg.ipv4Addresses += rangeSize(first.value, last.value);
        } else agg.routesV6++;
        agg.name ??= r.descr;
        agg.country ??= r.country;
      }
    }
  })();

  // Published cloud/hosting/CDN ranges lying inside one of the AS's ranges (a larger one is not counted).
  for (const pr of providerRanges.hostingRanges) {
    const holder = table.findContaining(pr.version, pr.first, pr.last);
    if (!holder || holder.asn === null) continue;
    const agg = aggregates.get(holder.asn)!;
    const key = `${pr.provider}\u0000${pr.category}`;
    const entry = agg.providers.get(key) ?? { provider: pr.provider, category: pr.category, ranges: 0 };
    entry.ranges++;
    agg.providers.set(key, entry);
    if (pr.version === 4) agg.coveredV4.push([Number(pr.first), Number(pr.last), pr.category]);
  }

  const meta = db.prepare(`SELECT asn, field, source, value FROM st.as_meta ORDER BY source`).all() as Array<{
    asn: number;
    field: string;
    source: string;
    value: string;
  }>;
  const external = new Map<number, { category?: string; network_role?: string; name?: string }>();
  for (const m of meta) {
    const e = external.get(m.asn) ?? {};
    if (m.field === 'category') e.category ??= m.value;
    else if (m.field === 'network_role') e.network_role ??= m.value;
    else if (m.field === 'name') e.name ??= m.value;
    external.set(m.asn, e);
  }
  const insertAsn = db.prepare(
    `INSERT INTO asn (asn, name, country, source, category, category_source, network_role, routes_v4, routes_v6,
       ipv4_addresses, providers, observed_ips, observed_domains) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, NULL, NULL)`,
  );
  db.transaction(() => {
    for (const [asn, agg] of aggregates) {
      const ext = external.get(asn);
      const own = ownCategory(agg, options.ownCategoryThreshold);
      const category = own ?? ext?.category ?? null;
      const providers = [...agg.providers.values()].sort(
        (a, b) =>
          b.ranges - a.ranges || a.provider.localeCompare(b.provider) || a.category.localeCompare(b.category),
      );
      insertAsn.run(
        asn,
        agg.name ?? ext?.name ?? null,
        agg.country,
        agg.source,
        category,
        category === null ? null : own ? 'own' : 'external',
        ext?.network_role ?? null,
        agg.routesV4,
        agg.routesV6,
        Number(agg.ipv4Addresses),
        JSON.stringify(providers),
      );
    }
    // AS numbers with metadata but no mapped ranges still answer with their classification.
    for (const [asn, ext] of external) {
      if (aggregates.has(asn)) continue;
      insertAsn.run(
        asn,
        ext.name ?? null,
        null,
        null,
        ext.category ?? null,
        ext.category ? 'external' : null,
        ext.network_role ?? null,
        0,
        0,
        0,
        '[]',
      );
    }
  })();
  return table;
}

/**
 * Our own category: an AS whose routed IPv4 space is at least `threshold` covered by published
 * ranges is `cdn` when CDN ranges cover more of it than cloud/hosting ranges, else `hosting`.
 */
function ownCategory(agg: AsnAggregate, threshold: number): string | null {
  if (agg.ipv4Addresses === 0n || agg.coveredV4.length === 0) return null;
  const covered = { cdn: 0, hosting: 0 };
  for (const kind of ['cdn', 'hosting'] as const) {
    const spans = agg.coveredV4
      .filter(([, , c]) => (kind === 'cdn' ? c === 'cdn' : c !== 'cdn'))
      .sort((a, b) => a[0] - b[0]);
    let end = -1;
    for (const [f, l] of spans) {
      const from = Math.max(f, end + 1);
      if (l >= from) covered[kind] += l - from + 1;
      end = Math.max(end, l);
    }
  }
  const total = Number(agg.ipv4Addresses);
  if ((covered.cdn + covered.hosting) / total < threshold) return null;
  return covered.cdn > covered.hosting ? 'cdn' : 'hosting';
}

function writeDomains(db: Database.Database): void {
  db.exec(`
    CREATE TEMP TABLE resolved AS
      SELECT domain AS name, rank, 0 AS www FROM st.seed
      UNION ALL SELECT 'www.' || domain, rank, 1 FROM st.seed WHERE domain NOT LIKE 'www.%';
    INSERT OR IGNORE INTO domain (name, rank, in_seed) SELECT name, rank, 1 FROM resolved ORDER BY rank, www, name;
    INSERT OR IGNORE INTO domain (name, rank, in_seed) SELECT name, NULL, 0 FROM st.dns_name ORDER BY name;
    DROP TABLE temp.resolved;
    CREATE TEMP TABLE name_map (name_id INTEGER PRIMARY KEY, domain_id INTEGER NOT NULL);
    INSERT INTO name_map SELECT n.id, d.id FROM st.dns_name n JOIN domain d ON d.name = n.name;
    INSERT INTO dns_state SELECT m.domain_id, s.rtype, s.outcome, s.good_outcome, s.vals, s.cnames, s.last_observed,
      s.last_confirmed, s.last_positive FROM st.dns_state s JOIN name_map m USING (name_id) ORDER BY m.domain_id, s.rtype;
    INSERT INTO dns_interval (domain_id, rtype, value, first_observed, last_confirmed, ended_at)
      SELECT m.domain_id, x.rtype, x.value, x.first_observed, x.last_confirmed, x.ended_at FROM (
        SELECT name_id, rtype, value, first_observed, last_confirmed, ended_at FROM st.dns_ended
        UNION ALL
        SELECT s.name_id, s.rtype, v.value, f.value, s.last_positive, NULL
          FROM st.dns_state s, json_each(s.vals) v, json_each(s.firsts) f WHERE f.key = v.key
      ) x JOIN name_map m USING (name_id)
      ORDER BY m.domain_id, x.first_observed, x.rtype, x.value;
    CREATE TEMP TABLE span AS SELECT domain_id, min(id) AS lo, max(id) AS hi FROM dns_interval GROUP BY domain_id;
    UPDATE domain SET interval_lo = span.lo, interval_hi = span.hi FROM span WHERE span.domain_id = domain.id;
    DROP TABLE temp.span;
  `);
}

/** Network (routing ASN + cloud/hosting/CDN provider under this release) of an address. */
class NetworkResolver {
  private readonly byKey = new Map<string, NetworkInfo>();
  private readonly asnInfo = new Map<number, { name: string | null; category: string | null }>();
  private static readonly BOGON: NetworkInfo = {
    key: 'bogon',
    public: false,
    asn: null,
    asName: null,
    provider: null,
    category: null,
  };

  constructor(
    db: Database.Database,
    private readonly asnTable: RangeTable<AsnLookupValue>,
    private readonly ranges: ProviderRanges,
  ) {
    const rows = db.prepare(`SELECT asn, name, category FROM asn`).all() as Array<{
      asn: number;
      name: string | null;
      category: string | null;
    }>;
    for (const row of rows) this.asnInfo.set(row.asn, { name: row.name, category: row.category });
  }

  of(value: string): NetworkInfo {
    const ip = parseIp(value);
    if (!ip || findIpBogon(ip)) return NetworkResolver.BOGON;
    const asn = this.asnTable.find(ip.version, ip.value)?.asn ?? null;
    const hosting = this.ranges.hostingByAddress.find(ip.version, ip.value);
    const key = `${asn}|${hosting?.provider ?? ''}`;
    let info = this.byKey.get(key);
    if (!info) {
      const as = asn !== null ? this.asnInfo.get(asn) : undefined;
      info = {
        key,
        public: true,
        asn,
        asName: as?.name ?? null,
        provider: hosting?.provider ?? null,
        category: hosting?.category ?? as?.category ?? null,
      };
      this.byKey.set(key, info);
    }
    return info;
  }
}

interface IntervalByValue {
  value: string;
  first_observed: number;
  domain_id: number;
  ended_at: number | null;
  last_confirmed: number;
}

/**
 * One pass over the intervals in address order (the covering index): per address the summary of
 * the IP lookup's `domains` block, and per AS the observed counts (addresses with a current domain,
 * distinct current domains).
 */
function writeIpSummaryAndObserved(db: Database.Database, networks: NetworkResolver): void {
  const names = db.prepare(`SELECT name FROM domain ORDER BY id`).pluck().all() as string[];
  const firstId = (db.prepare(`SELECT coalesce(min(id), 1) FROM domain`).pluck().get() as number) ?? 1;
  const read = db.prepare(
    `SELECT value, first_observed, domain_id, ended_at, last_confirmed FROM dns_interval INDEXED BY dns_interval_by_value
     WHERE value >= ? ORDER BY value, first_observed LIMIT ?`,
  );
  const readOne = db.prepare(
    `SELECT value, first_observed, domain_id, ended_at, last_confirmed FROM dns_interval INDEXED BY dns_interval_by_value
     WHERE value = ?`,
  );
  const insert = db.prepare(
    `INSERT INTO ip_summary (value, current_count, sample, first_observed, last_confirmed) VALUES (?, ?, ?, ?, ?)`,
  );
  const observedIps = new Map<number, number>();
  const observedDomains = new Map<number, Set<number>>();
  const summarize = (value: string, rows: IntervalByValue[]) => {
    let first = Infinity;
    let last = 0;
    const current = new Set<number>();
    for (const r of rows) {
      if (r.first_observed < first) first = r.first_observed;
      if (r.last_confirmed > last) last = r.last_confirmed;
      if (r.ended_at === null) current.add(r.domain_id);
    }
    const ids = [...current].sort((a, b) => a - b);
    insert.run(
      value,
      ids.length,
      JSON.stringify(ids.slice(0, 10).map((id) => names[id - firstId])),
      first,
      last,
    );
    if (ids.length === 0) return;
    const asn = networks.of(value).asn;
    if (asn === null) return;
    observedIps.set(asn, (observedIps.get(asn) ?? 0) + 1);
    let set = observedDomains.get(asn);
    if (!set) observedDomains.set(asn, (set = new Set()));
    for (const id of ids) set.add(id);
  };
  const chunk = 100_000;
  let from = '';
  for (;;) {
    const rows = read.all(from, chunk) as IntervalByValue[];
    if (rows.length === 0) break;
    const lastValue = rows[rows.length - 1]!.value;
    const complete = rows.length < chunk;
    db.transaction(() => {
      if (!complete && rows[0]!.value === lastValue) {
        // One address holds the whole chunk: read all of its rows.
        summarize(lastValue, readOne.all(lastValue) as IntervalByValue[]);
        return;
      }
      let start = 0;
      for (let i = 1; i <= rows.length; i++) {
        if (i === rows.length || rows[i]!.value !== rows[start]!.value) {
          const value = rows[start]!.value;
          if (value === lastValue && !complete) break; // may continue in the next chunk
          summarize(value, rows.slice(start, i));
          start = i;
        }
      }
    })();
    if (complete) break;
    if (rows[0]!.value === lastValue) {
      from = `${lastValue}\u0000`; // the next address after lastValue
    } else {
      from = lastValue;
    }
  }
  const update = db.prepare(`UPDATE asn SET observed_ips = ?, observed_domains = ? WHERE asn = ?`);
  db.transaction(() => {
    db.exec(`UPDATE asn SET observed_ips = 0, observed_domains = 0`);
    for (const [asn, ips] of observedIps) update.run(ips, observedDomains.get(asn)!.size, asn);
  })();
}

/** Hosting runs, domain by domain, reading intervals in rowid (= domain) order in slices. */
function writeHostingRuns(db: Database.Database, networks: NetworkResolver): void {
  const maxId = (db.prepare(`SELECT coalesce(max(id), 0) FROM dns_interval`).pluck().get() as number) ?? 0;
  const slice = db.prepare(
    `SELECT domain_id, rtype, value, first_observed, last_confirmed, ended_at FROM dns_interval WHERE id > ? AND id <= ? ORDER BY id`,
  );
  const insertRuns = db.prepare(`INSERT INTO domain_hosting (domain_id, runs, truncated) VALUES (?, ?, ?)`);
  const flush = (domainId: number, intervals: IntervalOnNetwork[]) => {
    intervals.sort((a, b) => a.firstObserved - b.firstObserved);
    const { runs, truncated } = buildHostingRuns(intervals);
    insertRuns.run(domainId, JSON.stringify(runs.map(encodeRun)), truncated ? 1 : 0);
  };
  const step = 200_000;
  let currentDomain = -1;
  let pending: IntervalOnNetwork[] = [];
  for (let lo = 0; lo < maxId; lo += step) {
    const rows = slice.all(lo, lo + step) as Array<{
      domain_id: number;
      rtype: string;
      value: string;
      first_observed: number;
      last_confirmed: number;
      ended_at: number | null;
    }>;
    db.transaction(() => {
      for (const r of rows) {
        if (r.domain_id !== currentDomain) {
          if (pending.length > 0) flush(currentDomain, pending);
          currentDomain = r.domain_id;
          pending = [];
        }
        pending.push({
          rtype: r.rtype,
          value: r.value,
          firstObserved: r.first_observed,
          lastConfirmed: r.last_confirmed,
          endedAt: r.ended_at,
          network: networks.of(r.value),
        });
      }
    })();
  }
  if (pending.length > 0) db.transaction(() => flush(currentDomain, pending))();
}

function writeMeta(db: Database.Database, options: BuildOptions): Record<string, number> {
  const window = db
    .prepare(`SELECT min(first_observed) AS first, max(last_confirmed) AS last FROM dns_interval`)
    .get() as { first: number | null; last: number | null };
  const lastQuery = db.prepare(`SELECT max(last_observed) FROM dns_state`).pluck().get() as number | null;
  const seedSnapshot = db
    .prepare(`SELECT files FROM st.source_snapshot WHERE kind = 'seed'`)
    .pluck()
    .get() as string | undefined;
  const seedNames = db.prepare(`SELECT count(*) FROM st.seed`).pluck().get() as number;
  const derived = db
    .prepare(`SELECT count(*) FROM domain WHERE in_seed = 1 AND name LIKE 'www.%'`)
    .pluck()
    .get() as number;
  const ptrChecked = db.prepare(`SELECT count(*) FROM ptr`).pluck().get() as number;
  const ptrObserved = db
    .prepare(`SELECT count(*) FROM ptr WHERE status = 'positive'`)
    .pluck()
    .get() as number;
  const seedFile = seedSnapshot
    ? ((JSON.parse(seedSnapshot) as Array<{ file: string }>)[0]?.file ?? null)
    : null;
  const coverage: Record<string, unknown> = {
    observation_window: {
      first: window.first !== null ? toIso(window.first) : null,
      last: lastQuery !== null ? toIso(Math.max(lastQuery, window.last ?? 0)) : null,
    },
    vantage_count: 1,
    record_types: ['A', 'AAAA'],
    seed: {
      source:
        options.dataset === 'demo'
          ? 'demo seed (reserved example domains)'
          : seedFile
            ? `tranco (${seedFile})`
            : 'none',
      names: seedNames,
    },
    derived: { www_names: derived },
    semantics: SEMANTICS,
  };
  if (ptrChecked > 0) coverage.ptr = { checked_ips: ptrChecked, observed_ips: ptrObserved };
  if (options.dataset === 'demo') {
    coverage.dataset = 'demo';
    coverage.note =
      'DEMO DATA: names under reserved example domains with generated observations; ranges are real published excerpts';
  }
  const snapshots = db.prepare(`SELECT * FROM st.source_snapshot ORDER BY source`).all() as Array<{
    source: string;
    kind: string;
    origin: string;
    imported_at: number;
    published_at: string | null;
    files: string;
    records: number;
    rejected: number;
  }>;
  const sources = snapshots.map((s) => ({
    source: s.source,
    kind: s.kind,
    origin: s.origin,
    imported_at: toIso(s.imported_at),
    published_at: s.published_at,
    records: s.records,
    rejected: s.rejected,
    files: (
      JSON.parse(s.files) as Array<{
        file: string;
        url?: string;
        sha256: string;
        bytes: number;
        fetched_at: number;
      }>
    ).map((f) => ({
      ...f,
      fetched_at: toIso(f.fetched_at),
    })),
  }));
  const attribution = [
    {
      source: 'DNS observations and PTR names',
      by: 'measured by this service',
      license: 'same as the service data',
    },
    ...snapshots.flatMap((s) => {
      const def = getSource(s.source);
      return def ? [def.attribution] : [];
    }),
  ];
  const counts: Record<string, number> = {};
  for (const table of Object.keys(RELEASE_TABLES)) {
    if (table === 'meta') continue;
    counts[table] = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
  }
  const insert = db.prepare(`INSERT INTO meta (key, value) VALUES (?, ?)`);
  db.transaction(() => {
    insert.run(META_KEYS.schemaVersion, String(RELEASE_SCHEMA_VERSION));
    insert.run(META_KEYS.releaseId, options.releaseId);
    insert.run(META_KEYS.builtAt, toIso(options.builtAt));
    insert.run(META_KEYS.coverage, JSON.stringify(coverage));
    insert.run(META_KEYS.attribution, JSON.stringify(attribution));
    insert.run(META_KEYS.sources, JSON.stringify(sources));
    insert.run(META_KEYS.counts, JSON.stringify(counts));
  })();
  return counts;
}
