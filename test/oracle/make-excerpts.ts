/**
 * Writes the oracle's fixtures: REAL excerpts of the published snapshots in ../shared/data
 * (whole lines copied verbatim; for JSON a smaller valid document holding a subset of the real
 * entries, each entry's fields unchanged), selected by the address windows below, plus
 * manifest.txt (import kind → files) and README.md.
 *
 *   npx tsx test/oracle/make-excerpts.ts [data-dir]      (default ../shared/data)
 */
import fs from 'node:fs';
import path from 'node:path';
import zlib from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { parseAddress, parseCidr, type Cidr, type Family } from './ip.js';
import { parseCsv, readFeedText } from './parsers.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const OUT = path.join(ROOT, 'test/fixtures/oracle');
const GZIP_OVER = 200_000;

/** Address windows: a line or entry is kept when its range overlaps one of them. */
const WINDOWS: [string, string][] = [
  ['3.24.0.0/14', 'AWS AMAZON-only and nested EC2 prefixes, a Tor bulk exit address'],
  ['13.66.128.0/17', 'Azure service tags and Bingbot ranges inside them'],
  ['40.77.128.0/17', 'Azure and Bingbot'],
  ['157.55.39.0/24', 'Azure and Bingbot'],
  ['207.46.13.0/24', 'Azure and Bingbot'],
  ['34.64.0.0/14', 'Google Cloud, Googlebot and user-triggered fetchers'],
  ['66.249.64.0/19', 'Googlebot and special crawlers'],
  ['95.216.0.0/16', 'Hetzner and a Tor bulk exit address'],
  ['5.196.0.0/16', 'OVHcloud and a Tor bulk exit address'],
  ['37.187.0.0/16', 'OVHcloud and Tor exits of both lists'],
  ['64.227.96.0/20', 'DigitalOcean and a Tor bulk exit address'],
  ['37.139.0.0/19', 'DigitalOcean and 2013 Tor exits'],
  ['45.33.0.0/17', 'Linode and Tor bulk exit addresses'],
  ['130.61.64.0/18', 'Oracle Cloud and a Tor bulk exit address'],
  ['193.122.0.0/16', 'Oracle Cloud'],
  ['129.146.0.0/16', 'Oracle Cloud'],
  ['132.145.0.0/16', 'Oracle Cloud'],
  ['134.70.0.0/16', 'Oracle Cloud (OSN,OBJECT_STORAGE tags)'],
  ['138.2.0.0/16', 'Oracle Cloud'],
  ['144.24.0.0/16', 'Oracle Cloud'],
  ['104.28.28.0/24', 'Apple iCloud Private Relay /32s on AS13335 space'],
  ['172.64.0.0/13', 'Cloudflare and its iptoasn / ip-location-db rows'],
  ['18.160.0.0/12', 'AWS CloudFront'],
  ['214.95.0.0/16', 'ip-location-db IPv4: the one pair of overlapping rows (DoD)'],
  ['215.0.0.0/15', 'ip-location-db IPv4: the one pair of overlapping rows (DoD)'],
  ['81.0.0.0/12', 'ip-location-db IPv4 density, 2013 Tor exits'],
  ['::/7', 'iptoasn IPv6: the first rows (Not routed, around ::/8 and 64:ff9b::/96)'],
  ['2001::/30', 'Teredo and IETF protocol assignments'],
  ['2002::/16', '6to4'],
  ['2606:4700::/32', 'Cloudflare IPv6 and its iptoasn rows'],
  ['2001:4860:4801::/48', 'Googlebot and special crawlers IPv6'],
  ['2600:1f18::/29', 'AWS IPv6 (EC2, S3, AMAZON)'],
  ['2600:9000::/28', 'AWS CloudFront IPv6'],
  ['2600:1900::/28', 'Google Cloud IPv6 and user-triggered fetchers'],
  ['2600:3c00::/28', 'Linode IPv6'],
  ['2a01:4f8::/29', 'Hetzner IPv6'],
  ['2001:41d0::/32', 'OVHcloud IPv6'],
  ['2604:a880::/32', 'DigitalOcean IPv6'],
  ['2603:1000::/40', 'Azure IPv6'],
  ['2620:1ec::/40', 'Azure IPv6'],
  ['2a02:26f7:b400::/39', 'iptoasn nested rows (AS36183 inside AS20940) and Apple relay /64s'],
  ['2804:490::/32', 'iptoasn overlapping rows and Not routed rows (2804:490:8c00::1)'],
  ['2a0a:2e80::/28', 'a gap of iptoasn IPv6 that an ip-location-db row fills'],
  ['2a14:7581:9000::/40', 'a gap of iptoasn IPv6'],
];

/** How many of iptoasn IPv6's nested rows (inside an earlier row) get a window of their own. */
const NESTED_WINDOWS = 40;

interface Window {
  cidr: Cidr;
  why: string;
}

const windows: Window[] = WINDOWS.map(([text, why]) => ({ cidr: parseCidr(text)!, why }));

function overlaps(family: Family, first: bigint, last: bigint): boolean {
  return windows.some((w) => w.cidr.family === family && w.cidr.first <= last && first <= w.cidr.last);
}

function cidrOverlaps(text: string): boolean {
  const cidr = parseCidr(text.trim());
  if (!cidr) throw new Error(`not a CIDR: ${text}`);
  return overlaps(cidr.family, cidr.first, cidr.last);
}

function addressOverlaps(start: string, end: string): boolean {
  const first = parseAddress(start)!;
  const last = parseAddress(end)!;
  return overlaps(first.family, first.value, last.value);
}

const data = path.resolve(process.argv[2] ?? path.join(ROOT, '../shared/data'));
const written: { kind: string; file: string; source: string; note: string; count: string }[] = [];
const manifest = new Map<string, string[]>();

function write(kind: string, name: string, text: string, source: string, note: string, count: string) {
  const dir = path.join(OUT, kind);
  fs.mkdirSync(dir, { recursive: true });
  let file = name;
  if (Buffer.byteLength(text) > GZIP_OVER) {
    file = `${name}.gz`;
    fs.writeFileSync(path.join(dir, file), zlib.gzipSync(text, { level: 9 }));
  } else {
    fs.writeFileSync(path.join(dir, file), text);
  }
  const relative = `${kind}/${file}`;
  manifest.set(kind, [...(manifest.get(kind) ?? []), relative]);
  written.push({ kind, file: relative, source, note, count });
}

function selectLines(
  text: string,
  keep: (line: string) => boolean,
): { text: string; kept: number; of: number } {
  const all = text.split('\n');
  const trailing = all[all.length - 1] === '';
  if (trailing) all.pop();
  const out = all.filter(keep);
  return {
    text: out.join('\n') + (trailing && out.length > 0 ? '\n' : ''),
    kept: out.length,
    of: all.length,
  };
}

function jsonText(original: string, doc: unknown): string {
  const lines = original.split('\n');
  if (lines.filter((l) => l.trim() !== '').length <= 1)
    return JSON.stringify(doc) + (original.endsWith('\n') ? '\n' : '');
  const indent = /^( +)/.exec(lines[1] ?? '')?.[1]?.length ?? 2;
  return JSON.stringify(doc, null, indent) + (original.endsWith('\n') ? '\n' : '');
}

function whole(kind: string, source: string, note: string) {
  const text = readFeedText(path.join(data, source));
  const rows = text.split('\n').filter((l) => l.trim() !== '').length;
  write(
    kind,
    path.basename(source).replace(/\.gz$/, ''),
    text,
    source,
    note,
    `${rows} ${rows === 1 ? 'line' : 'lines'} (whole file)`,
  );
}

function lineExcerpt(kind: string, source: string, keep: (line: string) => boolean, note: string) {
  const { text, kept, of } = selectLines(readFeedText(path.join(data, source)), keep);
  write(kind, path.basename(source).replace(/\.gz$/, ''), text, source, note, `${kept} of ${of} lines`);
}

// ------------------------------------------------------------------ IP-to-ASN mappings

function nestedWindows(): { found: number; step: number; windows: Window[] } {
  const text = readFeedText(path.join(data, 'iptoasn/ip2asn-v6.tsv.gz'));
  const nested: [bigint, bigint, string][] = [];
  let maxLast = -1n;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const [start, end] = line.split('\t');
    const first = parseAddress(start!)!.value;
    const last = parseAddress(end!)!.value;
    if (last <= maxLast) nested.push([first, last, `${start}-${end}`]);
    if (last > maxLast) maxLast = last;
  }
  const step = Math.floor(nested.length / NESTED_WINDOWS);
  const out: Window[] = [];
  for (let i = 0; i < NESTED_WINDOWS; i += 1) {
    const [first, last, text] = nested[i * step]!;
    out.push({
      cidr: { family: 6, first, last, length: -1, text },
      why: `iptoasn IPv6 nested row ${i * step + 1} of ${nested.length}`,
    });
  }
  return { found: nested.length, step, windows: out };
}

const nested = nestedWindows();
windows.push(...nested.windows);

whole(
  'iptoasn',
  'iptoasn/ip2asn-v4.subset-google-cloudflare.tsv',
  'the whole 1,425-row IPv4 subset (Google and Cloudflare ASNs)',
);
lineExcerpt(
  'iptoasn',
  'iptoasn/ip2asn-v6.tsv.gz',
  (line) => {
    const [start, end] = line.split('\t');
    return addressOverlaps(start!, end!);
  },
  'rows overlapping the windows (nested and overlapping rows included, in file order)',
);
lineExcerpt(
  'ip-location-db',
  'ip-location-db-asn/asn-ipv4.csv.gz',
  (line) => {
    const [start, end, asn] = line.split(',');
    return asn === '13335' || addressOverlaps(start!, end!);
  },
  'every AS13335 row, plus the rows overlapping the windows',
);
lineExcerpt(
  'ip-location-db',
  'ip-location-db-asn/asn-ipv6.csv.gz',
  (line) => {
    const [start, end] = line.split(',');
    return addressOverlaps(start!, end!);
  },
  'rows overlapping the windows',
);

// ------------------------------------------------------------------ published ranges

type Json = Record<string, unknown>;

function jsonExcerpt(kind: string, source: string, edit: (doc: Json) => number, note: string, total: number) {
  const original = readFeedText(path.join(data, source));
  const doc = JSON.parse(original) as Json;
  const kept = edit(doc);
  write(
    kind,
    path.basename(source).replace(/\.gz$/, ''),
    jsonText(original, doc),
    source,
    note,
    `${kept} of ${total} entries`,
  );
}

{
  // AWS: every CloudFront prefix, the AMAZON records repeating them, and everything in the windows.
  const original = JSON.parse(readFeedText(path.join(data, 'aws/ip-ranges.json.gz'))) as Json;
  const lists = [
    ['prefixes', 'ip_prefix'],
    ['ipv6_prefixes', 'ipv6_prefix'],
  ] as const;
  const cloudfront = new Set<string>();
  let total = 0;
  for (const [list, key] of lists) {
    for (const e of original[list] as Json[]) {
      total += 1;
      if (String(e.service).startsWith('CLOUDFRONT')) cloudfront.add(String(e[key]));
    }
  }
  jsonExcerpt(
    'aws',
    'aws/ip-ranges.json.gz',
    (doc) => {
      let kept = 0;
      for (const [list, key] of lists) {
        doc[list] = (doc[list] as Json[]).filter((e) => {
          const prefix = String(e[key]);
          const keep =
            String(e.service).startsWith('CLOUDFRONT') || cloudfront.has(prefix) || cidrOverlaps(prefix);
          if (keep) kept += 1;
          return keep;
        });
      }
      return kept;
    },
    'every CLOUDFRONT and CLOUDFRONT_ORIGIN_FACING record, every record repeating one of their prefixes (AMAZON), and every record in the windows (AMAZON-only ones included)',
    total,
  );
}

{
  const original = JSON.parse(readFeedText(path.join(data, 'azure/ServiceTags_Public.json.gz'))) as Json;
  const total = (original.values as Json[]).reduce(
    (n, v) => n + ((v.properties as Json).addressPrefixes as unknown[]).length,
    0,
  );
  jsonExcerpt(
    'azure',
    'azure/ServiceTags_Public.json.gz',
    (doc) => {
      let kept = 0;
      doc.values = (doc.values as Json[]).filter((value) => {
        const properties = value.properties as Json;
        const prefixes = properties.addressPrefixes as string[];
        properties.addressPrefixes = prefixes.filter(cidrOverlaps);
        kept += (properties.addressPrefixes as string[]).length;
        return (properties.addressPrefixes as string[]).length > 0;
      });
      return kept;
    },
    'the service tags with a prefix in the windows; each keeps its fields, its addressPrefixes cut to the prefixes in the windows',
    total,
  );
}

function googleShape(kind: string, source: string) {
  const total = (JSON.parse(readFeedText(path.join(data, source))) as { prefixes: unknown[] }).prefixes
    .length;
  jsonExcerpt(
    kind,
    source,
    (doc) => {
      doc.prefixes = (doc.prefixes as Json[]).filter((e) =>
        cidrOverlaps(String(e.ipv4Prefix ?? e.ipv6Prefix)),
      );
      return (doc.prefixes as unknown[]).length;
    },
    'the prefixes in the windows; the other top-level fields (creationTime) unchanged',
    total,
  );
}

googleShape('google-cloud', 'google-cloud/cloud.json');
googleShape('googlebot', 'googlebot/googlebot.json');
googleShape('google-special-crawlers', 'googlebot/special-crawlers.json');
googleShape('google-user-triggered-fetchers', 'googlebot/user-triggered-fetchers.json');

{
  const original = JSON.parse(readFeedText(path.join(data, 'oracle/public_ip_ranges.json'))) as Json;
  const total = (original.regions as Json[]).reduce((n, r) => n + (r.cidrs as unknown[]).length, 0);
  jsonExcerpt(
    'oracle',
    'oracle/public_ip_ranges.json',
    (doc) => {
      let kept = 0;
      doc.regions = (doc.regions as Json[]).filter((region) => {
        region.cidrs = (region.cidrs as Json[]).filter((c) => cidrOverlaps(String(c.cidr)));
        kept += (region.cidrs as unknown[]).length;
        return (region.cidrs as unknown[]).length > 0;
      });
      return kept;
    },
    'the regions with a CIDR in the windows, their cidrs cut to those',
    total,
  );
}

whole('cloudflare', 'cloudflare/ips-v4.txt', 'whole file');
whole('cloudflare', 'cloudflare/ips-v6.txt', 'whole file (no newline after the last line, as published)');
whole('fastly', 'fastly/public-ip-list.json', 'whole file');
lineExcerpt(
  'digitalocean',
  'digitalocean/google.csv',
  (line) => cidrOverlaps(line.split(',')[0]!),
  'lines in the windows',
);
lineExcerpt(
  'linode',
  'linode/geofeed.csv',
  (line) => line.startsWith('#') || cidrOverlaps(line.split(',')[0]!),
  'the three # comment lines (with "# Last modified") and the lines in the windows',
);
for (const [kind, source] of [
  ['hetzner', 'hetzner/hetzner.json'],
  ['ovh', 'ovh/ovh.json'],
] as const) {
  const original = JSON.parse(readFeedText(path.join(data, source))) as Record<string, string[]>;
  jsonExcerpt(
    kind,
    source,
    (doc) => {
      let kept = 0;
      for (const key of ['IPv4Prefixes', 'IPv6Prefixes']) {
        doc[key] = (doc[key] as string[]).filter(cidrOverlaps);
        kept += (doc[key] as string[]).length;
      }
      return kept;
    },
    'the prefixes in the windows',
    original.IPv4Prefixes!.length + original.IPv6Prefixes!.length,
  );
}
whole('tor-exit-addresses', 'tor/exit-addresses.txt', 'whole file (2013)');
whole('tor-bulk-exit', 'tor/torbulkexitlist.txt', 'whole file (2022)');
lineExcerpt(
  'apple-private-relay',
  'apple-private-relay/egress-ipv4-cidrs.txt',
  cidrOverlaps,
  'lines in the windows',
);
lineExcerpt(
  'apple-private-relay',
  'apple-private-relay/egress-ipv6-cidrs-merged.txt',
  cidrOverlaps,
  'lines in the windows',
);
whole('bingbot', 'bingbot/bingbot-ipv4-cidrs.txt', 'whole file');

// ------------------------------------------------------------------ IANA registries (bogons)

const ianaDir = path.join(OUT, 'iana');
fs.mkdirSync(ianaDir, { recursive: true });
for (const name of ['iana-ipv4-special-registry-1.csv', 'iana-ipv6-special-registry-1.csv']) {
  fs.copyFileSync(path.join(data, 'iana', name), path.join(ianaDir, name));
  fs.chmodSync(path.join(ianaDir, name), 0o644);
}
// IANA's IPv6 Address Space registry is not in ../shared/data; the repository's copy is used.
fs.copyFileSync(
  path.join(ROOT, 'shared/data/iana-ipv6-address-space-1.csv'),
  path.join(ianaDir, 'iana-ipv6-address-space-1.csv'),
);
parseCsv(fs.readFileSync(path.join(ianaDir, 'iana-ipv6-address-space-1.csv'), 'utf8'));

// ------------------------------------------------------------------ manifest and README

const manifestText = [
  '# Import kind and its files (relative to this folder), in import order; written by test/oracle/make-excerpts.ts.',
  ...[...manifest].map(([kind, files]) => `${kind} ${files.join(' ')}`),
  '',
].join('\n');
fs.writeFileSync(path.join(OUT, 'manifest.txt'), manifestText);

const bytes = written.reduce((n, w) => n + fs.statSync(path.join(OUT, w.file)).size, 0);
const readme = `# Oracle fixtures: real excerpts of the published feed snapshots

Written by \`npx tsx test/oracle/make-excerpts.ts\` from \`../shared/data\` (see
\`../shared/data/PROVENANCE.md\` for each file's publisher, mirror, snapshot date and license).
Used by \`test/oracle/oracle.test.ts\`, which imports them with \`bin/builder.js\` (kinds and
files in \`manifest.txt\`) and compares \`GET /v1/ip/{ip}\` with the independent oracle
(\`test/oracle/oracle.ts\`). Nothing here is synthesized: text feeds keep whole lines verbatim and
in their original order; JSON feeds are smaller valid documents holding a subset of the real
entries with every field of an entry unchanged (re-serialized with the original indentation).
Files over ${GZIP_OVER / 1000} kB are gzip-compressed (\`.gz\`; the builder reads them).

## Files

| Import kind | File | Source in ../shared/data | Selection | Size |
|---|---|---|---|---|
${written.map((w) => `| \`${w.kind}\` | \`${w.file}\` | \`${w.source}\` | ${w.note} | ${w.count} |`).join('\n')}
| (bogons) | \`iana/iana-ipv4-special-registry-1.csv\`, \`iana/iana-ipv6-special-registry-1.csv\` | \`iana/\` | whole files (IANA Special-Purpose Address Registries) | |
| (bogons) | \`iana/iana-ipv6-address-space-1.csv\` | not in ../shared/data: copied from this repository's \`shared/data/\` | whole file (IANA IPv6 Address Space registry) | |

Total: ${(bytes / 1024).toFixed(0)} KiB on disk.

## Windows

A line or entry is kept when its address range overlaps one of these (the same windows for
every feed, so that ranges of different feeds and mapping rows meet):

| Window | Why |
|---|---|
${WINDOWS.map(([w, why]) => `| \`${w}\` | ${why} |`).join('\n')}

Plus ${NESTED_WINDOWS} windows that are exactly an iptoasn IPv6 row lying inside an earlier row
(the 1st, then every ${nested.step}th of the ${nested.found} such rows of the full file, in file order):

${nested.windows.map((w) => `- \`${w.cidr.text}\``).join('\n')}
`;
fs.writeFileSync(path.join(OUT, 'README.md'), readme);
console.log(`wrote ${written.length} excerpts (${(bytes / 1024).toFixed(0)} KiB) and manifest.txt to ${OUT}`);
for (const w of written) console.log(`  ${w.file}: ${w.count}`);
