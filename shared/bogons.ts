/**
 * Bogon addresses and AS numbers: the special-purpose blocks that `lookup_ip` answers with
 * `is_bogon: true` (and `ip_domains` refuses with `non_public_ip`), and the special-purpose AS
 * numbers of `lookup_asn`.
 *
 * IP rule. The table is IANA's IPv4 and IPv6 Special-Purpose Address Registries (committed
 * verbatim in `shared/data/`, see ATTRIBUTION.md) plus the two multicast blocks, which those
 * registries do not list: 224.0.0.0/4 (RFC 5771) and ff00::/8 (RFC 4291). An address is a bogon
 * when the MOST SPECIFIC entry holding it is not "Globally Reachable: True":
 *   - `False` (with or without a footnote, e.g. `False [1]`) → bogon. Private-Use, Loopback,
 *     Link Local, Shared Address Space (CGNAT), Documentation, Benchmarking, Reserved, …
 *   - `True` → not a bogon, and it shadows a less specific `False` parent: 192.0.0.9/32 (PCP
 *     anycast) inside 192.0.0.0/24, 192.31.196.0/24 (AS112-v4), 2001:1::1/128 inside 2001::/23.
 *   - `N/A` → not a bogon. Only the tunnelling prefixes carry it: TEREDO 2001::/32 and 6to4
 *     2002::/16. Their addresses embed an IPv4 address and are as reachable as that address is;
 *     both blocks are routed on the public Internet, and the N/A entry (the more specific one)
 *     overrides the `False [1]` of its parent 2001::/23, which IANA's footnote restricts to
 *     "unless allowed by a more specific allocation".
 *   - Entries with a Termination Date (192.88.99.0/24 6to4 relay anycast, 2001:10::/28 ORCHID)
 *     are no longer special-purpose and are skipped; their addresses fall back to the enclosing
 *     entry if there is one (2001:10::/28 → 2001::/23, a bogon; 192.88.99.0/24 → none).
 * ::ffff:0:0/96 (IPv4-mapped) is in the table and answers as a bogon when looked up as IPv6;
 * the API looks such an address up as its IPv4 address (`unmapIpv4`) before calling here.
 *
 * Reserved IPv6 space. IANA's IPv6 Address Space registry (`iana-ipv6-address-space-1.csv`)
 * partitions the whole space; its `Reserved by IETF` blocks (0000::/8 but for what the
 * special-purpose registry lists inside it, 0100::/8, 0200::/7, … 4000::/3 … e000::/4, f000::/5,
 * f800::/6, fe00::/9 and the deprecated site-local fec0::/10) are bogons too: the API counts
 * reserved space as bogon (docs/api.md#get-v1ipip). They are less specific than every
 * special-purpose entry inside them (64:ff9b::/96 "True" stays public); at an equal length the
 * special-purpose entry decides. So `::2` and `::1.1.1.1` (IPv4-compatible, in 0000::/8) are
 * bogons, as are `4000::1` and `fec0::1`. Only 2000::/3 (Global Unicast) holds public addresses.
 *
 * AS rule. Exactly the API's list (23456, 64496 to 65551, 4200000000 to 4294967295;
 * docs/api.md#get-v1asnasn) plus 0, split by purpose as IANA's Special-Purpose AS Numbers registry
 * does. 65552–131071 is marked "Reserved" in IANA's AS number *allocation* registry, not in the
 * special-purpose one, and the API's list stops at 65551: it is not a bogon (like any unallocated
 * number, "false does not mean allocated").
 *
 * Lookups are a binary search over tables flattened at module load into non-overlapping
 * intervals, each pointing to one frozen answer object: no allocation per call.
 */
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';
import { formatCidr, parseCidr } from './ip.js';
import type { Ip, IpVersion } from './ip.js';

/** The `bogon` object of an IP lookup. */
export interface IpBogon {
  /** The special-purpose block (canonical CIDR), e.g. `10.0.0.0/8`. */
  prefix: string;
  /** IANA's name of the block, e.g. `Private-Use`. */
  name: string;
  /** The defining document(s), e.g. `RFC 1918`; several are joined with `, `. */
  rfc: string;
}

/** The `bogon` object of an AS lookup. */
export interface AsnBogon {
  first: number;
  last: number;
  name: string;
  rfc: string;
}

const REGISTRY_FILES: Record<IpVersion, string> = {
  4: 'iana-ipv4-special-registry-1.csv',
  6: 'iana-ipv6-special-registry-1.csv',
};

/** IANA's IPv6 Address Space registry: the top-level partition of IPv6 space. */
const IPV6_ADDRESS_SPACE_FILE = 'iana-ipv6-address-space-1.csv';
const IPV6_ADDRESS_SPACE_HEADER = 'IPv6 Prefix,Allocation,Reference,Notes';

const MULTICAST: Record<IpVersion, { prefix: string; name: string; rfc: string }> = {
  4: { prefix: '224.0.0.0/4', name: 'Multicast', rfc: 'RFC 5771' },
  6: { prefix: 'ff00::/8', name: 'Multicast', rfc: 'RFC 4291' },
};

const EXPECTED_HEADER =
  'Address Block,Name,RFC,Allocation Date,Termination Date,Source,Destination,Forwardable,Globally Reachable,Reserved-by-Protocol';

type Reachability = 'true' | 'false' | 'n/a';

interface RegistryEntry {
  version: IpVersion;
  first: bigint;
  last: bigint;
  prefixLength: number;
  reachable: Reachability;
  /** 1 for the special-purpose registries (and multicast), 0 for the address-space registry: wins ties. */
  precedence: number;
  answer: Readonly<IpBogon>;
}

interface IntervalTable {
  starts: bigint[];
  ends: bigint[];
  answers: Readonly<IpBogon>[];
}

/**
 * RFC 4180 CSV: fields separated by commas, records by CRLF or LF, double-quoted fields may hold
 * commas, line breaks and `""` for a quote. Returns the records as arrays of raw field text.
 */
export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  let record: string[] = [];
  let field = '';
  let quoted = false;
  let i = 0;
  while (i < text.length) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        quoted = false;
      } else {
        field += c;
      }
      i++;
      continue;
    }
    if (c === '"' && field === '') {
      quoted = true;
    } else if (c === ',') {
      record.push(field);
      field = '';
    } else if (c === '\n' || c === '\r') {
      record.push(field);
      records.push(record);
      record = [];
      field = '';
      if (c === '\r' && text[i + 1] === '\n') i++;
    } else {
      field += c;
    }
    i++;
  }
  if (quoted) throw new Error('CSV ends inside a quoted field');
  if (field !== '' || record.length > 0) {
    record.push(field);
    records.push(record);
  }
  return records;
}

/** `False [1]` → `False`; `2002::/16 [3]` → `2002::/16`. */
function withoutFootnotes(cell: string): string {
  return cell.replace(/\s*\[\d+\]/g, '').trim();
}

/** `[RFC8880][RFC7050], Section 2.2` → `RFC 8880, RFC 7050`; non-RFC references are kept as written. */
function formatReferences(cell: string, where: string): string {
  const references = [...cell.matchAll(/\[([^\]]+)\]/g)].map((m) => {
    const inner = m[1]!.trim();
    const rfc = /^RFC\s*(\d+)$/.exec(inner);
    return rfc ? `RFC ${rfc[1]}` : inner;
  });
  if (references.length === 0) throw new Error(`${where}: expected a [RFCnnnn] reference, got "${cell}"`);
  return references.join(', ');
}

function parseReachability(cell: string, where: string): Reachability {
  const value = withoutFootnotes(cell);
  if (value === 'True') return 'true';
  if (value === 'False') return 'false';
  if (value === 'N/A') return 'n/a';
  throw new Error(`${where}: expected True, False or N/A in "Globally Reachable", got "${cell}"`);
}

function registryPath(fileName: string): string {
  // From the source tree (shared/bogons.ts, run by tsx) the data sits next to this module; from
  // the compiled tree (dist/shared/bogons.js) it is ../../shared/data, which tsc does not copy.
  const candidates = [
    new URL(`./data/${fileName}`, import.meta.url),
    new URL(`../../shared/data/${fileName}`, import.meta.url),
  ];
  for (const candidate of candidates) {
    const file = fileURLToPath(candidate);
    if (fs.existsSync(file)) return file;
  }
  throw new Error(
    `IANA registry ${fileName} not found (looked in ${candidates.map((c) => fileURLToPath(c)).join(', ')})`,
  );
}

function makeEntry(
  version: IpVersion,
  prefixText: string,
  name: string,
  rfc: string,
  reachable: Reachability,
  where: string,
  precedence = 1,
): RegistryEntry {
  const cidr = parseCidr(prefixText);
  if (!cidr || cidr.version !== version || cidr.hostBitsSet) {
    throw new Error(`${where}: expected an IPv${version} CIDR block, got "${prefixText}"`);
  }
  const answer = Object.freeze({ prefix: formatCidr(cidr), name, rfc });
  return {
    version,
    first: cidr.first,
    last: cidr.last,
    prefixLength: cidr.prefixLength,
    reachable,
    precedence,
    answer,
  };
}

/** Parses one committed IANA special-purpose registry into active entries. */
function loadRegistry(version: IpVersion): RegistryEntry[] {
  const fileName = REGISTRY_FILES[version];
  const rows = parseCsv(fs.readFileSync(registryPath(fileName), 'utf8'));
  const header = rows.shift()?.join(',');
  if (header !== EXPECTED_HEADER) throw new Error(`${fileName}: unexpected header "${header}"`);
  const entries: RegistryEntry[] = [];
  rows.forEach((row, index) => {
    const where = `${fileName} record ${index + 1}`;
    if (row.length !== 10) throw new Error(`${where}: expected 10 fields, got ${row.length}`);
    const [blocks, rawName, references, , termination, , , , reachableCell] = row as [
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
      string,
    ];
    if (withoutFootnotes(termination) !== 'N/A') return; // terminated: no longer special-purpose
    const name = rawName
      .replace(/\s+/g, ' ')
      .trim()
      .replace(/^"(.*)"$/, '$1');
    const rfc = formatReferences(references, where);
    const reachable = parseReachability(reachableCell, where);
    for (const block of blocks.split(',')) {
      entries.push(makeEntry(version, withoutFootnotes(block), name, rfc, reachable, where));
    }
  });
  const multicast = MULTICAST[version];
  entries.push(makeEntry(version, multicast.prefix, multicast.name, multicast.rfc, 'false', 'multicast'));
  if (version === 6) entries.push(...loadIpv6AddressSpace());
  return entries;
}

/**
 * The `Reserved by IETF` blocks of IANA's IPv6 Address Space registry, as unreachable entries of
 * low precedence. The registry's other allocations (Global Unicast, Unique Local, Link-Scoped,
 * Multicast) add nothing: the special-purpose registry and the multicast entry cover the last three.
 */
function loadIpv6AddressSpace(): RegistryEntry[] {
  const rows = parseCsv(fs.readFileSync(registryPath(IPV6_ADDRESS_SPACE_FILE), 'utf8'));
  const header = rows.shift()?.join(',');
  if (header !== IPV6_ADDRESS_SPACE_HEADER) {
    throw new Error(`${IPV6_ADDRESS_SPACE_FILE}: unexpected header "${header}"`);
  }
  const entries: RegistryEntry[] = [];
  rows.forEach((row, index) => {
    const where = `${IPV6_ADDRESS_SPACE_FILE} record ${index + 1}`;
    if (row.length !== 4) throw new Error(`${where}: expected 4 fields, got ${row.length}`);
    const [prefix, allocation, references] = row as [string, string, string, string];
    if (allocation.trim() !== 'Reserved by IETF') return;
    entries.push(
      makeEntry(6, prefix.trim(), 'Reserved by IETF', formatReferences(references, where), 'false', where, 0),
    );
  });
  if (entries.length === 0) throw new Error(`${IPV6_ADDRESS_SPACE_FILE}: no "Reserved by IETF" block`);
  return entries;
}

/**
 * Flattens nested entries into sorted, non-overlapping intervals. Each elementary interval
 * takes the most specific entry holding it; intervals whose entry is reachable are dropped.
 */
function buildIntervalTable(entries: RegistryEntry[]): IntervalTable {
  const boundaries = [...new Set(entries.flatMap((e) => [e.first, e.last + 1n]))].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const table: IntervalTable = { starts: [], ends: [], answers: [] };
  for (let i = 0; i + 1 < boundaries.length; i++) {
    const start = boundaries[i]!;
    const end = boundaries[i + 1]! - 1n;
    let best: RegistryEntry | null = null;
    for (const entry of entries) {
      if (
        entry.first <= start &&
        start <= entry.last &&
        (!best ||
          entry.prefixLength > best.prefixLength ||
          (entry.prefixLength === best.prefixLength && entry.precedence > best.precedence))
      ) {
        best = entry;
      }
    }
    if (!best || best.reachable !== 'false') continue;
    const lastIndex = table.answers.length - 1;
    if (lastIndex >= 0 && table.answers[lastIndex] === best.answer && table.ends[lastIndex]! + 1n === start) {
      table.ends[lastIndex] = end;
    } else {
      table.starts.push(start);
      table.ends.push(end);
      table.answers.push(best.answer);
    }
  }
  return table;
}

const IP_TABLES: Record<IpVersion, IntervalTable> = {
  4: buildIntervalTable(loadRegistry(4)),
  6: buildIntervalTable(loadRegistry(6)),
};

/** The special-purpose block that makes `ip` a bogon, or null when it is not one. */
export function findIpBogon(ip: Ip): Readonly<IpBogon> | null {
  const { starts, ends, answers } = IP_TABLES[ip.version];
  let low = 0;
  let high = starts.length - 1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    if (starts[mid]! <= ip.value) low = mid + 1;
    else high = mid - 1;
  }
  // `high` is the last interval starting at or before the address.
  if (high < 0 || ip.value > ends[high]!) return null;
  return answers[high]!;
}

const ASN_BOGONS: readonly Readonly<AsnBogon>[] = [
  { first: 0, last: 0, name: 'Reserved', rfc: 'RFC 7607' },
  { first: 23456, last: 23456, name: 'AS_TRANS', rfc: 'RFC 6793' },
  { first: 64496, last: 64511, name: 'Documentation', rfc: 'RFC 5398' },
  { first: 64512, last: 65534, name: 'Private Use', rfc: 'RFC 6996' },
  { first: 65535, last: 65535, name: 'Reserved', rfc: 'RFC 7300' },
  { first: 65536, last: 65551, name: 'Documentation', rfc: 'RFC 5398' },
  { first: 4200000000, last: 4294967294, name: 'Private Use', rfc: 'RFC 6996' },
  { first: 4294967295, last: 4294967295, name: 'Reserved', rfc: 'RFC 7300' },
].map((bogon) => Object.freeze(bogon));

/**
 * The special-purpose range holding `asn`, or null. 0 answers too although the API only accepts
 * 1..4294967295 (`invalid_asn` otherwise).
 */
export function findAsnBogon(asn: number): Readonly<AsnBogon> | null {
  for (const bogon of ASN_BOGONS) {
    if (asn < bogon.first) return null;
    if (asn <= bogon.last) return bogon;
  }
  return null;
}

/** The bogon blocks of one family as inclusive [first, last] value pairs, in order (adjacent blocks merged only when their answer is the same). */
export function ipBogonIntervals(version: IpVersion): Array<[bigint, bigint]> {
  const { starts, ends } = IP_TABLES[version];
  return starts.map((s, i) => [s, ends[i]!]);
}
