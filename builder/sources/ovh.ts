/**
 * OVHcloud prefixes as announced in BGP by AS16276, in ip-fetcher's
 * `{"IPv4Prefixes": [...], "IPv6Prefixes": [...]}` list. OVHcloud publishes no list of its
 * own. All `hosting`.
 */
import { parseBgpPrefixList } from './common/bgp-prefix-list.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'ovh',
  kind: 'provider_ranges',
  description: 'OVHcloud prefixes announced by AS16276 (derived from BGP by ip-fetcher; no official list)',
  // No publisher URL: ip-fetcher's ovh.json (github.com/jonhadfield/cloud-ips) is imported locally.
  urls: [],
  attribution: {
    source: 'ip-fetcher OVH prefixes (BGPView / RIPEstat)',
    by: 'jonhadfield/cloud-ips',
    license: 'Apache-2.0 (list); BGPView and RIPEstat terms for the underlying data',
  },
  parse: (text, file) => parseBgpPrefixList(text, file, 'OVHcloud', 'hosting'),
};
