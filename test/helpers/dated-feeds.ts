/**
 * Dated variants of the committed real feed excerpts (test/fixtures/feeds/), for the as_of
 * property test (test/builder/as-of-property.test.ts, docs/decisions/0033-as-of.md): what a
 * publisher's file looked like on a given day of the generated history. Each variant starts from
 * the real excerpt and changes it the way the publisher's feed changes from day to day: AWS ranges
 * dropped and added under a new createDate, Tor exits leaving and joining with new ExitAddress
 * times, mapping rows whose AS changed or that split, AS names renamed, a Cloudflare range gone.
 * Pure functions of their arguments (the Tor list draws from a seeded PRNG).
 */
import { parseIp } from '../../shared/ip.js';
import { Mulberry32 } from '../bench/observation-generator/prng.js';
import { fixture } from './feed-fixture.js';

/** One file of a snapshot: its name and contents. */
export interface FeedFile {
  name: string;
  text: string;
}

const iso = (epoch: number) => new Date(epoch * 1000).toISOString().replace('.000Z', 'Z');

// ---------------------------------------------------------------------------------------------
// AWS ip-ranges.json

interface AwsPrefix {
  ip_prefix?: string;
  ipv6_prefix?: string;
  region: string;
  service: string;
  network_border_group: string;
}

/** The AWS prefixes the variants drop (one IPv4 CloudFront, one IPv4 AMAZON range of the excerpt). */
export const AWS_DROPPED = ['120.52.22.96/27', '3.5.140.0/22'] as const;

/** The prefixes the variants add: an EC2 Local Zone block beside the excerpt's, and a CloudFront /40. */
export const AWS_ADDED: readonly AwsPrefix[] = [
  {
    ip_prefix: '15.181.240.0/21',
    region: 'us-east-1',
    service: 'AMAZON',
    network_border_group: 'us-east-1-iah-1',
  },
  {
    ip_prefix: '15.181.240.0/21',
    region: 'us-east-1',
    service: 'EC2',
    network_border_group: 'us-east-1-iah-1',
  },
  {
    ipv6_prefix: '2600:9000:f000::/40',
    region: 'GLOBAL',
    service: 'CLOUDFRONT',
    network_border_group: 'GLOBAL',
  },
];

/** AWS's createDate format: `2026-08-22-15-17-05`. */
function awsDate(epoch: number): string {
  return iso(epoch).slice(0, 19).replace('T', '-').replaceAll(':', '-');
}

/**
 * ip-ranges.json as published at `published`: `drop` prefixes left out, `add` entries appended,
 * syncToken the publication second (as AWS writes it).
 */
export function awsVariant(published: number, drop: readonly string[], add: readonly AwsPrefix[]): FeedFile {
  const real = JSON.parse(fixture('aws', 'ip-ranges.json')) as {
    prefixes: AwsPrefix[];
    ipv6_prefixes: AwsPrefix[];
  };
  const kept = (p: AwsPrefix) => !drop.includes(p.ip_prefix ?? p.ipv6_prefix ?? '');
  const doc = {
    syncToken: String(published),
    createDate: awsDate(published),
    prefixes: [...real.prefixes.filter(kept), ...add.filter((p) => p.ip_prefix)],
    ipv6_prefixes: [...real.ipv6_prefixes.filter(kept), ...add.filter((p) => p.ipv6_prefix)],
  };
  return { name: 'ip-ranges.json', text: `${JSON.stringify(doc, null, 2)}\n` };
}

// ---------------------------------------------------------------------------------------------
// Tor exit lists

/**
 * The exit addresses the generated TorDNSEL lists draw from: the real bulk exit list excerpt plus
 * addresses of the same relay networks (185.220.100.0/22 is one operator's block of exits).
 */
export const TOR_POOL: readonly string[] = [
  ...fixture('tor-bulk-exit', 'torbulkexitlist')
    .split('\n')
    .map((l) => l.trim())
    .filter(Boolean),
  '185.220.101.33',
  '185.220.101.45',
  '185.220.102.8',
  '185.220.100.240',
  '2a0b:f4c2::13',
  '2a0b:f4c2:2::1',
];

/** An address every generated list keeps (it is the answer of a name in the rounds). */
export const TOR_STEADY = '185.220.101.18';

/**
 * A TorDNSEL exit-addresses file downloaded at `downloaded`: `count` relays drawn from TOR_POOL
 * (TOR_STEADY always among them), each with a fingerprint, Published and LastStatus times and an
 * ExitAddress time within the 24 hours before the download, as the real file has them; one relay
 * lists two addresses and one address is listed by two relays (both occur in the real excerpt).
 */
export function torExitList(downloaded: number, seed: number, count = 10): FeedFile {
  const rng = new Mulberry32();
  rng.reseed(seed);
  const pool = TOR_POOL.filter((a) => a !== TOR_STEADY);
  for (let i = pool.length - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [pool[i], pool[j]] = [pool[j]!, pool[i]!];
  }
  const chosen = [TOR_STEADY, ...pool.slice(0, count - 1)];
  const fmt = (t: number) => iso(t).slice(0, 19).replace('T', ' ');
  const hex = () =>
    Array.from({ length: 40 }, () => '0123456789ABCDEF'[rng.int(16)]!)
      .join('')
      .toString();
  const lines = ['@type tordnsel 1.0', `Downloaded ${fmt(downloaded)}`];
  chosen.forEach((address, i) => {
    const seen = downloaded - 600 - rng.int(86_000);
    lines.push(
      `ExitNode ${hex()}`,
      `Published ${fmt(seen - 3600 - rng.int(7200))}`,
      `LastStatus ${fmt(seen - rng.int(1800))}`,
      `ExitAddress ${address} ${fmt(seen)}`,
    );
    // The second relay also exits from the first one's address, a little later.
    if (i === 1) lines.push(`ExitAddress ${chosen[0]} ${fmt(seen + 120)}`);
  });
  return { name: 'exit-addresses', text: `${lines.join('\n')}\n` };
}

/** The addresses a torExitList file lists (for the test's sample of keys). */
export function torListAddresses(file: FeedFile): string[] {
  return [...file.text.matchAll(/^ExitAddress (\S+)/gm)].map((m) => m[1]!);
}

// ---------------------------------------------------------------------------------------------
// IP-to-ASN mappings and AS names

/** A mapping row: first, last, AS number, description (the ip-location-db columns). */
export type MappingRow = [first: string, last: string, asn: number, descr: string];

function csvCell(text: string): string {
  return /[",]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function parseCsvRow(line: string): MappingRow {
  const cells: string[] = [];
  let i = 0;
  while (i <= line.length) {
    if (line[i] === '"') {
      let out = '';
      i++;
      while (i < line.length) {
        if (line[i] === '"' && line[i + 1] === '"') {
          out += '"';
          i += 2;
        } else if (line[i] === '"') break;
        else out += line[i++];
      }
      cells.push(out);
      i += 2;
    } else {
      const end = line.indexOf(',', i);
      cells.push(line.slice(i, end < 0 ? line.length : end));
      i = end < 0 ? line.length + 1 : end + 1;
    }
  }
  return [cells[0]!, cells[1]!, Number(cells[2]), cells[3] ?? ''];
}

const ipOrder = (a: MappingRow, b: MappingRow) => {
  const x = parseIp(a[0])!.value;
  const y = parseIp(b[0])!.value;
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * The ip-location-db rows of the history's first day: the real excerpt's rows plus the rows of
 * the demo mapping (demo/data/asn, in the same format) that route the providers' addresses the
 * rounds answer with, in address order.
 */
export function baseMapping(demoAsn: { v4: string; v6: string }): { v4: MappingRow[]; v6: MappingRow[] } {
  const rows = (text: string) =>
    text
      .split('\n')
      .filter((l) => l.trim())
      .map(parseCsvRow);
  return {
    v4: [...rows(fixture('ip-location-db', 'asn-ipv4.csv')), ...rows(demoAsn.v4)].sort(ipOrder),
    v6: [...rows(fixture('ip-location-db', 'asn-ipv6.csv')), ...rows(demoAsn.v6)].sort(ipOrder),
  };
}

/** The two files of an ip-location-db snapshot. */
export function mappingFiles(mapping: { v4: MappingRow[]; v6: MappingRow[] }): FeedFile[] {
  const text = (rows: MappingRow[]) =>
    rows.map(([first, last, asn, descr]) => `${first},${last},${asn},${csvCell(descr)}\n`).join('');
  return [
    { name: 'asn-ipv4.csv', text: text(mapping.v4) },
    { name: 'asn-ipv6.csv', text: text(mapping.v6) },
  ];
}

/** A mapping edit: the row starting at `first` replaced by `rows` (an AS change, a split). */
export interface MappingEdit {
  first: string;
  rows: MappingRow[];
}

export function editMapping(
  mapping: { v4: MappingRow[]; v6: MappingRow[] },
  edits: readonly MappingEdit[],
): { v4: MappingRow[]; v6: MappingRow[] } {
  const apply = (rows: MappingRow[]) =>
    rows.flatMap((row) => edits.find((e) => e.first === row[0])?.rows ?? [row]).sort(ipOrder);
  for (const e of edits) {
    if (![...mapping.v4, ...mapping.v6].some((r) => r[0] === e.first))
      throw new Error(`no mapping row starts at ${e.first}`);
  }
  return { v4: apply(mapping.v4), v6: apply(mapping.v6) };
}

/** iptoasn's v4 excerpt with the rows starting at `first` given another AS (number, country, name). */
export function iptoasnVariant(
  changes: Record<string, [asn: number, country: string, descr: string]>,
): FeedFile[] {
  const v4 = fixture('iptoasn', 'ip2asn-v4.tsv')
    .split('\n')
    .map((line) => {
      const cells = line.split('\t');
      const change = changes[cells[0]!];
      return change ? [cells[0], cells[1], ...change].join('\t') : line;
    })
    .join('\n');
  return [
    { name: 'ip2asn-v4.tsv', text: v4 },
    { name: 'ip2asn-v6.tsv', text: fixture('iptoasn', 'ip2asn-v6.tsv') },
  ];
}

/** asn2org's excerpt with some AS names replaced (`names`: AS number -> new name) and rows added. */
export function asn2orgVariant(names: Record<number, string>, added: Record<number, string> = {}): FeedFile {
  const lines = fixture('asn2org', 'asns.csv').trimEnd().split('\n');
  const out = lines.map((line, i) => {
    if (i === 0) return line;
    const asn = Number(line.slice(0, line.indexOf(',')));
    const name = names[asn];
    return name === undefined ? line : `${asn},"${name.replaceAll('"', '""')}","PeeringDB"`;
  });
  for (const [asn, name] of Object.entries(added)) out.push(`${asn},"${name}","PeeringDB"`);
  return { name: 'asns.csv', text: `${out.join('\n')}\n` };
}

/** Cloudflare's ips-v4 list without `drop` and with `add` (served without a final newline, as the real one). */
export function cloudflareVariant(drop: readonly string[], add: readonly string[]): FeedFile[] {
  const v4 = fixture('cloudflare', 'ips-v4.txt')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !drop.includes(l));
  return [
    { name: 'ips-v4.txt', text: [...v4, ...add].join('\n') },
    { name: 'ips-v6.txt', text: fixture('cloudflare', 'ips-v6.txt') },
  ];
}
