/**
 * DigitalOcean's RFC 8805 geofeed `prefix,country,region,city,postal` (no header). All
 * `hosting`. Only the prefix is read: the service offers no geolocation, so metadata is {}.
 */
import { parseCidrLines } from './common/cidr-lines.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'digitalocean',
  kind: 'provider_ranges',
  description: 'DigitalOcean IP ranges, from its self-published geofeed (location columns not used)',
  urls: ['https://digitalocean.com/geo/google.csv'],
  attribution: { source: 'DigitalOcean geofeed', by: 'DigitalOcean', license: 'no license stated' },
  parse: (text, file) =>
    parseCidrLines(text, file, {
      provider: 'DigitalOcean',
      category: 'hosting',
      metadata: {},
      columns: 'first-column',
    }),
};
