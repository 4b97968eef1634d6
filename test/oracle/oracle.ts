/**
 * An independent oracle of `GET /v1/ip/{ip}`: from the raw feed files, by brute force, what the
 * service must answer (issue 13). It shares no code with builder/, shared/ or server/: the
 * parsers are in ./parsers.ts and ./range-feeds.ts, the address arithmetic in ./ip.ts (on the
 * `ip-address` package).
 *
 * Two ways to find the rows and ranges holding an address, both visiting every row and range:
 * `scan` tries every one for every address; `sweep` sorts the addresses and, for every row and
 * range, binary-searches the addresses it holds (for the full data). Both end in `decide`.
 */
import path from 'node:path';
import { formatAddress, lookupAddress, routeOf, type Address, type Cidr, type Family } from './ip.js';
import {
  MAPPINGS,
  multicastEntries,
  parseIpv6AddressSpace,
  parseSpecialRegistry,
  readFeedText,
  type BogonEntry,
  type MappingRow,
} from './parsers.js';
import { FEEDS, metadataKey, parseFeed, type Category, type FeedRange } from './range-feeds.js';

export const DEFAULT_ASN_MAPPING = ['iptoasn', 'ip-location-db'];
const FRESH_TOR_MS = 48 * 3600 * 1000;
const PROVIDER_CATEGORIES: ReadonlySet<Category> = new Set(['cloud', 'hosting', 'cdn']);

export interface OracleOptions {
  /** Import kind → feed files, in import order. Kinds that are neither a mapping nor a feed are ignored. */
  manifest: Record<string, string[]>;
  /** The release's built_at (ISO 8601). */
  builtAt: string;
  /** ASN mapping sources in order of preference (default iptoasn, ip-location-db). */
  asnMapping?: string[];
  /** Earliest and latest possible import time (ISO 8601, whole seconds): the date of undated feeds. */
  importWindow: { start: string; end: string };
  /** Directory of the IANA CSVs (both special-purpose registries and the IPv6 address space). */
  ianaDir: string;
}

export interface ExpectedRange {
  prefix: string;
  provider: string;
  category: Category;
  metadata: Record<string, string>;
  /** first_seen = last_seen; null = some second of the import window. */
  date: string | null;
  feed: string;
}

export interface ExpectedAsn {
  asn: number | null;
  route: string;
  source: string;
  /** Absent when the row has none (the service may then fill it from other AS metadata). */
  descr?: string;
  country?: string;
}

export interface Expected {
  /** The query text as sent. */
  query: string;
  /** false: the service must refuse it (422 invalid_ip). */
  valid: boolean;
  ip: string | null;
  is_bogon: boolean;
  bogon_prefix: string | null;
  asn: ExpectedAsn | null;
  provider: string | null;
  prefix: string | null;
  is_datacenter: true | null;
  is_cdn: true | null;
  provider_ranges: ExpectedRange[];
}

/** Reads a manifest in the format of test/bench/shared-data-imports.txt ("kind file [file…]"). */
export function readManifest(text: string, dataDir: string): Record<string, string[]> {
  const manifest: Record<string, string[]> = {};
  for (const line of text.split('\n')) {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) continue;
    const [kind, ...files] = trimmed.split(/\s+/);
    manifest[kind!] = files.map((f) => path.join(dataDir, f));
  }
  return manifest;
}

interface Held {
  rows: MappingRow[];
  ranges: FeedRange[];
  bogons: BogonEntry[];
}

function holds(cidr: Cidr, address: Address): boolean {
  return cidr.family === address.family && cidr.first <= address.value && address.value <= cidr.last;
}

function rowHolds(row: MappingRow, address: Address): boolean {
  return row.family === address.family && row.first <= address.value && address.value <= row.last;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

export class Oracle {
  readonly rows: MappingRow[] = [];
  /** Rows of every source, the ones a later source may not use marked false. */
  readonly kept = new Map<MappingRow, boolean>();
  /** Every served range (tor_exit ranges older than 48 hours before built_at removed). */
  readonly ranges: FeedRange[] = [];
  /** Ranges of every feed before the freshness rule. */
  readonly parsedRanges: FeedRange[] = [];
  readonly bogons: BogonEntry[] = [];
  readonly sourceRank: string[];
  readonly builtAt: string;
  readonly importWindow: { start: string; end: string };

  constructor(options: OracleOptions) {
    this.builtAt = options.builtAt;
    this.importWindow = options.importWindow;
    const preference = options.asnMapping ?? DEFAULT_ASN_MAPPING;
    const present = Object.keys(options.manifest).filter((kind) => kind in MAPPINGS);
    this.sourceRank = [
      ...preference.filter((s) => present.includes(s)),
      ...present.filter((s) => !preference.includes(s)).sort(cmp),
    ];

    for (const [kind, files] of Object.entries(options.manifest)) {
      const parseMapping = MAPPINGS[kind];
      if (parseMapping) {
        for (const file of files) {
          for (const row of parseMapping(readFeedText(file), path.basename(file))) {
            this.rows.push({ ...row, order: this.rows.length });
          }
        }
      } else if (FEEDS[kind]) {
        const feedFiles = files.map((f) => ({ name: path.basename(f), text: readFeedText(f) }));
        this.parsedRanges.push(...parseFeed(kind, feedFiles));
      }
    }
    this.markKeptRows();

    const built = Date.parse(options.builtAt);
    const importStart = Date.parse(options.importWindow.start);
    for (const range of this.parsedRanges) {
      if (range.category === 'tor_exit') {
        const seen = range.date === null ? importStart : Date.parse(range.date);
        if (built - seen > FRESH_TOR_MS) continue;
      }
      this.ranges.push(range);
    }

    const iana = (name: string) => readFeedText(path.join(options.ianaDir, name));
    this.bogons.push(
      ...parseSpecialRegistry(iana('iana-ipv4-special-registry-1.csv'), 'iana-ipv4-special-registry-1.csv'),
      ...parseSpecialRegistry(iana('iana-ipv6-special-registry-1.csv'), 'iana-ipv6-special-registry-1.csv'),
      ...multicastEntries(),
      ...parseIpv6AddressSpace(iana('iana-ipv6-address-space-1.csv'), 'iana-ipv6-address-space-1.csv'),
    );
  }

  /**
   * A row of a later source is used only where it lies at least partly outside the union of the
   * rows of every earlier source (same family); every row of the first source is kept.
   */
  private markKeptRows(): void {
    for (const family of [4, 6] as Family[]) {
      const earlier: [bigint, bigint][] = [];
      for (const source of this.sourceRank) {
        const rows = this.rows.filter((r) => r.source === source && r.family === family);
        const union = mergeIntervals(earlier);
        for (const row of rows) this.kept.set(row, !covered(union, row.first, row.last));
        for (const row of rows) earlier.push([row.first, row.last]);
      }
    }
  }

  /** The expected answers, by query text. */
  expectAll(queries: string[], mode: 'scan' | 'sweep'): Map<string, Expected> {
    const parsed = queries.map((query) => ({ query, address: lookupAddress(query) }));
    const held = new Map<string, Held>();
    const valid = parsed.filter((p): p is { query: string; address: Address } => p.address !== null);
    if (mode === 'scan') {
      for (const { query, address } of valid) {
        held.set(query, {
          rows: this.rows.filter((r) => rowHolds(r, address)),
          ranges: this.ranges.filter((r) => holds(r.cidr, address)),
          bogons: this.bogons.filter((b) => holds(b.cidr, address)),
        });
      }
    } else {
      for (const { query } of valid) held.set(query, { rows: [], ranges: [], bogons: [] });
      for (const family of [4, 6] as Family[]) {
        const sorted = valid
          .filter((p) => p.address.family === family)
          .sort((a, b) =>
            a.address.value < b.address.value ? -1 : a.address.value > b.address.value ? 1 : 0,
          );
        const visit = (first: bigint, last: bigint, add: (h: Held) => void) => {
          let lo = 0;
          let hi = sorted.length;
          while (lo < hi) {
            const mid = (lo + hi) >> 1;
            if (sorted[mid]!.address.value < first) lo = mid + 1;
            else hi = mid;
          }
          for (let i = lo; i < sorted.length && sorted[i]!.address.value <= last; i += 1) {
            add(held.get(sorted[i]!.query)!);
          }
        };
        for (const row of this.rows) {
          if (row.family === family) visit(row.first, row.last, (h) => h.rows.push(row));
        }
        for (const range of this.ranges) {
          if (range.cidr.family === family)
            visit(range.cidr.first, range.cidr.last, (h) => h.ranges.push(range));
        }
        for (const bogon of this.bogons) {
          if (bogon.cidr.family === family)
            visit(bogon.cidr.first, bogon.cidr.last, (h) => h.bogons.push(bogon));
        }
      }
    }
    const out = new Map<string, Expected>();
    for (const { query, address } of parsed) {
      out.set(query, address ? this.decide(query, address, held.get(query)!) : invalid(query));
    }
    return out;
  }

  expect(query: string): Expected {
    return this.expectAll([query], 'scan').get(query)!;
  }

  /** The answer for one address from the rows, ranges and bogon entries holding it. */
  private decide(query: string, address: Address, held: Held): Expected {
    const bogon = decideBogon(held.bogons);
    if (bogon) {
      return {
        query,
        valid: true,
        ip: null,
        is_bogon: true,
        bogon_prefix: bogon.cidr.text,
        asn: null,
        provider: null,
        prefix: null,
        is_datacenter: null,
        is_cdn: null,
        provider_ranges: [],
      };
    }
    const ranges = [...held.ranges].sort(
      (a, b) =>
        b.cidr.length - a.cidr.length ||
        cmp(a.feed, b.feed) ||
        cmp(a.category, b.category) ||
        cmp(metadataKey(a.metadata), metadataKey(b.metadata)),
    );
    const providerRange = ranges.find((r) => PROVIDER_CATEGORIES.has(r.category)) ?? null;
    return {
      query,
      valid: true,
      ip: formatAddress(address),
      is_bogon: false,
      bogon_prefix: null,
      asn: this.decideAsn(address, held.rows),
      provider: providerRange?.provider ?? null,
      prefix: providerRange?.cidr.text ?? null,
      is_datacenter: ranges.some((r) => r.category === 'cloud' || r.category === 'hosting') ? true : null,
      is_cdn: ranges.some((r) => r.category === 'cdn') ? true : null,
      provider_ranges: ranges.map((r) => ({
        prefix: r.cidr.text,
        provider: r.provider,
        category: r.category,
        metadata: r.metadata,
        date: r.date,
        feed: r.feed,
      })),
    };
  }

  private decideAsn(address: Address, rows: MappingRow[]): ExpectedAsn | null {
    for (const source of this.sourceRank) {
      const candidates = rows.filter((r) => r.source === source && this.kept.get(r));
      if (candidates.length === 0) continue;
      let best = candidates[0]!;
      for (const row of candidates) {
        const size = row.last - row.first;
        const bestSize = best.last - best.first;
        if (size < bestSize || (size === bestSize && row.order < best.order)) best = row;
      }
      const answer: ExpectedAsn = {
        asn: best.asn === 0 ? null : best.asn,
        route: routeOf(address.family, best.first, best.last, address.value),
        source,
      };
      if (best.descr !== null) answer.descr = best.descr;
      if (best.country !== null) answer.country = best.country;
      return answer;
    }
    return null;
  }
}

function invalid(query: string): Expected {
  return {
    query,
    valid: false,
    ip: null,
    is_bogon: false,
    bogon_prefix: null,
    asn: null,
    provider: null,
    prefix: null,
    is_datacenter: null,
    is_cdn: null,
    provider_ranges: [],
  };
}

/** The most specific entry decides; at equal length a special-purpose row beats an address-space row. */
function decideBogon(entries: BogonEntry[]): BogonEntry | null {
  let best: BogonEntry | null = null;
  for (const entry of entries) {
    if (
      !best ||
      entry.cidr.length > best.cidr.length ||
      (entry.cidr.length === best.cidr.length &&
        entry.registry === 'special-purpose' &&
        best.registry === 'address-space')
    ) {
      best = entry;
    }
  }
  return best && best.bogon ? best : null;
}

function mergeIntervals(intervals: [bigint, bigint][]): [bigint, bigint][] {
  const sorted = [...intervals].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const out: [bigint, bigint][] = [];
  for (const [first, last] of sorted) {
    const top = out[out.length - 1];
    if (top && first <= top[1] + 1n) {
      if (last > top[1]) top[1] = last;
    } else {
      out.push([first, last]);
    }
  }
  return out;
}

/** Whether [first, last] lies inside one interval of a merged union. */
function covered(union: [bigint, bigint][], first: bigint, last: bigint): boolean {
  let lo = 0;
  let hi = union.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (union[mid]![0] <= first) lo = mid + 1;
    else hi = mid;
  }
  const candidate = union[lo - 1];
  return candidate !== undefined && candidate[1] >= last;
}
