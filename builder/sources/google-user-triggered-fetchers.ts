/** Google user-triggered fetchers: `{creationTime, prefixes: [{ipv4Prefix | ipv6Prefix}]}`. `crawler`. */
import { parseGooglePrefixList } from './common/google-prefix-list.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'google-user-triggered-fetchers',
  kind: 'provider_ranges',
  description: 'Google user-triggered fetcher IP ranges',
  urls: ['https://developers.google.com/static/crawling/ipranges/user-triggered-fetchers.json'],
  attribution: {
    source: 'Google user-triggered fetcher IP ranges',
    by: 'Google',
    license: 'no license stated',
  },
  parse: (text, file) =>
    parseGooglePrefixList(text, file, {
      formatName: 'Google crawler ranges (user-triggered-fetchers.json)',
      provider: 'Google',
      category: 'crawler',
      metadataFor: () => ({ operator: 'Google', bot: 'Google user-triggered fetcher' }),
    }),
};
