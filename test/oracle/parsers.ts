/**
 * Minimal parsers of the raw feed files for the oracle, written from docs/feeds.md and the files
 * themselves (not from builder/sources). Each returns plain records; a line the oracle does not
 * understand throws, so an excerpt or snapshot it cannot read is noticed instead of skipped.
 * Here: reading files and CSV, the IP-to-ASN mappings and the bogon registries; the published
 * ranges are in range-feeds.ts.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { parseAddress, parseCidr, type Address, type Cidr, type Family } from './ip.js';

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

export function lines(text: string): string[] {
  return text.split(/\r?\n/);
}

export function needCidr(text: string, where: string): Cidr {
  const cidr = parseCidr(text.trim());
  if (!cidr) throw new Error(`${where}: not a CIDR: ${JSON.stringify(text)}`);
  return cidr;
}

export function needAddress(text: string, where: string): Address {
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

/** Every IP-to-ASN mapping: import kind → parser. */
export const MAPPINGS: Record<string, (text: string, file: string) => Omit<MappingRow, 'order'>[]> = {
  iptoasn: parseIptoasn,
  'ip-location-db': parseIpLocationDb,
};

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
