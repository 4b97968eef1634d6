/**
 * The providers whose published ranges host the synthetic names: their share of the domains,
 * how their addresses are shared, the CNAME chains that point into them; and where the
 * addresses of names on no listed provider come from.
 */
import type { Prefix4, Prefix6 } from './prefixes.js';
import type { Mulberry32 } from './prng.js';

/** Provider index of a name on no listed provider, and of one answering a private address. */
export const UNLISTED = -1;
export const PRIVATE = -2;

export interface Provider {
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

function hexLabel(rng: Mulberry32, length: number): string {
  let s = '';
  for (let i = 0; i < length; i++) s += '0123456789abcdef'[rng.int(16)];
  return s;
}

export const PROVIDER_SHAPES: Record<string, { weight: number; pool: number; chain: Provider['chain'] }> = {
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
export const UNLISTED_WEIGHT = 0.399;
export const PRIVATE_WEIGHT = 0.001;
/** Providers a www CNAME chain points into (CDN-like). */
export const CHAIN_PROVIDERS = ['cloudflare', 'aws-cloudfront', 'fastly', 'google-cloud'];

/**
 * Public blocks outside the special-purpose registries (allocated RIR space) from which unlisted
 * addresses are drawn; each candidate is also checked against every loaded list.
 */
export const UNLISTED_V4_SLASH8 = [
  2, 5, 31, 37, 41, 46, 58, 59, 60, 61, 62, 77, 78, 79, 80, 81, 82, 83, 84, 85, 86, 87, 88, 89, 90, 91, 92,
  93, 94, 95, 105, 109, 110, 111, 112, 113, 114, 115, 116, 117, 118, 119, 120, 121, 122, 123, 124, 125, 176,
  178, 186, 187, 188, 189, 190, 191, 200, 201,
];
export const UNLISTED_V6_FIRST_GROUPS = [0x2a00, 0x2a01, 0x2a02, 0x2003, 0x2401, 0x2800];
