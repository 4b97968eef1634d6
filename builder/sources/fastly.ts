/** Fastly public-ip-list: `{"addresses": [IPv4 CIDRs], "ipv6_addresses": [IPv6 CIDRs]}`. All `cdn`. */
import { z } from 'zod';
import { JsonLineLocator, parseJsonFeed } from './common/json-feed.js';
import { checkPrefix, ProviderRangeCollector } from './common/provider-ranges.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from './types.js';

const PublicIpList = z.object({
  addresses: z.array(z.string()),
  ipv6_addresses: z.array(z.string()),
});

function parse(text: string, file: string): ParseResult<ProviderRangeRecord> {
  const data = parseJsonFeed(text, file, PublicIpList, 'Fastly public-ip-list');
  const locate = new JsonLineLocator(text);
  const collector = new ProviderRangeCollector('Fastly');
  for (const [values, field, family] of [
    [data.addresses, 'addresses', 4],
    [data.ipv6_addresses, 'ipv6_addresses', 6],
  ] as const) {
    for (const value of values) {
      collector.add(checkPrefix(value, field, family), 'cdn', {}, () => locate.lineOf(value));
    }
  }
  return collector.result();
}

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'fastly',
  kind: 'provider_ranges',
  description: 'Fastly edge and public IP ranges (public-ip-list)',
  urls: ['https://api.fastly.com/public-ip-list'],
  attribution: { source: 'Fastly public IP list', by: 'Fastly', license: 'no license stated' },
  parse,
};
