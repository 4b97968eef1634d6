/**
 * The address space a feed snapshot covers, IPv4 and IPv6 apart, counted exactly: the union of
 * its ranges (a provider feed's prefixes, an IP-to-ASN mapping's routed rows: asn > 0), so nested
 * and repeated ranges count once. The feed quality gate compares it with the previous snapshot's
 * (drop-gate.ts, docs/decisions/0029-quality-gates.md).
 */
import { parseCidr, parseIp, type IpVersion } from '../shared/ip.js';
import { readSnapshotText, type SnapshotManifest } from './snapshot-store.js';
import type { StateDb } from './state.js';
import type {
  AsnRangeRecord,
  ProviderRangeRecord,
  RecordOfKind,
  SourceDefinition,
  SourceKind,
} from './sources/types.js';

/** Addresses covered, per family. */
export interface Coverage {
  ipv4: number;
  ipv6: bigint;
}

/** The JSON form (a snapshot manifest's `coverage`): IPv6 counts pass 2^53, so they are decimal text. */
export interface CoverageJson {
  ipv4: number;
  ipv6: string;
}

export function coverageToJson(coverage: Coverage): CoverageJson {
  return { ipv4: coverage.ipv4, ipv6: coverage.ipv6.toString() };
}

export function coverageFromJson(json: CoverageJson): Coverage {
  return { ipv4: json.ipv4, ipv6: BigInt(json.ipv6) };
}

/** Collects ranges, then counts the addresses of their union. */
export class CoverageCounter {
  /** IPv4 ranges as plain numbers (exact below 2^53): the mappings have 400,000 of them. */
  private v4First: number[] = [];
  private v4Last: number[] = [];
  private v6: Array<[bigint, bigint]> = [];

  addRange(version: IpVersion, first: bigint, last: bigint): void {
    if (version === 4) {
      this.v4First.push(Number(first));
      this.v4Last.push(Number(last));
    } else this.v6.push([first, last]);
  }

  /** A provider range's prefix. */
  addPrefix(prefix: string): void {
    const cidr = parseCidr(prefix);
    if (cidr) this.addRange(cidr.version, cidr.first, cidr.last);
  }

  /** A mapping row: counted when it is routed (asn > 0). */
  addMappingRow(first: string, last: string, asn: number): void {
    if (!(asn > 0)) return;
    // IPv4 rows (400,000 in a full mapping) without a bigint each: a third of the time.
    const a4 = ipv4Number(first);
    const b4 = a4 === null ? null : ipv4Number(last);
    if (a4 !== null && b4 !== null) {
      this.v4First.push(a4);
      this.v4Last.push(b4);
      return;
    }
    const a = parseIp(first);
    const b = parseIp(last);
    if (a && b && a.version === b.version) this.addRange(a.version, a.value, b.value);
  }

  /** A parsed record of a feed of `kind`; kinds without addresses add nothing. */
  addRecord<K extends SourceKind>(kind: K, record: RecordOfKind[K]): void {
    if (kind === 'provider_ranges') this.addPrefix((record as ProviderRangeRecord).prefix);
    else if (kind === 'asn_mapping') {
      const r = record as AsnRangeRecord;
      this.addMappingRow(r.first, r.last, r.asn);
    }
  }

  total(): Coverage {
    return { ipv4: unionV4(this.v4First, this.v4Last), ipv6: unionV6(this.v6) };
  }
}

/** The addresses covered by the records of one snapshot of a feed of `kind`. */
export function coverageOf<K extends SourceKind>(kind: K, records: readonly RecordOfKind[K][]): Coverage {
  const counter = new CoverageCounter();
  for (const r of records) counter.addRecord(kind, r);
  return counter.total();
}

/**
 * The coverage of a stored snapshot whose manifest predates the `coverage` field: its files parsed
 * again. Null (and a log line) when they cannot be read: the gate then weighs the rows only.
 */
export function coverageOfSnapshot(
  stateDir: string,
  source: SourceDefinition,
  manifest: SnapshotManifest,
  log: (line: string) => void,
): Coverage | null {
  const counter = new CoverageCounter();
  try {
    for (const file of manifest.files) {
      const records = source.parse(readSnapshotText(stateDir, manifest, file), file.file).records;
      for (const record of records) counter.addRecord(source.kind, record);
    }
  } catch (error) {
    log(
      `${source.name}: the previous snapshot's files cannot be read (${(error as Error).message}); comparing rows only`,
    );
    return null;
  }
  return counter.total();
}

/**
 * The addresses the state's current rows of `source` cover: its active provider ranges, or its
 * routed mapping rows (what `builder import` compares a new snapshot with).
 */
export function coverageInState(db: StateDb, source: Pick<SourceDefinition, 'name' | 'kind'>): Coverage {
  const counter = new CoverageCounter();
  if (source.kind === 'provider_ranges') {
    const prefixes = db
      .prepare(`SELECT DISTINCT prefix FROM provider_range WHERE source = ? AND active = 1`)
      .pluck()
      .iterate(source.name) as IterableIterator<string>;
    for (const prefix of prefixes) counter.addPrefix(prefix);
  } else if (source.kind === 'asn_mapping') {
    const rows = db
      .prepare(`SELECT first, last, asn FROM asn_range WHERE source = ? AND asn > 0`)
      .raw()
      .iterate(source.name) as IterableIterator<[string, string, number]>;
    for (const [first, last, asn] of rows) counter.addMappingRow(first, last, asn);
  }
  return counter.total();
}

/** A dotted quad as a number; null for anything else (IPv6, or text that is not one). */
function ipv4Number(text: string): number | null {
  let value = 0;
  let part = 0;
  let digits = 0;
  let dots = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 46) {
      if (digits === 0 || part > 255) return null;
      value = value * 256 + part;
      part = 0;
      digits = 0;
      dots++;
    } else if (c >= 48 && c <= 57 && digits < 3) {
      part = part * 10 + (c - 48);
      digits++;
    } else return null;
  }
  return dots === 3 && digits > 0 && part <= 255 ? value * 256 + part : null;
}

function unionV4(firsts: number[], lasts: number[]): number {
  const order = Uint32Array.from(firsts.keys()).sort((a, b) => firsts[a]! - firsts[b]!);
  let total = 0;
  let start = -1;
  let end = -2;
  for (const i of order) {
    const first = firsts[i]!;
    const last = lasts[i]!;
    if (first > end + 1) {
      if (start >= 0) total += end - start + 1;
      start = first;
      end = last;
    } else if (last > end) end = last;
  }
  if (start >= 0) total += end - start + 1;
  return total;
}

function unionV6(ranges: Array<[bigint, bigint]>): bigint {
  ranges.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let total = 0n;
  let start = -1n;
  let end = -2n;
  for (const [first, last] of ranges) {
    if (first > end + 1n) {
      if (start >= 0n) total += end - start + 1n;
      start = first;
      end = last;
    } else if (last > end) end = last;
  }
  if (start >= 0n) total += end - start + 1n;
  return total;
}
