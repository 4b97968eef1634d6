/**
 * The immutable per-release SQLite file. Everything a lookup needs is precomputed by the builder;
 * the server only reads. A change to this schema bumps RELEASE_SCHEMA_VERSION (CHANGELOG entry).
 *
 * Addresses used for range lookups are 16-byte keys (shared/ip.ts ipKey: IPv4 as ::ffff:a.b.c.d);
 * addresses that are only matched exactly (interval values) are canonical text.
 * Times are epoch seconds.
 */
export const RELEASE_SCHEMA_VERSION = 3;

/**
 * Intervals a domain_page row carries: the first page of GET /v1/domain/{d}/history at the default
 * limit (DEFAULT_LIMIT of queries/paging.ts; a test checks they agree).
 */
export const DOMAIN_PAGE_INTERVALS = 100;

export const RELEASE_TABLES = {
  meta: `CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
  provider_range: `CREATE TABLE provider_range (
    id INTEGER PRIMARY KEY, prefix TEXT NOT NULL, version INTEGER NOT NULL, first BLOB NOT NULL, last BLOB NOT NULL,
    prefix_length INTEGER NOT NULL, provider TEXT NOT NULL, category TEXT NOT NULL, metadata TEXT NOT NULL,
    first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, source TEXT NOT NULL)`,
  /** Non-overlapping segments of the address space with the provider ranges holding them (most specific first). */
  provider_segment: `CREATE TABLE provider_segment (
    first BLOB PRIMARY KEY, last BLOB NOT NULL, range_ids TEXT NOT NULL, hosting_range_id INTEGER) WITHOUT ROWID`,
  /**
   * Every row the layered IP-to-ASN mapping keeps (builder/release/asn-mapping.ts); rows may nest or
   * overlap. Ids are in page order: IPv4 first, then by first address, a larger row first.
   */
  asn_range: `CREATE TABLE asn_range (
    id INTEGER PRIMARY KEY, first BLOB NOT NULL, last BLOB NOT NULL, version INTEGER NOT NULL, first_text TEXT NOT NULL,
    last_text TEXT NOT NULL, asn INTEGER, country TEXT, descr TEXT, prefixes TEXT NOT NULL, source TEXT NOT NULL)`,
  /** Non-overlapping pieces of the address space, each answered by one asn_range row. */
  asn_segment: `CREATE TABLE asn_segment (
    first BLOB PRIMARY KEY, last BLOB NOT NULL, range_id INTEGER NOT NULL) WITHOUT ROWID`,
  asn: `CREATE TABLE asn (
    asn INTEGER PRIMARY KEY, name TEXT, country TEXT, source TEXT, category TEXT, category_source TEXT,
    network_role TEXT, routes_v4 INTEGER NOT NULL, routes_v6 INTEGER NOT NULL, ipv4_addresses INTEGER NOT NULL,
    providers TEXT NOT NULL, observed_ips INTEGER, observed_domains INTEGER)`,
  /** Ids follow seed rank (apex, then www), then names observed outside the seed: a smaller id is a more popular name. */
  domain: `CREATE TABLE domain (
    id INTEGER PRIMARY KEY, name TEXT NOT NULL, rank INTEGER, in_seed INTEGER NOT NULL)`,
  /**
   * One row per domain, keyed by the normalized name: the first page of its history in one B-tree
   * seek (docs/decisions/0022). `states`: the current state per record type, in record-type order,
   * as JSON [rtype, outcome, vals, cnames, last_observed, last_confirmed, last_positive]; `intervals`:
   * its first DOMAIN_PAGE_INTERVALS dns_interval rows (ids interval_lo, interval_lo + 1, …) as JSON
   * [rtype, value, first_observed, last_confirmed, ended_at]; interval_lo..interval_hi: all of them
   * (null: none).
   */
  domain_page: `CREATE TABLE domain_page (
    name TEXT PRIMARY KEY, id INTEGER NOT NULL, states TEXT NOT NULL, intervals TEXT NOT NULL,
    interval_lo INTEGER, interval_hi INTEGER) WITHOUT ROWID`,
  /** Rows are in (domain_id, first_observed) order: a domain's history is the rowid span interval_lo..interval_hi of its domain_page row. */
  dns_interval: `CREATE TABLE dns_interval (
    id INTEGER PRIMARY KEY, domain_id INTEGER NOT NULL, rtype TEXT NOT NULL, value TEXT NOT NULL,
    first_observed INTEGER NOT NULL, last_confirmed INTEGER NOT NULL, ended_at INTEGER)`,
  ip_summary: `CREATE TABLE ip_summary (
    value TEXT PRIMARY KEY, current_count INTEGER NOT NULL, sample TEXT NOT NULL,
    first_observed INTEGER NOT NULL, last_confirmed INTEGER NOT NULL) WITHOUT ROWID`,
  domain_hosting: `CREATE TABLE domain_hosting (domain_id INTEGER PRIMARY KEY, runs TEXT NOT NULL, truncated INTEGER NOT NULL)`,
  ptr: `CREATE TABLE ptr (
    value TEXT PRIMARY KEY, names TEXT NOT NULL, status TEXT NOT NULL, checked_at INTEGER NOT NULL,
    last_confirmed INTEGER) WITHOUT ROWID`,
} as const;

export type ReleaseTable = keyof typeof RELEASE_TABLES;

export const RELEASE_INDEXES = [
  /** Unique; built once the seed names are in (writeDomains): faster than a UNIQUE column filled in rank order. */
  `CREATE UNIQUE INDEX domain_by_name ON domain (name)`,
  `CREATE INDEX asn_range_by_asn ON asn_range (asn, id)`,
  /** Reverse lookups page by (first_observed, id); covering, so the per-IP pass reads no table rows. */
  `CREATE INDEX dns_interval_by_value ON dns_interval (value, first_observed, domain_id, ended_at, last_confirmed)`,
];

/** Keys of the meta table. JSON values are marked. */
export const META_KEYS = {
  schemaVersion: 'schema_version',
  releaseId: 'release_id',
  builtAt: 'built_at',
  coverage: 'coverage', // JSON
  attribution: 'attribution', // JSON
  sources: 'sources', // JSON
  counts: 'counts', // JSON: row count per table, checked before publishing
} as const;

/** Short forms of the reading rules (docs/api.md#reading-rules), carried in coverage.semantics. */
export const SEMANTICS = [
  'null means unknown, never false',
  'is_datacenter and is_cdn are true only inside a published cloud/hosting resp. CDN range; otherwise null',
  'an empty list means not observed here, not absent',
  'a CDN edge is not the customer origin; domains sharing an IP do not share an implied owner',
  'a failed DNS query never erases an earlier answer; a TTL or order change is not a change of address',
  'observed: false means the name is outside the resolved set, not that it has no DNS',
  'one resolver at one vantage point; answers that differ by location are recorded as that resolver saw them',
];
