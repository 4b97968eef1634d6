/**
 * What every feed parser returns. A parser is a pure function of the file's text: it never
 * touches the state database, the network or the clock. The importer stores its records.
 */
import type { AsCategory, NetworkRole, Outcome, RangeCategory, RecordType } from '../../shared/vocabulary.js';

export interface Rejected {
  /** 1-based line number in the file (for single-line JSON files: 1). */
  line: number;
  /** What was expected, e.g. `expected a CIDR in column 1, got "10.0.0.300/8"`. */
  reason: string;
}

export interface ParseResult<T> {
  records: T[];
  rejected: Rejected[];
  /** Data rows/items read (comments, blank lines and headers excluded). records + rejected = read. */
  read: number;
  /** The publisher's own snapshot time, ISO 8601, where the file carries one (createDate, creationTime, …). */
  publishedAt?: string;
}

/** A published range of a cloud, hosting or CDN provider, or of a usage list (Tor, relay, crawler). */
export interface ProviderRangeRecord {
  /** Canonical CIDR (network address, host bits cleared, RFC 5952 for IPv6). */
  prefix: string;
  provider: string;
  category: RangeCategory;
  /** Free-form per category: region/service for clouds; `{kind}` for Tor; `{operator, bot}` for crawlers; `{}` for relay. */
  metadata: Record<string, string>;
  /**
   * The entry's own date (ISO 8601 UTC) where the format dates each entry (TorDNSEL's ExitAddress
   * time). The importer dates an entry by this, else by the file's publishedAt, else by the fetch.
   */
  seenAt?: string;
}

/** One row of an IP-to-ASN mapping. asn 0 means "not routed". */
export interface AsnRangeRecord {
  /** Canonical first and last address, inclusive. */
  first: string;
  last: string;
  asn: number;
  /** Registry country (two letters), null when the mapping has none ("None", empty). */
  country: string | null;
  /** AS description / organisation, null when empty or "Not routed". */
  descr: string | null;
}

export interface AsCategoryRecord {
  asn: number;
  category: AsCategory;
}

export interface AsRoleRecord {
  asn: number;
  networkRole: NetworkRole;
}

export interface AsNameRecord {
  asn: number;
  name: string;
}

export interface SeedRecord {
  rank: number;
  /** Normalised registered domain (lowercase, punycode, no trailing dot). */
  domain: string;
}

/** One DNS query result, the unit of the NDJSON observation format and of the collector. */
export interface ObservationRecord {
  name: string;
  type: RecordType;
  /** Query time, epoch seconds. */
  time: number;
  outcome: Outcome;
  /** Canonical addresses of a positive answer (empty otherwise). */
  values: string[];
  /** The CNAME chain that led to the addresses, in order (may be empty). */
  cnames: string[];
}

export type SourceKind = 'provider_ranges' | 'asn_mapping' | 'as_category' | 'as_role' | 'as_names' | 'seed';

export interface RecordOfKind {
  provider_ranges: ProviderRangeRecord;
  asn_mapping: AsnRangeRecord;
  as_category: AsCategoryRecord;
  as_role: AsRoleRecord;
  as_names: AsNameRecord;
  seed: SeedRecord;
}

export interface Attribution {
  source: string;
  by: string;
  license: string;
}

/**
 * A feed: one logical list from one publisher. It may span several files (Cloudflare's
 * ips-v4 and ips-v6); one fetch or import of all of them is one snapshot.
 */
export interface SourceDefinition<K extends SourceKind = SourceKind> {
  /** Stable name used on the CLI and in the state (`aws`, `cloudflare`, …). */
  name: string;
  kind: K;
  description: string;
  /** The publisher's real URLs, one per file. */
  urls: string[];
  attribution: Attribution;
  /**
   * For a list that turns over by nature (Tor exits): the share of its rows and addresses it may
   * lose between two snapshots without being refused, when that is more than FEED_MAX_ROW_DROP
   * resp. FEED_MAX_ADDRESS_DROP allow (drop-gate.ts).
   */
  churn?: number;
  /** Parses one file of the feed. `file` is only used in messages. */
  parse(text: string, file: string): ParseResult<RecordOfKind[K]>;
}
