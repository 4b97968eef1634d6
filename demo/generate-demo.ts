/**
 * Writes the DEMO DATA used by `make demo` (no network):
 *
 *   npx tsx demo/generate-demo.ts --out demo/data
 *
 * - `<out>/seed.csv`: a Tranco-format seed (`rank,domain`, no header) of registered domains under
 *   reserved example names only (RFC 2606 / RFC 6761: example.com, example.net, example.org and
 *   second-level names under the `.example` TLD).
 * - `<out>/observations/round-<n>.ndjson`: four weekly observation rounds in the builder's NDJSON
 *   format, one line per (name, type) per round, for every seed domain and its `www.` name.
 *
 * The answers are invented, but every address is a real address inside the range that its
 * provider really publishes. Each address is checked at generation time against the committed feed
 * excerpts in test/fixtures/feeds (or, for an excerpt that is missing, against a known published
 * range), and generation fails if one is not inside its provider's list.
 *
 * The output is fixed: no clock, no randomness other than a seeded PRNG for TTLs.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { parseCidr, parseIp } from '../shared/ip.js';
import type { Cidr } from '../shared/ip.js';

// ---------------------------------------------------------------------------------------------
// Rounds

/** Round start times, one week apart. */
export const DEMO_ROUNDS = [
  '2026-10-01T00:00:00Z',
  '2026-10-08T00:00:00Z',
  '2026-10-15T00:00:00Z',
  '2026-10-22T00:00:00Z',
] as const;
/** Seconds between two consecutive lines of a round. */
const LINE_SPACING_SECONDS = 5;
const ROUNDS = DEMO_ROUNDS.length;

// ---------------------------------------------------------------------------------------------
// Addresses, each with the provider list it must lie in

type ListKey =
  | 'cloudflare'
  | 'fastly'
  | 'aws-cloudfront'
  | 'aws-ec2'
  | 'google-cloud'
  | 'linode'
  | 'digitalocean'
  | 'tor-exit'
  | 'apple-relay';

interface DemoAddress {
  address: string;
  /** The lists that must contain the address; empty for an address in no list. */
  lists: ListKey[];
}

const ip = (address: string, ...lists: ListKey[]): DemoAddress => ({ address, lists });

/** Every address used by the demo, by role. */
export const DEMO_ADDRESSES = {
  // Cloudflare (104.16.0.0/13, 104.24.0.0/14, 172.64.0.0/13, 2606:4700::/32)
  cloudflareShared: ip('104.16.132.229', 'cloudflare'),
  cloudflareSharedV6: ip('2606:4700::6810:84e5', 'cloudflare'),
  cloudflareCdnDemo: ip('104.16.133.229', 'cloudflare'),
  cloudflareCdnDemoV6: ip('2606:4700::6810:85e5', 'cloudflare'),
  cloudflareShopA: ip('104.21.48.7', 'cloudflare'),
  cloudflareShopB: ip('172.67.182.31', 'cloudflare'),
  cloudflareShopV6A: ip('2606:4700:3030::6815:3007', 'cloudflare'),
  cloudflareShopV6B: ip('2606:4700:3034::ac43:b61f', 'cloudflare'),
  cloudflareResolverV6: ip('2606:4700:4700::1111', 'cloudflare'),
  // Apple iCloud Private Relay egress (a /32 of the relay list; in no hosting provider list)
  appleRelay: ip('104.28.28.1', 'apple-relay'),
  // Fastly (151.101.0.0/16, 2a04:4e42::/32)
  fastlyNewsA: ip('151.101.1.195', 'fastly'),
  fastlyNewsB: ip('151.101.65.195', 'fastly'),
  fastlyNewsV6: ip('2a04:4e42::323', 'fastly'),
  fastlyVideoOld: ip('151.101.129.195', 'fastly'),
  fastlyVideoNew: ip('151.101.193.195', 'fastly'),
  fastlyVideoV6: ip('2a04:4e42:200::323', 'fastly'),
  // AWS CloudFront (23.228.249.0/24, 120.52.22.96/27, 2600:9000:3000::/36) and EC2
  // (15.181.232.0/21, 216.244.7.0/24, 2406:daba:f000::/40)
  cloudfrontA: ip('23.228.249.10', 'aws-cloudfront'),
  cloudfrontB: ip('23.228.249.76', 'aws-cloudfront'),
  cloudfrontV6: ip('2600:9000:3001:a400:9:6f0a:3c00:93a1', 'aws-cloudfront'),
  cloudfrontNews: ip('120.52.22.100', 'aws-cloudfront'),
  cloudfrontNewsV6: ip('2600:9000:3002:5c00:1f:e2b0:8dc0:93a1', 'aws-cloudfront'),
  ec2Status: ip('15.181.232.17', 'aws-ec2'),
  ec2StatusV6: ip('2406:daba:f012:3400:5c1e:7d2a:9b1:4f0e', 'aws-ec2'),
  ec2ApiA: ip('216.244.7.45', 'aws-ec2'),
  ec2ApiB: ip('15.181.232.18', 'aws-ec2'),
  ec2Health: ip('216.244.7.46', 'aws-ec2'),
  // Google Cloud (34.35.0.0/16 africa-south1, 8.228.64.0/18 us-east4, 2600:1900:4280::/44)
  gcpAfrica: ip('34.35.12.7', 'google-cloud'),
  gcpAfricaMaps: ip('34.35.12.8', 'google-cloud'),
  gcpAfricaMusic: ip('34.35.12.9', 'google-cloud'),
  gcpUsEast: ip('8.228.70.15', 'google-cloud'),
  gcpV6: ip('2600:1900:4280::1a', 'google-cloud'),
  // Linode (72.14.176.0/24 … 72.14.182.0/24, 172.239.29.0/24 … 172.239.31.0/24, 2600:3c00::/32)
  linodeShop: ip('72.14.177.42', 'linode'),
  linodeShopV6: ip('2600:3c00::f03c:94ff:fe12:3456', 'linode'),
  linodeWeather: ip('72.14.178.9', 'linode'),
  linodeGames: ip('172.239.30.25', 'linode'),
  linodeBooksV6: ip('2600:3c00::f03c:94ff:fe12:4567', 'linode'),
  // DigitalOcean (5.101.96.0/21, 24.144.96.0/19, 2a03:b0c0:3:e0::/64)
  doOrg: ip('5.101.98.20', 'digitalocean'),
  doOrgV6: ip('2a03:b0c0:3:e0::1a:f001', 'digitalocean'),
  doOldShop: ip('24.144.100.12', 'digitalocean'),
  doGames: ip('24.144.100.13', 'digitalocean'),
  doRadio: ip('24.144.100.14', 'digitalocean'),
  doPhotos: ip('24.144.100.15', 'digitalocean'),
  // Tor exit (from the Tor bulk exit list)
  torExit: ip('185.220.101.18', 'tor-exit'),
  // In no provider list (Cloudflare's public resolver address is not in Cloudflare's published ranges)
  unlistedResolver: ip('1.1.1.1'),
  // Private (RFC 1918): recorded as answered, has no IP lookup
  privateIntranet: ip('10.20.30.40'),
} satisfies Record<string, DemoAddress>;

const A = DEMO_ADDRESSES;

/** Where each list is read from (relative to test/fixtures/feeds) and the ranges used when it is missing. */
const LIST_SOURCES: Record<ListKey, { file: string; fallback: string[] }> = {
  cloudflare: {
    file: 'cloudflare/ips-v4.txt|cloudflare/ips-v6.txt',
    fallback: ['104.16.0.0/13', '104.24.0.0/14', '172.64.0.0/13', '2606:4700::/32'],
  },
  fastly: { file: 'fastly/public-ip-list.json', fallback: ['151.101.0.0/16', '2a04:4e42::/32'] },
  'aws-cloudfront': {
    file: 'aws/ip-ranges.json#CLOUDFRONT',
    fallback: ['23.228.249.0/24', '120.52.22.96/27', '2600:9000:3000::/36'],
  },
  'aws-ec2': {
    file: 'aws/ip-ranges.json#EC2',
    fallback: ['15.181.232.0/21', '216.244.7.0/24', '2406:daba:f000::/40'],
  },
  'google-cloud': {
    file: 'google-cloud/cloud.json',
    fallback: ['34.35.0.0/16', '8.228.64.0/18', '2600:1900:4280::/44'],
  },
  linode: {
    file: 'linode/geofeed.csv',
    fallback: ['72.14.177.0/24', '72.14.178.0/24', '172.239.30.0/24', '2600:3c00::/32'],
  },
  digitalocean: {
    file: 'digitalocean/google.csv',
    fallback: ['5.101.96.0/21', '24.144.96.0/19', '2a03:b0c0:3:e0::/64'],
  },
  'tor-exit': { file: 'tor-bulk-exit/torbulkexitlist', fallback: ['185.220.101.18/32'] },
  'apple-relay': { file: 'apple-private-relay/egress-ipv4-cidrs.txt', fallback: ['104.28.28.1/32'] },
};

const CIDR_TOKEN = /[0-9a-fA-F:.]+\/\d{1,3}/g;

/** The CIDRs of one list as published in an excerpt file. */
function readList(path: string, awsService: string | null): string[] {
  const text = readFileSync(path, 'utf8');
  if (awsService) {
    const doc = JSON.parse(text) as {
      prefixes?: { ip_prefix: string; service: string }[];
      ipv6_prefixes?: { ipv6_prefix: string; service: string }[];
    };
    return [
      ...(doc.prefixes ?? []).filter((p) => p.service === awsService).map((p) => p.ip_prefix),
      ...(doc.ipv6_prefixes ?? []).filter((p) => p.service === awsService).map((p) => p.ipv6_prefix),
    ];
  }
  const cidrs = [...text.matchAll(CIDR_TOKEN)].map((m) => m[0]);
  // The Tor bulk exit list has bare addresses, one per line.
  for (const line of text.split('\n')) if (parseIp(line.trim())) cidrs.push(`${line.trim()}/32`);
  return cidrs;
}

interface LoadedList {
  source: string;
  cidrs: Cidr[];
}

function loadLists(feedDir: string): Record<ListKey, LoadedList> {
  const out = {} as Record<ListKey, LoadedList>;
  for (const [key, spec] of Object.entries(LIST_SOURCES) as [ListKey, (typeof LIST_SOURCES)[ListKey]][]) {
    const [files, service] = spec.file.split('#') as [string, string | undefined];
    const paths = files.split('|').map((f) => join(feedDir, f));
    const present = paths.filter((p) => existsSync(p));
    const texts = present.length > 0 ? present.flatMap((p) => readList(p, service ?? null)) : spec.fallback;
    const cidrs = texts.map((t) => parseCidr(t)).filter((c): c is NonNullable<typeof c> => c !== null);
    out[key] = { source: present.length > 0 ? present.join(', ') : 'built-in known ranges', cidrs };
  }
  return out;
}

/** Fails unless every demo address lies inside each list it names (and a listless one in none). */
function checkAddresses(lists: Record<ListKey, LoadedList>): void {
  const problems: string[] = [];
  for (const [role, entry] of Object.entries(A) as [string, DemoAddress][]) {
    const parsed = parseIp(entry.address);
    if (!parsed) {
      problems.push(`${role}: ${entry.address} is not an IP address`);
      continue;
    }
    const inside = (key: ListKey): boolean =>
      lists[key].cidrs.some(
        (c) => c.version === parsed.version && parsed.value >= c.first && parsed.value <= c.last,
      );
    for (const key of entry.lists) {
      if (!inside(key))
        problems.push(`${role}: ${entry.address} is not inside any ${key} range of ${lists[key].source}`);
    }
    if (entry.lists.length === 0) {
      for (const key of Object.keys(lists) as ListKey[]) {
        if (inside(key))
          problems.push(`${role}: ${entry.address} was meant to be unlisted but lies in ${key}`);
      }
    }
  }
  if (problems.length > 0) {
    throw new Error(`demo addresses do not match the feed excerpts:\n  ${problems.join('\n  ')}`);
  }
}

// ---------------------------------------------------------------------------------------------
// Scenarios

type Outcome = 'positive' | 'nxdomain' | 'nodata' | 'timeout' | 'servfail' | 'malformed';

interface Answer {
  outcome: Outcome;
  values: string[];
  cnames: string[];
}

/** The answers of one name for one record type, one per round. */
type Series = Answer[];

interface NamePlan {
  A: Series;
  AAAA: Series;
}

interface DomainPlan {
  domain: string;
  /** What the domain shows in the demo (for the README and for tests). */
  scenario: string;
  apex: NamePlan;
  www: NamePlan;
}

const pos = (values: DemoAddress[], cnames: string[] = []): Answer => ({
  outcome: 'positive',
  values: values.map((v) => v.address),
  cnames,
});
const NODATA: Answer = { outcome: 'nodata', values: [], cnames: [] };
const NXDOMAIN: Answer = { outcome: 'nxdomain', values: [], cnames: [] };
const TIMEOUT: Answer = { outcome: 'timeout', values: [], cnames: [] };
const SERVFAIL: Answer = { outcome: 'servfail', values: [], cnames: [] };

/** The same answer in every round. */
const always = (answer: Answer): Series => Array.from({ length: ROUNDS }, () => answer);
/** Answers given round by round. */
const rounds = (...answers: Answer[]): Series => {
  if (answers.length !== ROUNDS) throw new Error(`expected ${ROUNDS} answers, got ${answers.length}`);
  return answers;
};
/** A name answering `a` for A and `aaaa` for AAAA. */
const name = (a: Series, aaaa: Series): NamePlan => ({ A: a, AAAA: aaaa });
/** Adds a CNAME chain to every non-failed answer of a name. */
const chained = (plan: NamePlan, cnames: string[]): NamePlan => {
  const add = (s: Series): Series =>
    s.map((x) => (x.outcome === 'positive' || x.outcome === 'nodata' ? { ...x, cnames } : x));
  return { A: add(plan.A), AAAA: add(plan.AAAA) };
};
const NX_NAME = name(always(NXDOMAIN), always(NXDOMAIN));

/** A domain whose www name answers exactly like the apex. */
const mirrored = (domain: string, scenario: string, plan: NamePlan): DomainPlan => ({
  domain,
  scenario,
  apex: plan,
  www: plan,
});

const sharedCloudflare = name(always(pos([A.cloudflareShared])), always(pos([A.cloudflareSharedV6])));

/** Seed order = rank order. */
export const DEMO_DOMAINS: DomainPlan[] = [
  {
    domain: 'example.com',
    scenario: 'Stable on AWS CloudFront (2 IPv4 + 1 IPv6); www has a CNAME chain to a cloudfront.net name',
    apex: name(always(pos([A.cloudfrontA, A.cloudfrontB])), always(pos([A.cloudfrontV6]))),
    www: chained(name(always(pos([A.cloudfrontA, A.cloudfrontB])), always(pos([A.cloudfrontV6]))), [
      'd111111abcdef8.cloudfront.net',
    ]),
  },
  mirrored(
    'example.net',
    'Stable on Google Cloud (africa-south1), no AAAA',
    name(always(pos([A.gcpAfrica])), always(NODATA)),
  ),
  mirrored(
    'example.org',
    'Stable on DigitalOcean with AAAA',
    name(always(pos([A.doOrg])), always(pos([A.doOrgV6]))),
  ),
  mirrored(
    'shop.example',
    'Moves Linode -> Cloudflare between round 2 and round 3 (A and AAAA)',
    name(
      rounds(
        pos([A.linodeShop]),
        pos([A.linodeShop]),
        pos([A.cloudflareShopA, A.cloudflareShopB]),
        pos([A.cloudflareShopA, A.cloudflareShopB]),
      ),
      rounds(
        pos([A.linodeShopV6]),
        pos([A.linodeShopV6]),
        pos([A.cloudflareShopV6A, A.cloudflareShopV6B]),
        pos([A.cloudflareShopV6A, A.cloudflareShopV6B]),
      ),
    ),
  ),
  mirrored(
    'news.example',
    'Fastly in round 1, AWS CloudFront in round 2, back on the same Fastly addresses in rounds 3-4 (return to a network)',
    name(
      rounds(
        pos([A.fastlyNewsA, A.fastlyNewsB]),
        pos([A.cloudfrontNews]),
        pos([A.fastlyNewsA, A.fastlyNewsB]),
        pos([A.fastlyNewsA, A.fastlyNewsB]),
      ),
      rounds(pos([A.fastlyNewsV6]), pos([A.cloudfrontNewsV6]), pos([A.fastlyNewsV6]), pos([A.fastlyNewsV6])),
    ),
  ),
  {
    domain: 'cdn-demo.example',
    scenario: 'Cloudflare; www reaches the same addresses through a one-name CNAME chain',
    apex: name(always(pos([A.cloudflareCdnDemo])), always(pos([A.cloudflareCdnDemoV6]))),
    www: chained(name(always(pos([A.cloudflareCdnDemo])), always(pos([A.cloudflareCdnDemoV6]))), [
      'www.cdn-demo.example.cdn.cloudflare.net',
    ]),
  },
  {
    domain: 'video.example',
    scenario:
      'Fastly; new address in the same network between round 2 and 3 (new interval, same hosting run); ' +
      'www has a two-name CNAME chain and an AAAA record, the apex has no AAAA',
    apex: name(
      rounds(
        pos([A.fastlyVideoOld]),
        pos([A.fastlyVideoOld]),
        pos([A.fastlyVideoNew]),
        pos([A.fastlyVideoNew]),
      ),
      always(NODATA),
    ),
    www: chained(
      name(
        rounds(
          pos([A.fastlyVideoOld]),
          pos([A.fastlyVideoOld]),
          pos([A.fastlyVideoNew]),
          pos([A.fastlyVideoNew]),
        ),
        always(pos([A.fastlyVideoV6])),
      ),
      ['video.example.global.ssl.fastly.net', 'dualstack.n.sni.global.fastly.net'],
    ),
  },
  mirrored(
    'old-shop.example',
    'DigitalOcean in rounds 1-2, then NXDOMAIN in rounds 3-4 (the domain was dropped)',
    name(
      rounds(pos([A.doOldShop]), pos([A.doOldShop]), NXDOMAIN, NXDOMAIN),
      rounds(NODATA, NODATA, NXDOMAIN, NXDOMAIN),
    ),
  ),
  mirrored('gone.example', 'NXDOMAIN in every round: in the seed, never positive', NX_NAME),
  {
    domain: 'status.example',
    scenario:
      'AWS EC2 in rounds 1-3; the last round fails (A timeout, AAAA servfail) so the apex keeps the round-3 answer, ' +
      'stale with transient_failure; www answers normally',
    apex: name(
      rounds(pos([A.ec2Status]), pos([A.ec2Status]), pos([A.ec2Status]), TIMEOUT),
      rounds(pos([A.ec2StatusV6]), pos([A.ec2StatusV6]), pos([A.ec2StatusV6]), SERVFAIL),
    ),
    www: name(always(pos([A.ec2Status])), always(pos([A.ec2StatusV6]))),
  },
  mirrored(
    'api.example',
    'AWS EC2, two addresses whose order flips every round (and TTLs vary): never a change of address',
    name(
      rounds(
        pos([A.ec2ApiA, A.ec2ApiB]),
        pos([A.ec2ApiB, A.ec2ApiA]),
        pos([A.ec2ApiA, A.ec2ApiB]),
        pos([A.ec2ApiB, A.ec2ApiA]),
      ),
      always(NODATA),
    ),
  ),
  mirrored(
    'flaky.example',
    'Every query fails (A servfail, AAAA timeout): no answer ever, stale with never_confirmed',
    name(always(SERVFAIL), always(TIMEOUT)),
  ),
  mirrored(
    'blog.example',
    'Shares one Cloudflare IPv4 and IPv6 address with 5 other domains',
    sharedCloudflare,
  ),
  mirrored('forum.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  mirrored('wiki.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  mirrored('docs.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  mirrored('recipes.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  mirrored('pets.example', 'Shares one Cloudflare address (see blog.example)', sharedCloudflare),
  {
    domain: 'tor-exit.example',
    scenario: 'Resolves to an address on the Tor exit list (no provider); www does not exist',
    apex: name(always(pos([A.torExit])), always(NODATA)),
    www: NX_NAME,
  },
  mirrored(
    'relay-demo.example',
    'Resolves to an Apple iCloud Private Relay egress address (usage category relay, no provider)',
    name(always(pos([A.appleRelay])), always(NODATA)),
  ),
  mirrored(
    'maps.example',
    'Google Cloud us-east4 in rounds 1-2, Google Cloud africa-south1 in rounds 3-4 (same provider, new address)',
    name(
      rounds(pos([A.gcpUsEast]), pos([A.gcpUsEast]), pos([A.gcpAfricaMaps]), pos([A.gcpAfricaMaps])),
      always(NODATA),
    ),
  ),
  mirrored(
    'resolver.example',
    "IPv4 1.1.1.1 is in no provider list (but mapped to AS13335); its IPv6 lies in Cloudflare's published range",
    name(always(pos([A.unlistedResolver])), always(pos([A.cloudflareResolverV6]))),
  ),
  {
    domain: 'intranet.example',
    scenario:
      'Answers a private address (10.20.30.40): recorded in history, no IP lookup; www does not exist',
    apex: name(always(pos([A.privateIntranet])), always(NODATA)),
    www: NX_NAME,
  },
  mirrored(
    'games.example',
    'Moves Linode -> DigitalOcean between round 1 and round 2',
    name(rounds(pos([A.linodeGames]), pos([A.doGames]), pos([A.doGames]), pos([A.doGames])), always(NODATA)),
  ),
  mirrored(
    'music.example',
    'Google Cloud; AAAA appears in round 3 (nodata before)',
    name(always(pos([A.gcpAfricaMusic])), rounds(NODATA, NODATA, pos([A.gcpV6]), pos([A.gcpV6]))),
  ),
  mirrored('photos.example', 'Stable on DigitalOcean', name(always(pos([A.doPhotos])), always(NODATA))),
  mirrored(
    'travel.example',
    'Stable on Google Cloud us-east4 (TTL changes only)',
    name(always(pos([A.gcpUsEast])), always(pos([A.gcpV6]))),
  ),
  mirrored(
    'weather.example',
    'Linode; round 2 times out (A and AAAA), rounds 3-4 answer again: one interval, not stale at the end',
    name(
      rounds(pos([A.linodeWeather]), TIMEOUT, pos([A.linodeWeather]), pos([A.linodeWeather])),
      rounds(NODATA, TIMEOUT, NODATA, NODATA),
    ),
  ),
  mirrored(
    'books.example',
    'IPv6 only: A nodata, AAAA on Linode',
    name(always(NODATA), always(pos([A.linodeBooksV6]))),
  ),
  mirrored(
    'radio.example',
    'NXDOMAIN in rounds 1-2, registered and on DigitalOcean in rounds 3-4',
    name(
      rounds(NXDOMAIN, NXDOMAIN, pos([A.doRadio]), pos([A.doRadio])),
      rounds(NXDOMAIN, NXDOMAIN, NODATA, NODATA),
    ),
  ),
  {
    domain: 'tickets.example',
    scenario: 'Shares the AWS CloudFront addresses of example.com; www has a CNAME chain',
    apex: name(always(pos([A.cloudfrontA, A.cloudfrontB])), always(NODATA)),
    www: chained(name(always(pos([A.cloudfrontA, A.cloudfrontB])), always(NODATA)), [
      'd222222abcdef8.cloudfront.net',
    ]),
  },
  mirrored(
    'jobs.example',
    'Shares the DigitalOcean address of old-shop.example, and keeps it after old-shop.example goes NXDOMAIN',
    name(always(pos([A.doOldShop])), always(NODATA)),
  ),
  mirrored('health.example', 'Stable on AWS EC2', name(always(pos([A.ec2Health])), always(NODATA))),
  mirrored(
    'cars.example',
    'Shares the Linode address of shop.example, and stays there after shop.example moves away',
    name(always(pos([A.linodeShop])), always(NODATA)),
  ),
  mirrored(
    'garden.example',
    'Shares one Fastly address with news.example',
    name(always(pos([A.fastlyNewsA])), always(NODATA)),
  ),
  mirrored(
    'art.example',
    'Shares the Cloudflare address of blog.example from round 3 on (Google Cloud before)',
    name(
      rounds(pos([A.gcpUsEast]), pos([A.gcpUsEast]), pos([A.cloudflareShared]), pos([A.cloudflareShared])),
      rounds(NODATA, NODATA, pos([A.cloudflareSharedV6]), pos([A.cloudflareSharedV6])),
    ),
  ),
  mirrored(
    'chat.example',
    'Shares the Google Cloud address of example.net',
    name(always(pos([A.gcpAfrica])), always(NODATA)),
  ),
];

// ---------------------------------------------------------------------------------------------
// Output

/** mulberry32: deterministic TTLs. */
function prng(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface DemoFiles {
  seed: string;
  rounds: string[];
}

/** The demo files' contents (pure: same output every call). */
export function buildDemoData(): DemoFiles {
  const seen = new Set<string>();
  for (const d of DEMO_DOMAINS) {
    if (seen.has(d.domain)) throw new Error(`duplicate demo domain ${d.domain}`);
    seen.add(d.domain);
    const labels = d.domain.split('.');
    const reserved =
      ['example.com', 'example.net', 'example.org'].includes(d.domain) ||
      (labels.length >= 2 && labels.at(-1) === 'example');
    if (!reserved || labels.length < 2) throw new Error(`${d.domain} is not under a reserved example domain`);
  }
  const seed = DEMO_DOMAINS.map((d, i) => `${i + 1},${d.domain}\n`).join('');
  const random = prng(20261001);
  const roundsOut: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = Date.parse(DEMO_ROUNDS[r]!);
    const lines: string[] = [];
    for (const d of DEMO_DOMAINS) {
      for (const [qname, plan] of [
        [d.domain, d.apex],
        [`www.${d.domain}`, d.www],
      ] as const) {
        for (const type of ['A', 'AAAA'] as const) {
          const answer = plan[type][r]!;
          const time = new Date(start + lines.length * LINE_SPACING_SECONDS * 1000)
            .toISOString()
            .replace('.000Z', 'Z');
          const line: Record<string, unknown> = {
            name: qname,
            type,
            time,
            outcome: answer.outcome,
            values: answer.values,
            cnames: answer.cnames,
          };
          if (answer.outcome === 'positive') line.ttl = 60 + Math.floor(random() * 240);
          else if (answer.outcome === 'nxdomain' || answer.outcome === 'nodata')
            line.ttl = 300 + Math.floor(random() * 600);
          lines.push(JSON.stringify(line));
        }
      }
    }
    roundsOut.push(`${lines.join('\n')}\n`);
  }
  return { seed, rounds: roundsOut };
}

function repoRoot(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..');
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      out: { type: 'string', default: 'demo/data' },
      'feed-dir': { type: 'string', default: join(repoRoot(), 'test', 'fixtures', 'feeds') },
    },
    strict: true,
  });
  const lists = loadLists(values['feed-dir']);
  checkAddresses(lists);
  const files = buildDemoData();
  const outDir = values.out;
  mkdirSync(join(outDir, 'observations'), { recursive: true });
  writeFileSync(join(outDir, 'seed.csv'), files.seed);
  files.rounds.forEach((text, i) =>
    writeFileSync(join(outDir, 'observations', `round-${i + 1}.ndjson`), text),
  );
  let bytes = files.seed.length;
  for (const text of files.rounds) bytes += text.length;
  console.log('addresses checked against:');
  for (const [key, list] of Object.entries(lists)) console.log(`  ${key}: ${list.source}`);
  console.log(
    `wrote ${outDir}/seed.csv (${DEMO_DOMAINS.length} domains) and ${files.rounds.length} rounds ` +
      `(${files.rounds.map((t) => t.split('\n').length - 1).join(' + ')} lines), ${(bytes / 1024).toFixed(1)} KiB`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
