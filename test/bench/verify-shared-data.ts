/**
 * Parses every supported real feed file in /work/shared/data (or $SHARED_DATA) with its source
 * and checks the counts against PROVENANCE.md. Run: npx tsx test/bench/verify-shared-data.ts
 * Exits 1 when a file has rejected rows or a count differs from the expected one.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';
import { getSource } from '../../builder/sources/index.js';

const DATA = process.env.SHARED_DATA ?? '/work/shared/data';

interface Check {
  source: string;
  file: string;
  /** Expected data rows read, from PROVENANCE.md. */
  read: number;
  /** Expected records when some rows are repeats kept once (default: = read). */
  records?: number;
  note?: string;
}

const CHECKS: Check[] = [
  { source: 'iptoasn', file: 'iptoasn/ip2asn-v6.tsv.gz', read: 167_928 },
  { source: 'iptoasn', file: 'iptoasn/ip2asn-v4.subset-google-cloudflare.tsv', read: 1_425 },
  { source: 'ip-location-db', file: 'ip-location-db-asn/asn-ipv4.csv.gz', read: 411_961 },
  { source: 'ip-location-db', file: 'ip-location-db-asn/asn-ipv6.csv.gz', read: 103_197 },
  { source: 'aws', file: 'aws/ip-ranges.json.gz', read: 10_668 + 6_160 },
  { source: 'google-cloud', file: 'google-cloud/cloud.json', read: 1_092 },
  { source: 'azure', file: 'azure/ServiceTags_Public.json.gz', read: 101_516 },
  { source: 'oracle', file: 'oracle/public_ip_ranges.json', read: 1_102 },
  { source: 'cloudflare', file: 'cloudflare/ips-v4.txt', read: 15 },
  { source: 'cloudflare', file: 'cloudflare/ips-v6.txt', read: 7 },
  { source: 'fastly', file: 'fastly/public-ip-list.json', read: 19 + 2 },
  { source: 'digitalocean', file: 'digitalocean/google.csv', read: 1_182 },
  { source: 'linode', file: 'linode/geofeed.csv', read: 4_552 },
  { source: 'hetzner', file: 'hetzner/hetzner.json', read: 766 + 8 },
  { source: 'ovh', file: 'ovh/ovh.json', read: 723 + 42 },
  {
    source: 'tor-exit-addresses',
    file: 'tor/exit-addresses.txt',
    read: 639,
    records: 624,
    note: '639 ExitAddress lines, 624 distinct addresses: 12 addresses are listed by 2 or 3 relays',
  },
  { source: 'tor-bulk-exit', file: 'tor/torbulkexitlist.txt', read: 1_396 },
  { source: 'apple-private-relay', file: 'apple-private-relay/egress-ipv4-cidrs.txt', read: 41_949 },
  { source: 'apple-private-relay', file: 'apple-private-relay/egress-ipv6-cidrs-merged.txt', read: 10_455 },
  { source: 'googlebot', file: 'googlebot/googlebot.json', read: 315 },
  { source: 'google-special-crawlers', file: 'googlebot/special-crawlers.json', read: 270 },
  { source: 'google-user-triggered-fetchers', file: 'googlebot/user-triggered-fetchers.json', read: 1_056 },
  { source: 'bingbot', file: 'bingbot/bingbot-ipv4-cidrs.txt', read: 28 },
  { source: 'asn2org', file: 'asn2org/asns.csv.gz', read: 103_861 },
  {
    source: 'x4bnet-datacenter',
    file: 'x4bnet-lists-vpn/datacenter-ASN.txt',
    read: 906,
    records: 892,
    note: 'all 906 lines are AS lines; 14 ASNs are listed twice',
  },
];

const NOT_PARSED = [
  'iptoasn/ip2country-v4.tsv.gz, ip2country-v6.tsv.gz: range → country only (no ASN); geolocation is not offered',
  'google-cloud/goog.json: all Google-announced ranges, not cloud customer ranges; no source for it',
  'github/meta.json: no source for it',
  "x4bnet-lists-vpn/vpn-ASN.txt: VPN ASNs are not one of the API's AS categories",
  'iana/*.csv: special-purpose registries (bogons), not a feed',
];

function readText(path: string): string {
  const bytes = readFileSync(path);
  return (path.endsWith('.gz') ? gunzipSync(bytes) : bytes).toString('utf8');
}

let failures = 0;
const rows: string[][] = [
  ['file', 'source', 'read', 'records', 'rejected', 'repeats', 'publishedAt', 'ms', 'check'],
];
const details: string[] = [];
for (const check of CHECKS) {
  const source = getSource(check.source);
  if (!source) throw new Error(`unknown source ${check.source}`);
  const text = readText(join(DATA, check.file));
  const started = performance.now();
  const result = source.parse(text, check.file);
  const ms = performance.now() - started;
  const expectedRecords = check.records ?? check.read;
  const repeats = result.read - result.records.length - result.rejected.length;
  const ok =
    result.rejected.length === 0 && result.read === check.read && result.records.length === expectedRecords;
  if (!ok) failures++;
  rows.push([
    check.file,
    check.source,
    String(result.read),
    String(result.records.length),
    String(result.rejected.length),
    String(repeats),
    result.publishedAt ?? '-',
    ms.toFixed(0),
    ok ? 'ok' : `EXPECTED read ${check.read}, records ${expectedRecords}, rejected 0`,
  ]);
  for (const rejected of result.rejected.slice(0, 3)) {
    details.push(`${check.file}:${rejected.line}: ${rejected.reason}`);
  }
  if (check.note) details.push(`${check.file}: ${check.note}`);
}

const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  '));
console.log('');
for (const line of details) console.log(line);
console.log('\nNot parsed (no source for the format):');
for (const line of NOT_PARSED) console.log(`  ${line}`);
console.log(failures === 0 ? '\nall files match PROVENANCE.md' : `\n${failures} file(s) differ`);
process.exitCode = failures === 0 ? 0 : 1;
