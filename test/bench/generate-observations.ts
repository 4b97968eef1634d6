/**
 * Synthetic DNS observations for benchmarks and tests.
 *
 *   npx tsx test/bench/generate-observations.ts --domains 1000000 --rounds 3 --out /tmp/bench-obs [--seed 42]
 *
 * Writes `<out>/seed.csv` (Tranco format: `rank,domain`, no header) and `<out>/round-<n>.ndjson`,
 * one line per (name, type) per round in the builder's observation format:
 *
 *   {"name":"www.example.com","type":"A","time":"2026-10-01T00:00:05Z","outcome":"positive",
 *    "values":["93.184.215.14"],"cnames":[...],"ttl":300}
 *
 * The registered domains are synthetic (`d000123-k.com`, `word-word.net`, …) but the addresses lie
 * inside real published provider ranges (Cloudflare, Fastly, Google Cloud, AWS, Linode,
 * DigitalOcean), read at startup from the committed fixture excerpts when present and otherwise
 * from the shared data snapshots, so a release built from them has meaningful joins. The rest are
 * public IPv4/IPv6 addresses outside every list that could be found (plus ~0.1% private 10.x
 * answers, which SPEC allows as values).
 *
 * Output is a pure function of (domains, rounds, seed, the feed files read): every domain has its
 * own PRNG stream seeded from (seed, index). Lines are built as short strings, copied into a 2 MiB
 * buffer per file (long string ropes would cost more in garbage collection than the generation
 * itself) and each full buffer is written through a stream that respects backpressure, so memory
 * stays flat whatever the number of domains.
 */
import { once } from 'node:events';
import { createWriteStream, existsSync, readFileSync } from 'node:fs';
import type { WriteStream } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { gunzipSync } from 'node:zlib';

import { parseCidr } from '../../shared/ip.js';

// ---------------------------------------------------------------------------------------------
// Options and results

export interface GenerateObservationsOptions {
  /** Registered domains in the seed list; the output has 2 names (apex, www) per domain. */
  domains: number;
  /** Observation rounds, one day apart. */
  rounds: number;
  /** Directory for seed.csv and round-<n>.ndjson (created when missing). */
  outDir: string;
  /** PRNG seed (default 42). */
  seed?: number;
  /**
   * Directories searched, in order, for the feed files (`cloudflare/ips-v4.txt`, …). Default: the
   * repository's `test/fixtures/feeds`, then `$IPSCOPE_FEED_DATA`, then `/work/shared/data`.
   */
  feedDirs?: string[];
  /** Start of round 1 (default 2026-10-01T00:00:00Z). */
  start?: string;
  /** Length of a round: query times are spread over this many seconds (default 4 hours). */
  roundSeconds?: number;
  /** Progress and summary lines (default: none). */
  log?: (line: string) => void;
}

export interface RoundSummary {
  file: string;
  lines: number;
  bytes: number;
  outcomes: Record<string, number>;
}

export interface GenerateObservationsResult {
  seedFile: string;
  seedBytes: number;
  rounds: RoundSummary[];
  /** Feed files the addresses were drawn from (provider -> file paths). */
  feeds: Record<string, string[]>;
  /** Files used only to keep "unlisted" addresses outside every known range. */
  exclusionFiles: string[];
  events: {
    addressChanges: number;
    providerMoves: number;
    returns: number;
    reorders: number;
    transientFailures: number;
    becameNxdomain: number;
    aaaaToggles: number;
  };
  seconds: number;
}

const DEFAULT_START = '2026-10-01T00:00:00Z';
const DEFAULT_ROUND_SECONDS = 4 * 3600;
/** Domains per written chunk: 2,500 domains = 10,000 lines per round file. */
/** Bytes collected per file before they are handed to its stream (about 10,000 lines). */
const CHUNK_BYTES = 2 * 1024 * 1024;
/** Room kept free in a chunk for one more domain's lines. */
const CHUNK_SLACK = 64 * 1024;
const STREAM_HIGH_WATER_MARK = 4 * 1024 * 1024;

/** The repository root, whether this runs from test/bench (tsx) or dist/test/bench (tsc output). */
function repoRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, '..', '..'), resolve(here, '..', '..', '..')];
  return candidates.find((dir) => existsSync(join(dir, 'package.json'))) ?? candidates[0]!;
}

function defaultFeedDirs(): string[] {
  const root = repoRoot();
  const dirs = [join(root, 'test', 'fixtures', 'feeds')];
  if (process.env.IPSCOPE_FEED_DATA) dirs.push(process.env.IPSCOPE_FEED_DATA);
  dirs.push(resolve(root, '..', 'shared', 'data'), '/work/shared/data');
  return [...new Set(dirs)];
}

// ---------------------------------------------------------------------------------------------
// PRNG: mulberry32, one stream per domain

class Mulberry32 {
  private state = 0;

  reseed(seed: number): void {
    this.state = seed | 0;
  }

  /** Uniform in [0, 1). */
  next(): number {
    this.state = (this.state + 0x6d2b79f5) | 0;
    let t = this.state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }

  /** Integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  pick<T>(items: readonly T[]): T {
    return items[this.int(items.length)]!;
  }
}

/** A 32-bit hash of (seed, index) used to seed each domain's stream. */
function mix32(seed: number, index: number): number {
  let h = Math.imul(seed ^ 0x9e3779b9, 0x85ebca6b) ^ Math.imul(index + 1, 0xc2b2ae35);
  h ^= h >>> 16;
  h = Math.imul(h, 0x7feb352d);
  h ^= h >>> 15;
  h = Math.imul(h, 0x846ca68b);
  h ^= h >>> 16;
  return h >>> 0;
}

// ---------------------------------------------------------------------------------------------
// Synthetic registered domains

// Lowercase ASCII letters only (no digits, no hyphens): the patterns below rely on it for uniqueness.
const WORDS = `
  acme alpha amber anchor apple arrow atlas aurora autumn axis badge bamboo banner basil beacon
  bear berry birch bison blade bloom blue bolt book boost brave bridge bright brook buffalo cactus
  camel canyon capital cargo castle cedar chart cherry cinema circle city clear cliff cloud clover
  coast cobalt comet coral cosmic cotton craft crane crest crystal cube daily dawn delta desert
  digital dragon dream drift eagle earth echo edge ember emerald engine epic falcon fern field
  finch flame fleet flint flora focus forest forge fox fresh frost galaxy garden gate giant
  glacier globe gold granite graph green grove harbor hawk hazel helix hill hive horizon hub iris
  iron island ivory jade jasmine jet jungle juniper karma kernel kite lake lantern laser leaf
  legend lemon level light lime linen lion logic lotus lunar magnet maple marble market meadow
  media mesa metro mint mirror mobile moon mosaic motion mountain nest net noble north nova oak
  oasis ocean olive omega onyx orbit orchid otter panda paper peak pearl pepper phoenix pilot pine
  pixel planet plaza polar prairie prime prism pulse quartz quest radar rain raven reef ridge
  river robin rocket rose ruby sage salt sand sapphire scout shadow shell shore signal silver sky
  snow solar sonic spark sphere spring spruce square star stone storm stream summit sun swift
  tango terra thunder tide tiger timber topaz tower trail travel tribe tulip tundra union urban
  valley vector velvet venture vertex violet vision vista volt wave willow wind wolf wonder world
  yarn zen zenith zephyr zinc news shop store tech games health finance sports music photo
`
  .split(/\s+/)
  .filter((w) => w.length > 0);
const TLDS = ['com', 'net', 'org', 'io', 'co', 'de', 'info', 'app', 'dev', 'me', 'fr', 'nl'];
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** A multiplier coprime with n (n > 1), so that k -> (k * a + b) mod n is a permutation. */
function coprimeMultiplier(n: number, rng: Mulberry32): number {
  const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
  let a = 1 + rng.int(Math.max(1, n - 1));
  while (gcd(a, n) !== 1) a = (a % (n - 1)) + 1;
  return a;
}

/**
 * Unique, valid registered domains by rank. Four patterns that can never collide because they
 * differ in whether the label holds a hyphen and/or a digit:
 *   `word.tld` (top ranks), `word-word.tld`, `word123.tld`, `d0000123-k.tld`.
 * The first three walk a scrambled enumeration of their combinations (an affine permutation), so
 * each combination is used at most once; when one runs out the generator falls back to the last.
 */
class DomainNames {
  private readonly words: string[];
  private readonly single: { capacity: number; a: number; b: number; next: number };
  private readonly pair: { capacity: number; a: number; b: number; next: number };
  private readonly numbered: { capacity: number; a: number; b: number; next: number };
  readonly topCount: number;

  constructor(seed: number) {
    const rng = new Mulberry32();
    rng.reseed(mix32(seed, -7));
    const words = [...new Set(WORDS)];
    for (let i = words.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [words[i], words[j]] = [words[j]!, words[i]!];
    }
    this.words = words;
    const w = words.length;
    const make = (capacity: number) => ({
      capacity,
      a: coprimeMultiplier(capacity, rng),
      b: rng.int(capacity),
      next: 0,
    });
    this.single = make(w * TLDS.length);
    this.pair = make(w * w * TLDS.length);
    this.numbered = make(w * 999 * TLDS.length);
    this.topCount = Math.floor(this.single.capacity / 2);
  }

  private take(p: { capacity: number; a: number; b: number; next: number }): number | null {
    if (p.next >= p.capacity) return null;
    const k = p.next++;
    return (k * p.a + p.b) % p.capacity;
  }

  /** The domain of `rank` (1-based); `u` and `letter` come from the domain's PRNG stream. */
  name(rank: number, u: number, letter: number): string {
    const w = this.words.length;
    const t = TLDS.length;
    if (rank <= this.topCount) {
      const k = this.take(this.single);
      if (k !== null) return `${this.words[k % w]}.${TLDS[Math.floor(k / w)]}`;
    } else if (u < 0.45) {
      const k = this.take(this.pair);
      if (k !== null) {
        return `${this.words[k % w]}-${this.words[Math.floor(k / w) % w]}.${TLDS[Math.floor(k / (w * w))]}`;
      }
    } else if (u < 0.7) {
      const k = this.take(this.numbered);
      if (k !== null) {
        const n = 1 + (Math.floor(k / w) % 999);
        return `${this.words[k % w]}${n}.${TLDS[Math.floor(k / (w * 999))]}`;
      }
    }
    return `d${String(rank).padStart(7, '0')}-${LETTERS[letter % 26]}.${TLDS[letter % t]}`;
  }
}

// ---------------------------------------------------------------------------------------------
// Provider ranges

interface Prefix4 {
  base: number;
  size: number;
}

interface Prefix6 {
  groups: number[];
  length: number;
}

interface Provider {
  key: string;
  /** Share of registered domains initially hosted here. */
  weight: number;
  v4: Prefix4[];
  v6: Prefix6[];
  /** Host offsets are drawn from the first `pool` addresses of a prefix (CDNs share IPs). */
  pool: number;
  /** Builds a CNAME chain pointing into this provider for a name. */
  chain: (label: string, rng: Mulberry32) => string[];
}

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

function hexLabel(rng: Mulberry32, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += '0123456789abcdef'[rng.int(16)];
  return s;
}

const PROVIDER_SHAPES: Record<string, { weight: number; pool: number; chain: Provider['chain'] }> = {
  cloudflare: {
    weight: 0.22,
    pool: 4096,
    chain: (label) => [`${label}.cdn.cloudflare.net`],
  },
  'aws-cloudfront': {
    weight: 0.06,
    pool: 8192,
    chain: (_label, rng) => [`d${hexLabel(rng, 13)}.cloudfront.net`],
  },
  'aws-ec2': {
    weight: 0.12,
    pool: Number.POSITIVE_INFINITY,
    chain: (_label, rng) => [`lb-${hexLabel(rng, 8)}.elb.amazonaws.com`],
  },
  'google-cloud': {
    weight: 0.07,
    pool: Number.POSITIVE_INFINITY,
    chain: () => ['ghs.googlehosted.com'],
  },
  fastly: {
    weight: 0.04,
    pool: 2048,
    chain: (label, rng) =>
      rng.next() < 0.5
        ? [`${label}.map.fastly.net`]
        : [`${label}.global.ssl.fastly.net`, 'dualstack.n.sni.global.fastly.net'],
  },
  linode: {
    weight: 0.04,
    pool: Number.POSITIVE_INFINITY,
    chain: (label) => [`${label}.ip.linodeusercontent.com`],
  },
  digitalocean: {
    weight: 0.05,
    pool: Number.POSITIVE_INFINITY,
    chain: (label) => [`${label}.ondigitalocean.app`],
  },
};
const UNLISTED_WEIGHT = 0.399;
const PRIVATE_WEIGHT = 0.001;
/** Providers a www CNAME chain points into (CDN-like). */
const CHAIN_PROVIDERS = ['cloudflare', 'aws-cloudfront', 'fastly', 'google-cloud'];

/**
 * Public blocks outside the special-purpose registries (allocated RIR space) from which unlisted
 * addresses are drawn; each candidate is also checked against every loaded list.
 */
const UNLISTED_V4_SLASH8 = [
  2, 5, 31, 37, 41, 46, 58, 59, 60, 61, 62, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92,
  93, 94, 95, 105, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 176,
  178, 186, 187, 188, 189, 190, 191, 200, 201,
];
const UNLISTED_V6_FIRST_GROUPS = [0x2a00, 0x2a01, 0x2a02, 0x2003, 0x2401, 0x2800];

/** Sorted, merged [first, last] intervals for membership tests. */
class IntervalSet {
  private readonly firsts: bigint[] = [];
  private readonly lasts: bigint[] = [];

  constructor(ranges: [bigint, bigint][]) {
    ranges.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    for (const [first, last] of ranges) {
      const n = this.lasts.length;
      if (n > 0 && first <= this.lasts[n - 1]! + 1n) {
        if (last > this.lasts[n - 1]!) this.lasts[n - 1] = last;
      } else {
        this.firsts.push(first);
        this.lasts.push(last);
      }
    }
  }

  has(value: bigint): boolean {
    let lo = 0;
    let hi = this.firsts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.firsts[mid]! > value) hi = mid - 1;
      else if (this.lasts[mid]! < value) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

/** Same for IPv4 with plain numbers (the hot path). */
class IntervalSet4 {
  private readonly firsts: Float64Array;
  private readonly lasts: Float64Array;

  constructor(ranges: Prefix4[]) {
    const sorted = [...ranges].sort((x, y) => x.base - y.base);
    const firsts: number[] = [];
    const lasts: number[] = [];
    for (const p of sorted) {
      const last = p.base + p.size - 1;
      const n = lasts.length;
      if (n > 0 && p.base <= lasts[n - 1]! + 1) {
        if (last > lasts[n - 1]!) lasts[n - 1] = last;
      } else {
        firsts.push(p.base);
        lasts.push(last);
      }
    }
    this.firsts = Float64Array.from(firsts);
    this.lasts = Float64Array.from(lasts);
  }

  has(value: number): boolean {
    let lo = 0;
    let hi = this.firsts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.firsts[mid]! > value) hi = mid - 1;
      else if (this.lasts[mid]! < value) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

function v6Value(groups: number[]): bigint {
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(g);
  return v;
}

function v6Range(p: Prefix6): [bigint, bigint] {
  const first = v6Value(p.groups);
  const hostMask = (1n << BigInt(128 - p.length)) - 1n;
  return [first & ~hostMask, first | hostMask];
}

// ---------------------------------------------------------------------------------------------
// Address formatting and drawing

function formatV4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** RFC 5952 text of eight 16-bit groups (same result as shared/ip.ts formatValue, without bigint). */
export function formatV6Groups(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestLength < 2) return groups.map((g) => g.toString(16)).join(':');
  const head = groups.slice(0, bestStart).map((g) => g.toString(16));
  const tail = groups.slice(bestStart + bestLength).map((g) => g.toString(16));
  return `${head.join(':')}::${tail.join(':')}`;
}

/** A host address inside a prefix, shaped like real ones (zero middle groups, random interface id). */
function drawV6(prefix: Prefix6, rng: Mulberry32): string {
  const groups = prefix.groups.slice();
  for (let g = 0; g < 8; g++) {
    const hostStart = Math.max(prefix.length, g * 16);
    const bits = g * 16 + 16 - hostStart;
    if (bits <= 0) continue;
    const mask = bits >= 16 ? 0xffff : (1 << bits) - 1;
    let value: number;
    if (bits === 16 && (g === 4 || g === 5)) value = rng.next() < 0.85 ? 0 : rng.int(0x10000);
    else if (bits === 16 && g === 6) value = rng.next() < 0.5 ? 0 : rng.int(0x10000);
    else if (bits === 16 && g === 7) value = 1 + rng.int(0xffff);
    else if (g >= 2 && g <= 3 && rng.next() < 0.3) value = rng.int(16);
    else value = rng.int(0x10000);
    groups[g] = (groups[g]! & ~mask & 0xffff) | (value & mask);
  }
  return formatV6Groups(groups);
}

function drawV4(prefix: Prefix4, pool: number, rng: Mulberry32): string {
  if (prefix.size <= 2) return formatV4(prefix.base + rng.int(prefix.size));
  const room = Math.min(prefix.size - 2, pool);
  return formatV4(prefix.base + 1 + rng.int(room));
}

/** How many addresses an answer carries: 1 to 4. */
function answerSize(rng: Mulberry32): number {
  const u = rng.next();
  return u < 0.45 ? 1 : u < 0.75 ? 2 : u < 0.85 ? 3 : 4;
}

// ---------------------------------------------------------------------------------------------
// Per-name state

const UNLISTED = -1;
const PRIVATE = -2;

interface Snapshot {
  provider: number;
  nx: boolean;
  a: string[];
  aaaa: string[];
  cnames: string[];
}

/** The answer state of one name, or of an apex and a www name that mirror each other. */
interface Owner extends Snapshot {
  aJson: string;
  aaaaJson: string;
  cnamesJson: string;
  /** A chain owner keeps a CNAME chain into its provider. */
  chained: boolean;
  label: string;
  prev: Snapshot | null;
  changedRound: number;
  eventRound: number;
}

function jsonList(values: string[]): string {
  return values.length === 0 ? '[]' : `["${values.join('","')}"]`;
}

// ---------------------------------------------------------------------------------------------
// Output

/** Collects ASCII lines in a buffer and hands full buffers to a write stream. */
class ChunkWriter {
  private buffer = Buffer.allocUnsafe(CHUNK_BYTES);
  private used = 0;
  bytes = 0;

  constructor(private readonly stream: WriteStream) {}

  /** Appends lines (ASCII only: one byte per character). */
  add(text: string): void {
    if (this.used + text.length > this.buffer.length) this.grow(text.length);
    this.used += this.buffer.write(text, this.used, 'latin1');
  }

  get full(): boolean {
    return this.used > CHUNK_BYTES - CHUNK_SLACK;
  }

  /** Writes the collected bytes; resolves when the stream can take more. */
  async flush(): Promise<void> {
    if (this.used === 0) return;
    const chunk = this.buffer.subarray(0, this.used);
    this.bytes += this.used;
    this.buffer = Buffer.allocUnsafe(CHUNK_BYTES);
    this.used = 0;
    if (!this.stream.write(chunk)) await once(this.stream, 'drain');
  }

  async end(): Promise<void> {
    await this.flush();
    this.stream.end();
    await once(this.stream, 'finish');
  }

  private grow(extra: number): void {
    const bigger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.used + extra));
    this.buffer.copy(bigger, 0, 0, this.used);
    this.buffer = bigger;
  }
}

// ---------------------------------------------------------------------------------------------
// The generator

export async function generateObservations(
  options: GenerateObservationsOptions,
): Promise<GenerateObservationsResult> {
  const startedAt = performance.now();
  const domainCount = options.domains;
  const roundCount = options.rounds;
  const seed = options.seed ?? 42;
  const log = options.log ?? (() => {});
  if (!Number.isInteger(domainCount) || domainCount < 1)
    throw new RangeError('domains must be a positive integer');
  if (!Number.isInteger(roundCount) || roundCount < 1)
    throw new RangeError('rounds must be a positive integer');
  const startMs = Date.parse(options.start ?? DEFAULT_START);
  if (Number.isNaN(startMs)) throw new RangeError(`start is not an ISO 8601 time: ${options.start}`);
  const roundSeconds = options.roundSeconds ?? DEFAULT_ROUND_SECONDS;
  const feedDirs = options.feedDirs ?? defaultFeedDirs();

  // --- ranges
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
  const providerIndex = new Map(providers.map((p, i) => [p.key, i]));
  const chainProviders = CHAIN_PROVIDERS.map((k) => providerIndex.get(k)).filter((i) => i !== undefined);
  const totalWeight = providers.reduce((sum, p) => sum + p.weight, 0) + UNLISTED_WEIGHT + PRIVATE_WEIGHT;

  const rng = new Mulberry32();

  const pickProvider = (): number => {
    let u = rng.next() * totalWeight;
    for (let i = 0; i < providers.length; i++) {
      u -= providers[i]!.weight;
      if (u < 0) return i;
    }
    return u < UNLISTED_WEIGHT ? UNLISTED : PRIVATE;
  };

  const unlistedV4 = (): string => {
    for (;;) {
      const n = UNLISTED_V4_SLASH8[rng.int(UNLISTED_V4_SLASH8.length)]! * 0x1000000 + rng.int(0x1000000);
      const last = n & 255;
      if (last === 0 || last === 255 || listedV4.has(n)) continue;
      return formatV4(n);
    }
  };

  const unlistedV6 = (): string => {
    for (;;) {
      const groups = [
        rng.pick(UNLISTED_V6_FIRST_GROUPS),
        rng.int(0x10000),
        rng.int(0x10000),
        rng.int(0x100),
        0,
        0,
        0,
        1 + rng.int(0xffff),
      ];
      if (groups[0] === 0x2003) groups[1] = groups[1]! & 0x1fff;
      if (listedV6.has(v6Value(groups))) continue;
      return formatV6Groups(groups);
    }
  };

  const drawSet = (provider: number, family: 4 | 6): string[] => {
    const p = provider >= 0 ? providers[provider]! : null;
    if (family === 6 && (provider === PRIVATE || (p && p.v6.length === 0))) return [];
    const count = provider === PRIVATE ? 1 + rng.int(2) : answerSize(rng);
    const out: string[] = [];
    for (let attempt = 0; out.length < count && attempt < count * 8; attempt++) {
      let address: string;
      if (provider === PRIVATE) address = formatV4(0x0a000000 + 1 + rng.int(0xfffffe));
      else if (!p) address = family === 4 ? unlistedV4() : unlistedV6();
      else if (family === 4) address = drawV4(rng.pick(p.v4), p.pool, rng);
      else address = drawV6(rng.pick(p.v6), rng);
      if (!out.includes(address)) out.push(address);
    }
    return out;
  };

  const setAnswers = (o: Owner, a: string[], aaaa: string[]): void => {
    o.a = a;
    o.aaaa = aaaa;
    o.aJson = jsonList(a);
    o.aaaaJson = jsonList(aaaa);
  };

  const setChain = (o: Owner): void => {
    o.cnames = o.chained && o.provider >= 0 ? providers[o.provider]!.chain(o.label, rng) : [];
    o.cnamesJson = jsonList(o.cnames);
  };

  const newOwner = (
    provider: number,
    label: string,
    chained: boolean,
    nx: boolean,
    aProb: number,
    aaaaGivenA: number,
  ): Owner => {
    const o: Owner = {
      provider,
      nx,
      a: [],
      aaaa: [],
      cnames: [],
      aJson: '[]',
      aaaaJson: '[]',
      cnamesJson: '[]',
      chained,
      label,
      prev: null,
      changedRound: 0,
      eventRound: 1,
    };
    if (!nx) {
      const hasA = rng.next() < aProb;
      const hasAaaa = rng.next() < (hasA ? aaaaGivenA : 0.03);
      setAnswers(o, hasA ? drawSet(provider, 4) : [], hasAaaa ? drawSet(provider, 6) : []);
      setChain(o);
    }
    return o;
  };

  const snapshot = (o: Owner): Snapshot => ({
    provider: o.provider,
    nx: o.nx,
    a: o.a,
    aaaa: o.aaaa,
    cnames: o.cnames,
  });

  const events = {
    addressChanges: 0,
    providerMoves: 0,
    returns: 0,
    reorders: 0,
    transientFailures: 0,
    becameNxdomain: 0,
    aaaaToggles: 0,
  };

  /** Applies this round's change, if any, to an owner (once per round even when shared). */
  const evolve = (o: Owner, round: number): void => {
    if (o.eventRound === round) return;
    o.eventRound = round;
    if (o.prev && o.changedRound === round - 1 && rng.next() < 0.1) {
      const back = o.prev;
      o.prev = snapshot(o);
      if (back.provider !== o.provider) events.providerMoves++;
      o.provider = back.provider;
      o.nx = back.nx;
      setAnswers(o, back.a, back.aaaa);
      o.cnames = back.cnames;
      o.cnamesJson = jsonList(back.cnames);
      o.changedRound = round;
      events.returns++;
      return;
    }
    const u = rng.next();
    if (u < 0.03) {
      if (o.nx && rng.next() > 0.3) return;
      o.prev = snapshot(o);
      o.changedRound = round;
      events.addressChanges++;
      const hadA = o.a.length > 0 || o.nx;
      const hadAaaa = o.aaaa.length > 0;
      o.nx = false;
      if (rng.next() < 0.3) {
        const previous = o.provider;
        const pool = o.chained ? chainProviders : null;
        for (let i = 0; i < 8 && o.provider === previous; i++)
          o.provider = pool ? rng.pick(pool) : pickProvider();
        if (o.provider !== previous) events.providerMoves++;
        setAnswers(o, hadA ? drawSet(o.provider, 4) : [], hadAaaa ? drawSet(o.provider, 6) : []);
        setChain(o);
      } else if (!hadA) {
        setAnswers(o, o.a, drawSet(o.provider, 6));
      } else {
        setAnswers(o, drawSet(o.provider, 4), hadAaaa && rng.next() < 0.5 ? drawSet(o.provider, 6) : o.aaaa);
      }
    } else if (u < 0.065) {
      // Same addresses, another order: not a change of address.
      if (o.a.length >= 2) setAnswers(o, [...o.a.slice(1), o.a[0]!], o.aaaa);
      else if (o.aaaa.length >= 2) setAnswers(o, o.a, [...o.aaaa.slice(1), o.aaaa[0]!]);
      else return;
      events.reorders++;
    } else if (u < 0.0665) {
      if (o.nx) return;
      o.prev = snapshot(o);
      o.changedRound = round;
      o.nx = true;
      events.becameNxdomain++;
    } else if (u < 0.0695) {
      if (o.nx || o.a.length === 0) return;
      o.prev = snapshot(o);
      o.changedRound = round;
      setAnswers(o, o.a, o.aaaa.length > 0 ? [] : drawSet(o.provider, 6));
      events.aaaaToggles++;
    }
  };

  // --- output
  await mkdir(options.outDir, { recursive: true });
  const seedFile = join(options.outDir, 'seed.csv');
  const roundFiles = Array.from({ length: roundCount }, (_, r) =>
    join(options.outDir, `round-${r + 1}.ndjson`),
  );
  const open = (path: string): ChunkWriter =>
    new ChunkWriter(createWriteStream(path, { highWaterMark: STREAM_HIGH_WATER_MARK }));
  const seedWriter = open(seedFile);
  const roundWriters = roundFiles.map(open);
  const summaries: RoundSummary[] = roundFiles.map((file) => ({
    file,
    lines: 0,
    bytes: 0,
    outcomes: { positive: 0, nxdomain: 0, nodata: 0, timeout: 0, servfail: 0, malformed: 0 },
  }));

  const linesPerRound = 4 * domainCount;
  const timeCache = Array.from({ length: roundCount }, () => ({ second: -1, text: '' }));
  const timeText = (round: number, lineIndex: number): string => {
    const second = Math.floor((lineIndex * roundSeconds) / linesPerRound);
    const cache = timeCache[round]!;
    if (cache.second !== second) {
      cache.second = second;
      cache.text = `${new Date(startMs + round * 86_400_000 + second * 1000).toISOString().slice(0, 19)}Z`;
    }
    return cache.text;
  };

  const names = new DomainNames(seed);
  const writers = [seedWriter, ...roundWriters];
  const flushFull = async (): Promise<void> => {
    for (const writer of writers) if (writer.full) await writer.flush();
  };

  /** The A and AAAA lines of one name in one round. */
  const emit = (round: number, lineIndex: number, head: string, o: Owner, failure: number): string => {
    // `failure` bit 1: the A query failed, bit 2: the AAAA query failed; bits 4/8 pick the outcome.
    const summary = summaries[round]!;
    summary.lines += 2;
    let out = '';
    for (let t = 0; t < 2; t++) {
      const time = timeText(round, lineIndex + t);
      const type = t === 0 ? 'A' : 'AAAA';
      let outcome: string;
      let values = '[]';
      let cnames = '[]';
      let ttl = '';
      if (failure & (t === 0 ? 1 : 2)) {
        outcome = failure & 4 ? 'malformed' : failure & 8 ? 'servfail' : 'timeout';
      } else if (o.nx) {
        outcome = 'nxdomain';
        ttl = `,"ttl":${300 + rng.int(3300)}`;
      } else {
        const list = t === 0 ? o.a : o.aaaa;
        cnames = o.cnamesJson;
        if (list.length > 0) {
          outcome = 'positive';
          values = t === 0 ? o.aJson : o.aaaaJson;
          ttl = `,"ttl":${1 + rng.int(rng.next() < 0.6 ? 300 : 3600)}`;
        } else {
          outcome = 'nodata';
          ttl = `,"ttl":${60 + rng.int(3540)}`;
        }
      }
      summary.outcomes[outcome]!++;
      out += `${head}${type}","time":"${time}","outcome":"${outcome}","values":${values},"cnames":${cnames}${ttl}}\n`;
    }
    return out;
  };

  /** This round's transient failure bits for one name (0 = none). */
  const failureBits = (round: number): number => {
    if (rng.next() >= (round === 0 ? 0.001 : 0.01)) return 0;
    events.transientFailures++;
    const which = rng.next();
    const types = which < 0.4 ? 1 : which < 0.7 ? 2 : 3;
    const kind = rng.next();
    return types | (kind < 0.05 ? 4 : kind < 0.4 ? 8 : 0);
  };

  for (let i = 0; i < domainCount; i++) {
    rng.reseed(mix32(seed, i));
    const rank = i + 1;
    const domain = names.name(rank, rng.next(), rng.int(26 * 12));
    seedWriter.add(`${rank},${domain}\n`);
    const label = domain.slice(0, domain.indexOf('.'));

    // Round 1 state.
    const provider = pickProvider();
    const domainNx = rng.next() < 0.028;
    const apex = newOwner(provider, label, false, domainNx, 0.84, 0.57);
    let www: Owner;
    const wu = rng.next();
    if (domainNx) www = apex;
    else if (wu < 0.01) www = newOwner(provider, `www-${label}`, false, true, 0, 0);
    else if (wu < 0.21 && chainProviders.length > 0) {
      www = newOwner(rng.pick(chainProviders), `www-${label}`, true, false, 0.97, 0.6);
    } else if (wu < 0.74 && apex.a.length > 0) www = apex;
    else www = newOwner(provider, `www-${label}`, false, false, 0.85, 0.57);
    const apexHead = `{"name":"${domain}","type":"`;
    const wwwHead = `{"name":"www.${domain}","type":"`;

    for (let r = 0; r < roundCount; r++) {
      if (r > 0) {
        evolve(apex, r + 1);
        evolve(www, r + 1);
      }
      const lineIndex = 4 * i;
      const apexLines = emit(r, lineIndex, apexHead, apex, failureBits(r));
      roundWriters[r]!.add(apexLines + emit(r, lineIndex + 2, wwwHead, www, failureBits(r)));
    }
    if (writers.some((w) => w.full)) await flushFull();
    if ((i + 1) % 100_000 === 0) log(`  ${i + 1} domains`);
  }
  await Promise.all(writers.map((w) => w.end()));
  for (let r = 0; r < roundCount; r++) summaries[r]!.bytes = roundWriters[r]!.bytes;

  return {
    seedFile,
    seedBytes: seedWriter.bytes,
    rounds: summaries,
    feeds,
    exclusionFiles,
    events,
    seconds: (performance.now() - startedAt) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------
// CLI

function formatMb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      domains: { type: 'string', default: '1000000' },
      rounds: { type: 'string', default: '3' },
      out: { type: 'string' },
      seed: { type: 'string', default: '42' },
      'feed-dir': { type: 'string', multiple: true },
    },
    strict: true,
  });
  if (!values.out) {
    throw new Error('missing --out <dir>: e.g. --domains 1000000 --rounds 3 --out /tmp/bench-obs');
  }
  const result = await generateObservations({
    domains: Number(values.domains),
    rounds: Number(values.rounds),
    outDir: values.out,
    seed: Number(values.seed),
    ...(values['feed-dir'] ? { feedDirs: values['feed-dir'] } : {}),
    log: (line) => console.error(line),
  });
  console.log('feeds used:');
  for (const [provider, files] of Object.entries(result.feeds))
    console.log(`  ${provider}: ${files.join(', ')}`);
  console.log(`  exclusion lists: ${result.exclusionFiles.length} files`);
  console.log(`seed: ${result.seedFile} (${formatMb(result.seedBytes)})`);
  let totalLines = 0;
  let totalBytes = result.seedBytes;
  for (const round of result.rounds) {
    totalLines += round.lines;
    totalBytes += round.bytes;
    const outcomes = Object.entries(round.outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    console.log(`${round.file}: ${round.lines} lines, ${formatMb(round.bytes)} (${outcomes})`);
  }
  const e = result.events;
  console.log(
    `events after round 1: ${e.addressChanges} address changes (${e.providerMoves} provider moves), ` +
      `${e.returns} returns to an earlier answer, ${e.reorders} order-only changes, ${e.becameNxdomain} became NXDOMAIN, ` +
      `${e.aaaaToggles} AAAA toggles, ${e.transientFailures} names with a transient failure (all rounds)`,
  );
  console.log(
    `total: ${totalLines} lines, ${formatMb(totalBytes)} in ${result.seconds.toFixed(1)} s ` +
      `(${Math.round(totalLines / result.seconds)} lines/s)`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
