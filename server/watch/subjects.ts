/**
 * Watch entries as typed and as matched (docs/decisions/0034): `parseWatchSubject` turns what a
 * user typed into an entry's canonical kind and subject (or a message saying how to fix it), and
 * `WatchIndex` finds, for a domain, an address, a range or an AS number, every entry it concerns:
 * domains and AS numbers by equality, addresses and ranges by containment (entries bucketed by
 * prefix length, one sorted array of first addresses per bucket, binary searched).
 */
import type { WatchEntry, WatchKind } from '../../accounts/watch-types.js';
import { normalizeDomain } from '../../shared/domain.js';
import {
  formatCidr,
  formatIp,
  parseCidr,
  parseIp,
  unmapIpv4,
  type Cidr,
  type IpVersion,
} from '../../shared/ip.js';

export type ParsedSubject = { ok: true; kind: WatchKind; subject: string } | { ok: false; reason: string };

const ASN_RE = /^(?:AS)?(\d{1,10})$/i;
const MAX_ASN = 4294967295;

/** One line of a form or a bulk paste: `AS13335`, `1.1.1.1`, `192.0.2.0/24`, `shop.example`. */
export function parseWatchSubject(text: string): ParsedSubject {
  const input = text.trim();
  const asn = ASN_RE.exec(input);
  if (asn) {
    const n = Number(asn[1]);
    if (n < 1 || n > MAX_ASN) return { ok: false, reason: `${input}: an AS number is 1 to ${MAX_ASN}` };
    return { ok: true, kind: 'asn', subject: String(n) };
  }
  if (input.includes('/')) {
    const cidr = parseCidr(input);
    if (!cidr) return { ok: false, reason: `${input}: not a CIDR prefix (e.g. 192.0.2.0/24, 2001:db8::/32)` };
    if (cidr.hostBitsSet) {
      return { ok: false, reason: `${input}: host bits are set, did you mean ${formatCidr(cidr)}?` };
    }
    return { ok: true, kind: 'prefix', subject: formatCidr(cidr) };
  }
  const ip = parseIp(input);
  if (ip) return { ok: true, kind: 'ip', subject: formatIp(unmapIpv4(ip)) };
  const domain = normalizeDomain(input);
  if (!domain.ok) return { ok: false, reason: `${input}: ${domain.reason}` };
  return { ok: true, kind: 'domain', subject: domain.domain };
}

/** A problem of one line of a bulk paste, by its number (1-based). */
export interface ListProblem {
  line: number;
  reason: string;
}

/**
 * A bulk paste (the CLI's `watch add --file`, the console's textarea): one entry per line, `#`
 * starts a comment, blank lines are skipped. All or nothing: the entries, or the problem of every
 * line that does not parse.
 */
export function parseWatchList(
  text: string,
):
  | { ok: true; entries: Array<{ kind: WatchKind; subject: string }> }
  | { ok: false; problems: ListProblem[] } {
  const entries: Array<{ kind: WatchKind; subject: string }> = [];
  const problems: ListProblem[] = [];
  text.split(/\r?\n/).forEach((raw, i) => {
    const line = raw.replace(/#.*/, '').trim();
    if (line === '') return;
    const parsed = parseWatchSubject(line);
    if (parsed.ok) entries.push({ kind: parsed.kind, subject: parsed.subject });
    else problems.push({ line: i + 1, reason: parsed.reason });
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, entries };
}

interface Bucket {
  prefixLength: number;
  firsts: bigint[];
  entries: WatchEntry[][];
}

const BITS = { 4: 32, 6: 128 } as const;

/** The entries of every project, indexed for matching. */
export class WatchIndex {
  private readonly byDomain = new Map<string, WatchEntry[]>();
  private readonly byAsn = new Map<number, WatchEntry[]>();
  /** Per family, one bucket per prefix length (an address entry is a full-length prefix). */
  private readonly buckets: Record<IpVersion, Bucket[]> = { 4: [], 6: [] };
  readonly size: number;

  constructor(entries: readonly WatchEntry[]) {
    this.size = entries.length;
    const ranges: Record<IpVersion, Map<number, Map<bigint, WatchEntry[]>>> = { 4: new Map(), 6: new Map() };
    const push = <K>(map: Map<K, WatchEntry[]>, key: K, entry: WatchEntry) => {
      const list = map.get(key);
      if (list) list.push(entry);
      else map.set(key, [entry]);
    };
    for (const entry of entries) {
      if (entry.kind === 'domain') push(this.byDomain, entry.subject, entry);
      else if (entry.kind === 'asn') push(this.byAsn, Number(entry.subject), entry);
      else {
        const cidr = entry.kind === 'prefix' ? parseCidr(entry.subject) : cidrOfAddress(entry.subject);
        if (!cidr) continue;
        const lengths = ranges[cidr.version];
        const bucket = lengths.get(cidr.prefixLength) ?? new Map<bigint, WatchEntry[]>();
        lengths.set(cidr.prefixLength, bucket);
        push(bucket, cidr.first, entry);
      }
    }
    for (const version of [4, 6] as const) {
      for (const [prefixLength, map] of ranges[version]) {
        const firsts = [...map.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
        this.buckets[version].push({ prefixLength, firsts, entries: firsts.map((f) => map.get(f)!) });
      }
    }
  }

  domain(name: string): readonly WatchEntry[] {
    return this.byDomain.get(name) ?? [];
  }

  asn(asn: number | null): readonly WatchEntry[] {
    return asn === null ? [] : (this.byAsn.get(asn) ?? []);
  }

  get watchesAddresses(): boolean {
    return this.buckets[4].length + this.buckets[6].length > 0;
  }

  /** Entries (IPs, prefixes) holding the address. */
  address(text: string): WatchEntry[] {
    const ip = parseIp(text);
    if (!ip) return [];
    const { version, value } = unmapIpv4(ip);
    return this.overlapping({ version, first: value, last: value, prefixLength: BITS[version] });
  }

  /** Entries (IPs, prefixes) overlapping the range: holding it, or inside it. */
  overlapping(range: Cidr): WatchEntry[] {
    const out: WatchEntry[] = [];
    const bits = BITS[range.version];
    for (const bucket of this.buckets[range.version]) {
      // Entries of this length that could overlap start in [range.first masked to the length, range.last].
      const mask = ((1n << BigInt(bits)) - 1n) ^ ((1n << BigInt(bits - bucket.prefixLength)) - 1n);
      const low = range.first & mask;
      for (let i = lowerBound(bucket.firsts, low); i < bucket.firsts.length; i++) {
        if (bucket.firsts[i]! > range.last) break;
        out.push(...bucket.entries[i]!);
      }
    }
    return out;
  }
}

function cidrOfAddress(text: string): Cidr | null {
  const ip = parseIp(text);
  return ip ? { version: ip.version, first: ip.value, last: ip.value, prefixLength: BITS[ip.version] } : null;
}

function lowerBound(sorted: readonly bigint[], value: bigint): number {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const mid = (low + high) >>> 1;
    if (sorted[mid]! < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
