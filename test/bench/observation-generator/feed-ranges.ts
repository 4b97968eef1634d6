/**
 * The published ranges the addresses are drawn from, read at startup from feed files (the
 * committed fixture excerpts or full snapshots), and the lists "unlisted" addresses stay out of.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { parseCidr } from '../../../shared/ip.js';
import { IntervalSet, IntervalSet4, v6Range, type Prefix4, type Prefix6 } from './prefixes.js';
import { PROVIDER_SHAPES, type Provider } from './providers.js';

interface RangeLists {
  v4: Prefix4[];
  v6: Prefix6[];
}

/** The feed files a provider's ranges are read from, relative to a feed directory. */
const PROVIDER_FILES: Record<string, string[]> = {
  cloudflare: ['cloudflare/ips-v4.txt', 'cloudflare/ips-v6.txt'],
  fastly: ['fastly/public-ip-list.json'],
  'google-cloud': ['google-cloud/cloud.json'],
  'aws-cloudfront': ['aws/ip-ranges.json'],
  'aws-ec2': ['aws/ip-ranges.json'],
  linode: ['linode/geofeed.csv'],
  digitalocean: ['digitalocean/google.csv'],
};

/** Lists read only so that "unlisted" addresses stay outside them. */
const EXCLUSION_FILES = [
  'aws/ip-ranges.json',
  'azure/ServiceTags_Public.json',
  'oracle/public_ip_ranges.json',
  'google-cloud/goog.json',
  'hetzner/hetzner.json',
  'ovh/ovh.json',
  'github/meta.json',
  'apple-private-relay/egress-ipv4-cidrs.txt',
  'apple-private-relay/egress-ipv6-cidrs-merged.txt',
  'googlebot/googlebot.json',
  'googlebot/special-crawlers.json',
  'googlebot/user-triggered-fetchers.json',
  'bingbot/bingbot-ipv4-cidrs.txt',
  'tor/torbulkexitlist.txt',
  'tor/exit-addresses.txt',
  // Layout of the committed fixture excerpts (test/fixtures/feeds).
  'tor-bulk-exit/torbulkexitlist',
  'tor-exit-addresses/exit-addresses',
  'google-special-crawlers/special-crawlers.json',
  'google-user-triggered-fetchers/user-triggered-fetchers.json',
];

/** Every copy of `relative` (or `relative.gz`) in the feed directories, in directory order. */
function findFeedFiles(dirs: string[], relative: string): string[] {
  const found: string[] = [];
  for (const dir of dirs) {
    for (const candidate of [relative, `${relative}.gz`]) {
      const path = join(dir, candidate);
      if (existsSync(path)) {
        found.push(path);
        break;
      }
    }
  }
  return found;
}

function readText(path: string): string {
  const raw = readFileSync(path);
  const gzipped = raw.length > 2 && raw[0] === 0x1f && raw[1] === 0x8b;
  return (gzipped ? gunzipSync(raw) : raw).toString('utf8');
}

const IPV4_CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

function addCidr(lists: RangeLists, text: string): void {
  const v4 = IPV4_CIDR.exec(text.trim());
  if (v4) {
    // Fast path for the many IPv4 prefixes of the exclusion lists (host bits cleared as parseCidr does).
    const octets = [v4[1], v4[2], v4[3], v4[4]].map(Number);
    const length = Number(v4[5]);
    if (octets.every((o) => o <= 255) && length <= 32) {
      const size = 2 ** (32 - length);
      const value = ((octets[0]! << 24) >>> 0) + (octets[1]! << 16) + (octets[2]! << 8) + octets[3]!;
      lists.v4.push({ base: value - (value % size), size });
    }
    return;
  }
  const cidr = parseCidr(text.trim());
  if (!cidr) return;
  if (cidr.version === 4) {
    lists.v4.push({ base: Number(cidr.first), size: Number(cidr.last - cidr.first) + 1 });
  } else {
    const groups: number[] = [];
    for (let i = 7; i >= 0; i--) groups.push(Number((cidr.first >> BigInt(i * 16)) & 0xffffn));
    lists.v6.push({ groups, length: cidr.prefixLength });
  }
}

const CIDR_TOKEN = /[0-9a-fA-F:.]+\/\d{1,3}/g;
const IPV4_LINE = /^\s*(?:ExitAddress\s+)?(\d{1,3}\.\d{1,3}\.\d{1,3}\.\d{1,3})\b/gm;

/** Every CIDR in any text (JSON, CSV, plain lists), plus bare IPv4 addresses at line starts as /32. */
function anyCidrs(text: string): RangeLists {
  const lists: RangeLists = { v4: [], v6: [] };
  for (const m of text.matchAll(CIDR_TOKEN)) addCidr(lists, m[0]);
  for (const m of text.matchAll(IPV4_LINE)) addCidr(lists, `${m[1]}/32`);
  return lists;
}

function providerRanges(key: string, text: string): RangeLists {
  const lists: RangeLists = { v4: [], v6: [] };
  if (key === 'aws-cloudfront' || key === 'aws-ec2') {
    const service = key === 'aws-cloudfront' ? 'CLOUDFRONT' : 'EC2';
    const doc = JSON.parse(text) as {
      prefixes?: { ip_prefix: string; service: string }[];
      ipv6_prefixes?: { ipv6_prefix: string; service: string }[];
    };
    for (const p of doc.prefixes ?? []) if (p.service === service) addCidr(lists, p.ip_prefix);
    for (const p of doc.ipv6_prefixes ?? []) if (p.service === service) addCidr(lists, p.ipv6_prefix);
    return lists;
  }
  if (key === 'google-cloud') {
    const doc = JSON.parse(text) as { prefixes?: { ipv4Prefix?: string; ipv6Prefix?: string }[] };
    for (const p of doc.prefixes ?? []) addCidr(lists, p.ipv4Prefix ?? p.ipv6Prefix ?? '');
    return lists;
  }
  if (key === 'linode' || key === 'digitalocean') {
    for (const line of text.split('\n')) {
      if (line.startsWith('#')) continue;
      addCidr(lists, line.split(',')[0] ?? '');
    }
    return lists;
  }
  return anyCidrs(text); // Cloudflare plain lists, Fastly JSON
}

/** Keeps prefixes that leave room for realistic host addresses (IPv4 /24 or shorter, IPv6 /64 or shorter). */
function usable(lists: RangeLists): RangeLists {
  const v4 = lists.v4.filter((p) => p.size >= 256);
  const v6 = lists.v6.filter((p) => p.length <= 64);
  return { v4: v4.length > 0 ? v4 : lists.v4, v6: v6.length > 0 ? v6 : lists.v6 };
}

/** What readFeedRanges found. */
export interface FeedRanges {
  providers: Provider[];
  /** Feed files the addresses are drawn from (provider -> file paths). */
  feeds: Record<string, string[]>;
  /** Files read only to keep "unlisted" addresses outside every known range. */
  exclusionFiles: string[];
  listedV4: IntervalSet4;
  listedV6: IntervalSet;
}

/** The providers with IPv4 ranges in the feed files, and every range listed anywhere. */
export function readFeedRanges(feedDirs: string[]): FeedRanges {
  const feeds: Record<string, string[]> = {};
  const providers: Provider[] = [];
  const allV4: Prefix4[] = [];
  const allV6: [bigint, bigint][] = [];
  const textCache = new Map<string, string>();
  const cachedText = (path: string): string => {
    let text = textCache.get(path);
    if (text === undefined) {
      text = readText(path);
      textCache.set(path, text);
    }
    return text;
  };
  for (const [key, files] of Object.entries(PROVIDER_FILES)) {
    const lists: RangeLists = { v4: [], v6: [] };
    const used: string[] = [];
    for (const relative of files) {
      const path = findFeedFiles(feedDirs, relative)[0];
      if (!path) continue;
      const found = providerRanges(key, cachedText(path));
      lists.v4.push(...found.v4);
      lists.v6.push(...found.v6);
      used.push(path);
    }
    if (lists.v4.length === 0) continue; // a provider without IPv4 ranges cannot host a name here
    const shape = PROVIDER_SHAPES[key]!;
    feeds[key] = used;
    providers.push({ key, weight: shape.weight, pool: shape.pool, chain: shape.chain, ...usable(lists) });
  }
  const exclusionFiles: string[] = [];
  // Unlisted addresses stay outside every copy found (fixture excerpts and full snapshots alike).
  for (const relative of [...new Set([...Object.values(PROVIDER_FILES).flat(), ...EXCLUSION_FILES])]) {
    for (const path of findFeedFiles(feedDirs, relative)) {
      const found = anyCidrs(cachedText(path));
      allV4.push(...found.v4);
      for (const p of found.v6) allV6.push(v6Range(p));
      exclusionFiles.push(path);
    }
  }
  textCache.clear();
  const listedV4 = new IntervalSet4(allV4);
  const listedV6 = new IntervalSet(allV6);
  return { providers, feeds, exclusionFiles, listedV4, listedV6 };
}
