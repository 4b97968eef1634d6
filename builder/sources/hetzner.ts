/**
 * Hetzner prefixes as announced in BGP by its ASNs (AS24940, AS213230, AS212317, AS215859),
 * in ip-fetcher's `{"IPv4Prefixes": [...], "IPv6Prefixes": [...]}` list. Hetzner publishes
 * no list of its own. All `hosting`.
 */
import { parseBgpPrefixList } from './common/bgp-prefix-list.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'hetzner',
  kind: 'provider_ranges',
  description: 'Hetzner prefixes announced by its ASNs (derived from BGP by ip-fetcher; no official list)',
  // No publisher URL: ip-fetcher's hetzner.json (github.com/jonhadfield/cloud-ips) is imported locally.
  urls: [],
  attribution: {
    source: 'ip-fetcher Hetzner prefixes (BGPView / RIPEstat)',
    by: 'jonhadfield/cloud-ips',
    license: 'Apache-2.0 (list); BGPView and RIPEstat terms for the underlying data',
  },
  parse: (text, file) => parseBgpPrefixList(text, file, 'Hetzner', 'hosting'),
};
