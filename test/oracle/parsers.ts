/**
 * Minimal parsers of the raw feed files for the oracle, written from docs/feeds.md and the files
 * themselves (not from builder/sources). Each returns plain records; a line the oracle does not
 * understand throws, so an excerpt or snapshot it cannot read is noticed instead of skipped.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { hostCidr, parseAddress, parseCidr, type Address, type Cidr, type Family } from './ip.js';

/** Text of a feed file; a name ending in .gz is gunzipped. */
export function readFeedText(file: string): string {
  const bytes = fs.readFileSync(file);
  return (file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8');
}

/** RFC 4180 CSV: quoted fields may hold commas, "" and line breaks; CRLF or LF line ends. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let i = 0;
  const n = text.length;
  while (i < n) {
    let field = '';
    if (text[i] === '"') {
      i += 1;
      for (;;) {
        const quote = text.indexOf('"', i);
        if (quote < 0) throw new Error('CSV: unterminated quoted field');
        field += text.slice(i, quote);
        if (text[quote + 1] === '"') {
          field += '"';
          i = quote + 2;
        } else {
          i = quote + 1;
          break;
        }
      }
    } else {
      let end = i;
      while (end < n && text[end] !== ',' && text[end] !== '\n' && text[end] !== '\r') end += 1;
      field = text.slice(i, end);
      i = end;
    }
    row.push(field);
    if (text[i] === ',') {
      i += 1;
      if (i === n) row.push('');
      continue;
    }
    if (text[i] === '\r') i += 1;
    if (text[i] === '\n') i += 1;
    rows.push(row);
    row = [];
  }
  return rows;
}

function lines(text: string): string[] {
  return text.split(/\r?\n/);
}

function needCidr(text: string, where: string): Cidr {
  const cidr = parseCidr(text.trim());
  if (!cidr) throw new Error(`${where}: not a CIDR: ${JSON.stringify(text)}`);
  return cidr;
}

function needAddress(text: string, where: string): Address {
  const address = parseAddress(text.trim());
  if (!address) throw new Error(`${where}: not an address: ${JSON.stringify(text)}`);
  return address;
}

// ---------------------------------------------------------------- IP-to-ASN mappings

export interface MappingRow {
  source: string;
  family: Family;
  first: bigint;
  last: bigint;
  asn: number;
  descr: string | null;
  country: string | null;
  /** Position in the source's files (files in manifest order, then lines): the tie-break. */
  order: number;
  where: string;
}

function mappingRow(
  source: string,
  start: string,
  end: string,
  asnText: string,
  where: string,
): Omit<MappingRow, 'descr' | 'country' | 'order'> {
  const first = needAddress(start, where);
  const last = needAddress(end, where);
  if (first.family !== last.family || first.value > last.value) throw new Error(`${where}: bad range`);
  if (!/^[0-9]+$/.test(asnText)) throw new Error(`${where}: bad AS number ${JSON.stringify(asnText)}`);
  return { source, family: first.family, first: first.value, last: last.value, asn: Number(asnText), where };
}

/** iptoasn ip2asn TSV: range_start, range_end, AS_number, country_code, AS_description. */
export function parseIptoasn(text: string, file: string): Omit<MappingRow, 'order'>[] {
  const out: Omit<MappingRow, 'order'>[] = [];
  lines(text).forEach((line, index) => {
    if (line === '') return;
    const where = `${file}:${index + 1}`;
    const cols = line.split('\t');
    if (cols.length < 4) throw new Error(`${where}: expected 5 TAB-separated columns`);
    const row = mappingRow('iptoasn', cols[0]!, cols[1]!, cols[2]!, where);
    const country = cols[3]!;
    const descr = cols.slice(4).join('\t');
    out.push({
      ...row,
      country: country === 'None' || country === 'Unknown' || country === '' ? null : country,
      descr: row.asn === 0 || descr === 'Not routed' || descr === '' ? null : descr,
    });
  });
  return out;
}

/** ip-location-db asn CSV: start, end, asn, organization (quoted when it holds a comma). */
export function parseIpLocationDb(text: string, file: string): Omit<MappingRow, 'order'>[] {
  return parseCsv(text)
    .map((cols, index) => ({ cols, where: `${file}:${index + 1}` }))
    .filter(({ cols }) => !(cols.length === 1 && cols[0] === ''))
    .map(({ cols, where }) => {
      if (cols.length !== 4) throw new Error(`${where}: expected 4 columns, found ${cols.length}`);
      const row = mappingRow('ip-location-db', cols[0]!, cols[1]!, cols[2]!, where);
      return { ...row, country: null, descr: cols[3] === '' ? null : cols[3]! };
    });
}

// ---------------------------------------------------------------- published ranges

export type Category = 'cloud' | 'hosting' | 'cdn' | 'tor_exit' | 'relay' | 'crawler';

export interface FeedRange {
  /** The import kind (feed name): the order's second key. */
  feed: string;
  provider: string;
  category: Category;
  metadata: Record<string, string>;
  cidr: Cidr;
  /** first_seen = last_seen; null = the import time (the feed carries no date). */
  date: string | null;
}

export interface FeedFile {
  name: string;
  text: string;
}

/** "2026-08-21T01:05:42.583377" or "2025-07-24 10:00:06.525037" (UTC) → "2026-08-21T01:05:42Z". */
export function utcSeconds(text: string, where: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?Z?$/.exec(text.trim());
  if (!m) throw new Error(`${where}: unreadable timestamp ${JSON.stringify(text)}`);
  return `${m[1]}T${m[2]}Z`;
}

function json(file: FeedFile): unknown {
  return JSON.parse(file.text) as unknown;
}

type Json = Record<string, unknown>;

function obj(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${where}: not an object`);
  return value as Json;
}

function arr(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${where}: not an array`);
  return value;
}

function str(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new Error(`${where}: not a string`);
  return value;
}

interface Draft {
  cidr: Cidr;
  category: Category;
  metadata: Record<string, string>;
  date: string | null;
}

function aws(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    const m = /^(\d{4}-\d{2}-\d{2})-(\d{2})-(\d{2})-(\d{2})$/.exec(
      str(doc.createDate, `${file.name} createDate`),
    );
    if (!m) throw new Error(`${file.name}: unreadable createDate`);
    const date = `${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`;
    const records: Draft[] = [];
    for (const [list, key] of [
      ['prefixes', 'ip_prefix'],
      ['ipv6_prefixes', 'ipv6_prefix'],
    ] as const) {
      arr(doc[list] ?? [], `${file.name} ${list}`).forEach((item, index) => {
        const where = `${file.name} ${list}[${index}]`;
        const entry = obj(item, where);
        const service = str(entry.service, where);
        records.push({
          cidr: needCidr(str(entry[key], where), where),
          category: service === 'CLOUDFRONT' || service === 'CLOUDFRONT_ORIGIN_FACING' ? 'cdn' : 'cloud',
          metadata: {
            region: str(entry.region, where),
            service,
            network_border_group: str(entry.network_border_group, where),
          },
          date,
        });
      });
    }
    // AMAZON repeats every other service's prefixes: its record is dropped where another service
    // lists the same prefix in the same file.
    const specific = new Set(records.filter((r) => r.metadata.service !== 'AMAZON').map((r) => r.cidr.text));
    out.push(...records.filter((r) => r.metadata.service !== 'AMAZON' || !specific.has(r.cidr.text)));
  }
  return out;
}

function googleShape(
  files: FeedFile[],
  make: (entry: Json, where: string) => Omit<Draft, 'cidr' | 'date'>,
): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    const date = utcSeconds(str(doc.creationTime, `${file.name} creationTime`), file.name);
    arr(doc.prefixes, `${file.name} prefixes`).forEach((item, index) => {
      const where = `${file.name} prefixes[${index}]`;
      const entry = obj(item, where);
      const prefix = entry.ipv4Prefix ?? entry.ipv6Prefix;
      out.push({ cidr: needCidr(str(prefix, where), where), date, ...make(entry, where) });
    });
  }
  return out;
}

function googleCloud(files: FeedFile[]): Draft[] {
  return googleShape(files, (entry, where) => {
    const metadata: Record<string, string> = {};
    if (entry.scope !== undefined) metadata.region = str(entry.scope, where);
    if (entry.service !== undefined) metadata.service = str(entry.service, where);
    return { category: 'cloud', metadata };
  });
}

function crawler(operator: string, bot: string) {
  return (files: FeedFile[]): Draft[] => {
    const metadata = { operator, bot };
    const jsonFiles = files.filter((f) => f.text.trimStart().startsWith('{'));
    const listFiles = files.filter((f) => !f.text.trimStart().startsWith('{'));
    return [
      ...googleShape(jsonFiles, () => ({ category: 'crawler', metadata })),
      ...cidrList(listFiles, 'crawler', metadata),
    ];
  };
}

function azure(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    arr(doc.values, `${file.name} values`).forEach((item, index) => {
      const where = `${file.name} values[${index}]`;
      const value = obj(item, where);
      const name = str(value.name, `${where}.name`);
      const properties = obj(value.properties, `${where}.properties`);
      const region = properties.region === undefined ? '' : str(properties.region, `${where}.region`);
      const cdn =
        name === 'AzureFrontDoor' ||
        name.startsWith('AzureFrontDoor.') ||
        name === 'AzureCDN' ||
        name.startsWith('AzureCDN.');
      const metadata: Record<string, string> = region === '' ? { service: name } : { service: name, region };
      arr(properties.addressPrefixes, `${where}.addressPrefixes`).forEach((prefix, i) => {
        out.push({
          cidr: needCidr(str(prefix, `${where}.addressPrefixes[${i}]`), where),
          category: cdn ? 'cdn' : 'cloud',
          metadata,
          date: null,
        });
      });
    });
  }
  return out;
}

function oracleCloud(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    const date = utcSeconds(
      str(doc.last_updated_timestamp, `${file.name} last_updated_timestamp`),
      file.name,
    );
    arr(doc.regions, `${file.name} regions`).forEach((item, index) => {
      const where = `${file.name} regions[${index}]`;
      const region = obj(item, where);
      const regionName = str(region.region, `${where}.region`);
      arr(region.cidrs, `${where}.cidrs`).forEach((c, i) => {
        const cw = `${where}.cidrs[${i}]`;
        const entry = obj(c, cw);
        const tags = arr(entry.tags ?? [], `${cw}.tags`).map((t) => str(t, `${cw}.tags`));
        const metadata: Record<string, string> = { region: regionName };
        if (tags.length > 0) metadata.service = tags.join(',');
        out.push({ cidr: needCidr(str(entry.cidr, cw), cw), category: 'cloud', metadata, date });
      });
    });
  }
  return out;
}

/** One CIDR per line (or the first column of a CSV line); `#` lines and blank lines skipped. */
function cidrList(files: FeedFile[], category: Category, metadata: Record<string, string> = {}): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    lines(file.text).forEach((line, index) => {
      if (line.trim() === '' || line.startsWith('#')) return;
      const where = `${file.name}:${index + 1}`;
      out.push({ cidr: needCidr(line.split(',')[0]!, where), category, metadata, date: null });
    });
  }
  return out;
}

function linode(files: FeedFile[]): Draft[] {
  return files.flatMap((file) => {
    const m = /^# Last modified: (.+)$/m.exec(file.text);
    const date = m ? utcSeconds(m[1]!, file.name) : null;
    return cidrList([file], 'hosting').map((d) => ({ ...d, date }));
  });
}

function jsonPair(files: FeedFile[], v4: string, v6: string, category: Category): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    for (const key of [v4, v6]) {
      arr(doc[key] ?? [], `${file.name} ${key}`).forEach((prefix, index) => {
        const where = `${file.name} ${key}[${index}]`;
        out.push({ cidr: needCidr(str(prefix, where), where), category, metadata: {}, date: null });
      });
    }
  }
  return out;
}

const TOR_METADATA = { kind: 'exit_observed' };

function torExitAddresses(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const downloaded = /^Downloaded (.+)$/m.exec(file.text);
    lines(file.text).forEach((line, index) => {
      if (!line.startsWith('ExitAddress ')) return;
      const where = `${file.name}:${index + 1}`;
      const [, address, ...when] = line.trim().split(/\s+/);
      const stamp = when.join(' ');
      const date = stamp ? utcSeconds(stamp, where) : downloaded ? utcSeconds(downloaded[1]!, where) : null;
      out.push({
        cidr: hostCidr(needAddress(address ?? '', where)),
        category: 'tor_exit',
        metadata: TOR_METADATA,
        date,
      });
    });
  }
  return out;
}

function torBulk(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    lines(file.text).forEach((line, index) => {
      if (line.trim() === '' || line.startsWith('#')) return;
      const where = `${file.name}:${index + 1}`;
      out.push({
        cidr: hostCidr(needAddress(line, where)),
        category: 'tor_exit',
        metadata: TOR_METADATA,
        date: null,
      });
    });
  }
  return out;
}

interface FeedSpec {
  provider: string;
  parse: (files: FeedFile[]) => Draft[];
}

/** Every provider-range feed: import kind → provider name and parser (docs/feeds.md). */
export const FEEDS: Record<string, FeedSpec> = {
  aws: { provider: 'AWS', parse: aws },
  'google-cloud': { provider: 'Google Cloud', parse: googleCloud },
  azure: { provider: 'Microsoft Azure', parse: azure },
  oracle: { provider: 'Oracle Cloud', parse: oracleCloud },
  cloudflare: { provider: 'Cloudflare', parse: (f) => cidrList(f, 'cdn') },
  fastly: { provider: 'Fastly', parse: (f) => jsonPair(f, 'addresses', 'ipv6_addresses', 'cdn') },
  digitalocean: { provider: 'DigitalOcean', parse: (f) => cidrList(f, 'hosting') },
  linode: { provider: 'Linode', parse: linode },
  hetzner: { provider: 'Hetzner', parse: (f) => jsonPair(f, 'IPv4Prefixes', 'IPv6Prefixes', 'hosting') },
  ovh: { provider: 'OVHcloud', parse: (f) => jsonPair(f, 'IPv4Prefixes', 'IPv6Prefixes', 'hosting') },
  'tor-exit-addresses': { provider: 'Tor Project', parse: torExitAddresses },
  'tor-bulk-exit': { provider: 'Tor Project', parse: torBulk },
  'apple-private-relay': { provider: 'Apple iCloud Private Relay', parse: (f) => cidrList(f, 'relay') },
  googlebot: { provider: 'Google', parse: crawler('Google', 'Googlebot') },
  'google-special-crawlers': { provider: 'Google', parse: crawler('Google', 'Google special-case crawler') },
  'google-user-triggered-fetchers': {
    provider: 'Google',
    parse: crawler('Google', 'Google user-triggered fetcher'),
  },
  bingbot: { provider: 'Microsoft', parse: crawler('Microsoft', 'Bingbot') },
};

export const MAPPINGS: Record<string, (text: string, file: string) => Omit<MappingRow, 'order'>[]> = {
  iptoasn: parseIptoasn,
  'ip-location-db': parseIpLocationDb,
};

/** Metadata as JSON with its keys sorted (the order's last key and the identity of a range). */
export function metadataKey(metadata: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(metadata).sort()) sorted[key] = metadata[key]!;
  return JSON.stringify(sorted);
}

/**
 * The ranges of one feed: one per distinct (prefix, category, metadata); a repeat keeps the
 * latest date (only the Tor exit list has repeats with different dates).
 */
export function parseFeed(kind: string, files: FeedFile[]): FeedRange[] {
  const spec = FEEDS[kind];
  if (!spec) throw new Error(`no feed named ${kind}`);
  const byKey = new Map<string, FeedRange>();
  for (const draft of spec.parse(files)) {
    const key = `${draft.cidr.text} ${draft.category} ${metadataKey(draft.metadata)}`;
    const seen = byKey.get(key);
    if (!seen) {
      byKey.set(key, { feed: kind, provider: spec.provider, ...draft });
    } else if (draft.date !== null && (seen.date === null || draft.date > seen.date)) {
      seen.date = draft.date;
    }
  }
  return [...byKey.values()];
}

// ---------------------------------------------------------------- bogons

export interface BogonEntry {
  cidr: Cidr;
  name: string;
  rfc: string;
  /** True when an address this entry decides is a bogon. */
  bogon: boolean;
  /** Special-purpose rows win ties of equal length over address-space rows. */
  registry: 'special-purpose' | 'address-space';
}

const FOOTNOTE = /\s*\[\d+\]/g;

/** Active rows of an IANA Special-Purpose Address Registry CSV (either family). */
export function parseSpecialRegistry(text: string, file: string): BogonEntry[] {
  const [header, ...rows] = parseCsv(text);
  const col = (name: string) => {
    const index = header!.indexOf(name);
    if (index < 0) throw new Error(`${file}: no column ${name}`);
    return index;
  };
  const block = col('Address Block');
  const name = col('Name');
  const rfc = col('RFC');
  const termination = col('Termination Date');
  const reachable = col('Globally Reachable');
  const out: BogonEntry[] = [];
  for (const row of rows) {
    if (row.length === 1 && row[0] === '') continue;
    if (row[termination]!.replace(FOOTNOTE, '').trim() !== 'N/A') continue;
    const global = row[reachable]!.replace(FOOTNOTE, '').trim();
    for (const part of row[block]!.replace(FOOTNOTE, '').split(',')) {
      out.push({
        cidr: needCidr(part, file),
        name: row[name]!,
        rfc: row[rfc]!,
        bogon: global === 'False',
        registry: 'special-purpose',
      });
    }
  }
  return out;
}

/** Rows of IANA's IPv6 Address Space registry whose Allocation is "Reserved by IETF". */
export function parseIpv6AddressSpace(text: string, file: string): BogonEntry[] {
  const [header, ...rows] = parseCsv(text);
  const prefix = header!.indexOf('IPv6 Prefix');
  const allocation = header!.indexOf('Allocation');
  const reference = header!.indexOf('Reference');
  if (prefix < 0 || allocation < 0) throw new Error(`${file}: unexpected header`);
  return rows
    .filter((row) => row[allocation] === 'Reserved by IETF')
    .map((row) => ({
      cidr: needCidr(row[prefix]!, file),
      name: row[allocation]!,
      rfc: row[reference] ?? '',
      bogon: true,
      registry: 'address-space' as const,
    }));
}

/** Multicast, which neither special-purpose registry lists. */
export function multicastEntries(): BogonEntry[] {
  return [
    { cidr: needCidr('224.0.0.0/4', 'multicast'), name: 'Multicast', rfc: 'RFC 5771', bogon: true },
    { cidr: needCidr('ff00::/8', 'multicast'), name: 'Multicast', rfc: 'RFC 4291', bogon: true },
  ].map((e) => ({ ...e, registry: 'special-purpose' as const }));
}
