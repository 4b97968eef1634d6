/**
 * The check that every demo address lies inside the published range of its provider, read from
 * the committed feed excerpts (test/fixtures/feeds) or, for an excerpt that is missing, from a
 * known published range.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

import { parseCidr, parseIp } from '../../shared/ip.js';
import type { Cidr } from '../../shared/ip.js';
import { DEMO_ADDRESSES as A, type DemoAddress, type ListKey } from './addresses.js';

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

export interface LoadedList {
  source: string;
  cidrs: Cidr[];
}

export function loadLists(feedDir: string): Record<ListKey, LoadedList> {
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
export function checkAddresses(lists: Record<ListKey, LoadedList>): void {
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
