/**
 * AWS ip-ranges.json: `{syncToken, createDate, prefixes: [{ip_prefix, region, service,
 * network_border_group}], ipv6_prefixes: [{ipv6_prefix, …}]}`. One record per (prefix,
 * service) as published, except that the catch-all service AMAZON, which repeats every other
 * service's prefixes, is dropped for a prefix another service lists (read, not kept): the
 * specific service says what the range is, so a CloudFront edge is `cdn` and not also `cloud`
 * (docs/decisions/0014). CLOUDFRONT (edge) and CLOUDFRONT_ORIGIN_FACING (the CloudFront servers
 * that fetch from origins) are `cdn`; every other service is `cloud`.
 */
import { z } from 'zod';
import type { RangeCategory } from '../../shared/vocabulary.js';
import { feedTimestamp, JsonLineLocator, parseJsonFeed } from './common/json-feed.js';
import { checkPrefix, ProviderRangeCollector } from './common/provider-ranges.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from './types.js';

const CDN_SERVICES = new Set(['CLOUDFRONT', 'CLOUDFRONT_ORIGIN_FACING']);
/** The service that lists every AWS range again, under the other services' prefixes too. */
const CATCH_ALL = 'AMAZON';

const Entry = {
  region: z.string(),
  service: z.string(),
  network_border_group: z.string().optional(),
};
const IpRanges = z.object({
  syncToken: z.string().optional(),
  createDate: z.string().optional(),
  prefixes: z.array(z.object({ ip_prefix: z.string(), ...Entry })),
  ipv6_prefixes: z.array(z.object({ ipv6_prefix: z.string(), ...Entry })),
});

export function awsCategory(service: string): RangeCategory {
  return CDN_SERVICES.has(service) ? 'cdn' : 'cloud';
}

function metadataOf(entry: { region: string; service: string; network_border_group?: string | undefined }) {
  const metadata: Record<string, string> = { region: entry.region, service: entry.service };
  if (entry.network_border_group) metadata.network_border_group = entry.network_border_group;
  return metadata;
}

function parse(text: string, file: string): ParseResult<ProviderRangeRecord> {
  const data = parseJsonFeed(text, file, IpRanges, 'AWS ip-ranges.json');
  const locate = new JsonLineLocator(text);
  const collector = new ProviderRangeCollector('AWS');
  const entries = [
    ...data.prefixes.map((e) => ({
      ...e,
      text: e.ip_prefix,
      checked: checkPrefix(e.ip_prefix, 'ip_prefix', 4),
    })),
    ...data.ipv6_prefixes.map((e) => ({
      ...e,
      text: e.ipv6_prefix,
      checked: checkPrefix(e.ipv6_prefix, 'ipv6_prefix', 6),
    })),
  ];
  const specific = new Set<string>();
  for (const e of entries) if (e.checked.ok && e.service !== CATCH_ALL) specific.add(e.checked.prefix);
  for (const e of entries) {
    if (e.service === CATCH_ALL && e.checked.ok && specific.has(e.checked.prefix)) collector.skip();
    else collector.add(e.checked, awsCategory(e.service), metadataOf(e), () => locate.lineOf(e.text));
  }
  return collector.result(feedTimestamp(data.createDate, file, 'createDate'));
}

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'aws',
  kind: 'provider_ranges',
  description: 'Amazon Web Services public IP ranges by service and region (ip-ranges.json)',
  urls: ['https://ip-ranges.amazonaws.com/ip-ranges.json'],
  attribution: {
    source: 'AWS IP address ranges',
    by: 'Amazon Web Services',
    license: 'no license stated; see https://docs.aws.amazon.com/general/latest/gr/aws-ip-ranges.html',
  },
  parse,
};
