/**
 * Linode (Akamai Cloud) RFC 8805 geofeed: `#` comment lines (one says `Last modified: …`),
 * then `prefix,country,region,city,postal`. All `hosting`. Only the prefix is read: the
 * service offers no geolocation, so metadata is {}.
 */
import { parseCidrLines } from './common/cidr-lines.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'linode',
  kind: 'provider_ranges',
  description: 'Linode (Akamai Cloud) IP ranges, from its self-published geofeed (location columns not used)',
  urls: ['https://geoip.linode.com/'],
  attribution: { source: 'Linode geofeed', by: 'Linode (Akamai)', license: 'no license stated' },
  parse: (text, file) =>
    parseCidrLines(text, file, {
      provider: 'Linode',
      category: 'hosting',
      metadata: {},
      columns: 'first-column',
      timestampComment: /^#\s*Last modified:\s*(.+)$/i,
    }),
};
