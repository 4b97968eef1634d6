/**
 * Google Cloud cloud.json: `{syncToken, creationTime, prefixes: [{ipv4Prefix | ipv6Prefix,
 * service, scope}]}`. All `cloud`; metadata `region` = scope, `service` as published.
 */
import { parseGooglePrefixList } from './common/google-prefix-list.js';
import type { SourceDefinition } from './types.js';

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'google-cloud',
  kind: 'provider_ranges',
  description: 'Google Cloud customer external IP ranges by region (cloud.json)',
  urls: ['https://www.gstatic.com/ipranges/cloud.json'],
  attribution: { source: 'Google Cloud IP ranges', by: 'Google', license: 'no license stated' },
  parse: (text, file) =>
    parseGooglePrefixList(text, file, {
      formatName: 'Google Cloud cloud.json',
      provider: 'Google Cloud',
      category: 'cloud',
      metadataFor(item) {
        const metadata: Record<string, string> = {};
        if (item.scope) metadata.region = item.scope;
        if (item.service) metadata.service = item.service;
        return metadata;
      },
    }),
};
