/**
 * Apple iCloud Private Relay egress ranges. Accepts Apple's egress-ip-ranges.csv
 * (`prefix,country,region,city,postal`, no header) and CIDR-only lists derived from it
 * (one CIDR per line). All `relay`; only the prefix is read (no geolocation), metadata {}.
 */
import { parseCidrLines } from './common/cidr-lines.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'apple-private-relay',
  kind: 'provider_ranges',
  description: 'Apple iCloud Private Relay egress IP ranges (location columns not used)',
  urls: ['https://mask-api.icloud.com/egress-ip-ranges.csv'],
  attribution: { source: 'iCloud Private Relay egress IP ranges', by: 'Apple', license: 'no license stated' },
  parse: (text, file) =>
    parseCidrLines(text, file, {
      provider: 'Apple iCloud Private Relay',
      category: 'relay',
      metadata: {},
      columns: 'first-column',
    }),
};
