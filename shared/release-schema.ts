/**
 * The immutable per-release SQLite file. Everything a lookup needs is precomputed by the builder;
 * the server only reads. A change to this schema bumps RELEASE_SCHEMA_VERSION (CHANGELOG entry).
 *
 * Addresses used for range lookups are 16-byte keys (shared/ip.ts ipKey: IPv4 as ::ffff:a.b.c.d);
 * addresses that are only matched exactly (interval values) are canonical text.
 * Times are epoch seconds.
 */
export const RELEASE_SCHEMA_VERSION = 4;

/**
 * Intervals a domain_page row carries: the first page of GET /v1/domain/{d}/history at the default
 * limit (DEFAULT_LIMIT of queries/paging.ts; a test checks they agree).
 */
export const DOMAIN_PAGE_INTERVALS = 100;

/**
 * The history of the releases published (docs/decisions/0033-as-of.md): one `epoch` row per
 * release kept, this one last, and the versioned copies (`*_hist`) of the tables an answer reads.
 * Each version: e_from = the first epoch holding that content, e_to = the first epoch no longer
 * holding it (null: this release holds it); valid at epoch e when e_from <= e and (e_to is null or
 * e_to > e). Content identity: every column but the positional ids; references between the
 * tables are by `hid`, which a version keeps for ever. Some times are stored as symbols
 * (shared/as-of-symbols.ts: ROUND, SOURCE_DATE), decoded with the epoch's row. The builder state
 * holds the same tables (epoch as release_epoch, builder/state.ts) and a release copies them.
 */
export const HISTORY_TABLES = {
  /**
   * dns_cut: newest observation time applied to the DNS state (null: none); round_from/round_to:
   * min/max observation time of the last DNS round applied; coverage/attribution: that release's
   * meta values; source_dates: JSON {source: snapshot date} of the provider-range feeds.
   */
  epoch: `CREATE TABLE epoch (
    epoch INTEGER PRIMARY KEY, release_id TEXT NOT NULL, built_at INTEGER NOT NULL, dns_cut INTEGER,
    round_from INTEGER, round_to INTEGER, coverage TEXT NOT NULL, attribution TEXT NOT NULL, source_dates TEXT NOT NULL)`,
  /** last_seen: SOURCE_DATE when it is its source's date in the epoch's source_dates. */
  provider_range_hist: `CREATE TABLE provider_range_hist (
    hid INTEGER PRIMARY KEY, prefix TEXT NOT NULL, version INTEGER NOT NULL, first BLOB NOT NULL, last BLOB NOT NULL,
    prefix_length INTEGER NOT NULL, provider TEXT NOT NULL, category TEXT NOT NULL, metadata TEXT NOT NULL,
    first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, source TEXT NOT NULL,
    e_from INTEGER NOT NULL, e_to INTEGER)`,
  /** range_hids: JSON array of provider_range_hist hids, in the order of provider_segment.range_ids. */
  provider_segment_hist: `CREATE TABLE provider_segment_hist (
    first BLOB NOT NULL, e_from INTEGER NOT NULL, last BLOB NOT NULL, range_hids TEXT NOT NULL,
    hosting_range_hid INTEGER, e_to INTEGER, PRIMARY KEY (first, e_from)) WITHOUT ROWID`,
  /**
   * ord: position of the row among the release's asn_range rows of the same (version, first, last),
   * from 0 (the tie-break of asn-mapping.ts). An AS's ranges in asn_range id order (its pages) are
   * ORDER BY version, first, last DESC, ord (index asn_range_hist_by_asn).
   */
  asn_range_hist: `CREATE TABLE asn_range_hist (
    hid INTEGER PRIMARY KEY, first BLOB NOT NULL, last BLOB NOT NULL, version INTEGER NOT NULL, first_text TEXT NOT NULL,
    last_text TEXT NOT NULL, asn INTEGER, country TEXT, descr TEXT, prefixes TEXT NOT NULL, source TEXT NOT NULL,
    ord INTEGER NOT NULL, e_from INTEGER NOT NULL, e_to INTEGER)`,
  asn_segment_hist: `CREATE TABLE asn_segment_hist (
    first BLOB NOT NULL, e_from INTEGER NOT NULL, last BLOB NOT NULL, range_hid INTEGER NOT NULL, e_to INTEGER,
    PRIMARY KEY (first, e_from)) WITHOUT ROWID`,
  asn_hist: `CREATE TABLE asn_hist (
    asn INTEGER NOT NULL, e_from INTEGER NOT NULL, name TEXT, country TEXT, source TEXT, category TEXT,
    category_source TEXT, network_role TEXT, routes_v4 INTEGER NOT NULL, routes_v6 INTEGER NOT NULL,
    ipv4_addresses INTEGER NOT NULL, providers TEXT NOT NULL, observed_ips INTEGER, observed_domains INTEGER,
    e_to INTEGER, PRIMARY KEY (asn, e_from)) WITHOUT ROWID`,
  /** checked_at, last_confirmed: ROUND inside the epoch's round window. */
  ptr_hist: `CREATE TABLE ptr_hist (
    value TEXT NOT NULL, e_from INTEGER NOT NULL, names TEXT NOT NULL, status TEXT NOT NULL, checked_at INTEGER NOT NULL,
    last_confirmed INTEGER, e_to INTEGER, PRIMARY KEY (value, e_from)) WITHOUT ROWID`,
  /** last_confirmed: ROUND inside the epoch's round window. */
  ip_summary_hist: `CREATE TABLE ip_summary_hist (
    value TEXT NOT NULL, e_from INTEGER NOT NULL, current_count INTEGER NOT NULL, sample TEXT NOT NULL,
    first_observed INTEGER NOT NULL, last_confirmed INTEGER NOT NULL, e_to INTEGER,
    PRIMARY KEY (value, e_from)) WITHOUT ROWID`,
  /** name, rank, in_seed of domain; states: domain_page.states, its round times ROUND (as-of-symbols.ts). */
  domain_hist: `CREATE TABLE domain_hist (
    name TEXT NOT NULL, e_from INTEGER NOT NULL, rank INTEGER, in_seed INTEGER NOT NULL, states TEXT, e_to INTEGER,
    PRIMARY KEY (name, e_from)) WITHOUT ROWID`,
  /** domain_hosting by domain name; runs: the last_confirmed of each run ROUND in the window. */
  domain_hosting_hist: `CREATE TABLE domain_hosting_hist (
    name TEXT NOT NULL, e_from INTEGER NOT NULL, runs TEXT NOT NULL, truncated INTEGER NOT NULL, e_to INTEGER,
    PRIMARY KEY (name, e_from)) WITHOUT ROWID`,
} as const;

export type HistoryTable = keyof typeof HISTORY_TABLES;

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
  ...HISTORY_TABLES,
} as const;

export type ReleaseTable = keyof typeof RELEASE_TABLES;

/**
 * The history's own indexes (segments are read by their primary key: first <= ? ORDER BY first
 * DESC, then the version valid at the epoch). asn_range_hist_by_asn serves the pages of an AS's
 * ranges (asn = ? ORDER BY version, first, last DESC, ord) and the builder's lookups by content,
 * as provider_range_hist_by_content does.
 */
export const HISTORY_INDEXES = [
  `CREATE INDEX asn_range_hist_by_asn ON asn_range_hist (asn, version, first, last DESC, ord, e_from, e_to)`,
  `CREATE INDEX provider_range_hist_by_content ON provider_range_hist (source, prefix, provider, category, metadata)`,
];

export const RELEASE_INDEXES = [
  /** Unique; built once the seed names are in (writeDomains): faster than a UNIQUE column filled in rank order. */
  `CREATE UNIQUE INDEX domain_by_name ON domain (name)`,
  `CREATE INDEX asn_range_by_asn ON asn_range (asn, id)`,
  /** Reverse lookups page by (first_observed, id); covering, so the per-IP pass reads no table rows. */
  `CREATE INDEX dns_interval_by_value ON dns_interval (value, first_observed, domain_id, ended_at, last_confirmed)`,
  ...HISTORY_INDEXES,
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
