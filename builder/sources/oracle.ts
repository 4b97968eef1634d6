/**
 * Oracle Cloud Infrastructure public_ip_ranges.json: `{last_updated_timestamp, regions:
 * [{region, cidrs: [{cidr, tags[]}]}]}`. All `cloud`; metadata `region`, and `service` = the
 * tags joined by "," (`OSN,OBJECT_STORAGE`), omitted when there are none.
 */
import { z } from 'zod';
import { feedTimestamp, JsonLineLocator, parseJsonFeed } from './common/json-feed.js';
import { checkPrefix, ProviderRangeCollector } from './common/provider-ranges.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from './types.js';

const PublicIpRanges = z.object({
  last_updated_timestamp: z.string().optional(),
  regions: z.array(
    z.object({
      region: z.string(),
      cidrs: z.array(z.object({ cidr: z.string(), tags: z.array(z.string()).optional() })),
    }),
  ),
});

function parse(text: string, file: string): ParseResult<ProviderRangeRecord> {
  const data = parseJsonFeed(text, file, PublicIpRanges, 'Oracle Cloud public_ip_ranges.json');
  const locate = new JsonLineLocator(text);
  const collector = new ProviderRangeCollector('Oracle Cloud');
  for (const region of data.regions) {
    for (const entry of region.cidrs) {
      const metadata: Record<string, string> = {};
      if (region.region) metadata.region = region.region;
      if (entry.tags && entry.tags.length > 0) metadata.service = entry.tags.join(',');
      collector.add(checkPrefix(entry.cidr, 'cidr'), 'cloud', metadata, () => locate.lineOf(entry.cidr));
    }
  }
  return collector.result(feedTimestamp(data.last_updated_timestamp, file, 'last_updated_timestamp'));
}

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'oracle',
  kind: 'provider_ranges',
  description: 'Oracle Cloud Infrastructure public IP ranges by region and tag',
  urls: ['https://docs.oracle.com/iaas/tools/public_ip_ranges.json'],
  attribution: { source: 'OCI public IP ranges', by: 'Oracle', license: 'no license stated' },
  parse,
};
