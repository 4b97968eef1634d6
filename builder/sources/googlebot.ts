/** Google common crawlers (Googlebot): `{creationTime, prefixes: [{ipv4Prefix | ipv6Prefix}]}`. `crawler`. */
import { parseGooglePrefixList } from './common/google-prefix-list.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'googlebot',
  kind: 'provider_ranges',
  description: 'Google common crawler (Googlebot) IP ranges',
  urls: ['https://developers.google.com/static/crawling/ipranges/common-crawlers.json'],
  attribution: { source: 'Googlebot IP ranges', by: 'Google', license: 'no license stated' },
  parse: (text, file) =>
    parseGooglePrefixList(text, file, {
      formatName: 'Google crawler ranges (common-crawlers.json)',
      provider: 'Google',
      category: 'crawler',
      metadataFor: () => ({ operator: 'Google', bot: 'Googlebot' }),
    }),
};
