/** Google special-case crawlers (AdsBot, …): `{creationTime, prefixes: [{ipv4Prefix | ipv6Prefix}]}`. `crawler`. */
import { parseGooglePrefixList } from './common/google-prefix-list.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'google-special-crawlers',
  kind: 'provider_ranges',
  description: 'Google special-case crawler IP ranges',
  urls: ['https://developers.google.com/static/crawling/ipranges/special-crawlers.json'],
  attribution: {
    source: 'Google special-case crawler IP ranges',
    by: 'Google',
    license: 'no license stated',
  },
  parse: (text, file) =>
    parseGooglePrefixList(text, file, {
      formatName: 'Google crawler ranges (special-crawlers.json)',
      provider: 'Google',
      category: 'crawler',
      metadataFor: () => ({ operator: 'Google', bot: 'Google special-case crawler' }),
    }),
};
