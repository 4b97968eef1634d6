/**
 * Microsoft Azure Service Tags (ServiceTags_Public_YYYYMMDD.json): `{changeNumber, cloud,
 * values: [{name, id, properties: {region, systemService, addressPrefixes[], …}}]}`.
 * One record per (service tag, prefix): the same prefix appears under AzureCloud,
 * AzureCloud.<region> and the service's tags. `service` is the tag name (`Storage.EastUS`,
 * `AzureFrontDoor.Frontend`), because systemService is empty for AzureCloud and Front Door
 * tags; `region` is properties.region, omitted when empty. Tags AzureFrontDoor.* (Azure's
 * CDN, which replaced AzureCDN) are `cdn`; everything else is `cloud`.
 */
import { z } from 'zod';
import type { RangeCategory } from '../../shared/vocabulary.js';
import { JsonLineLocator, parseJsonFeed } from './common/json-feed.js';
import { checkPrefix, ProviderRangeCollector } from './common/provider-ranges.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from './types.js';

const ServiceTags = z.object({
  changeNumber: z.number().optional(),
  cloud: z.string().optional(),
  values: z.array(
    z.object({
      name: z.string(),
      id: z.string().optional(),
      properties: z.object({
        region: z.string().optional(),
        systemService: z.string().optional(),
        addressPrefixes: z.array(z.string()),
      }),
    }),
  ),
});

export function azureCategory(tagName: string): RangeCategory {
  return tagName === 'AzureFrontDoor' ||
    tagName.startsWith('AzureFrontDoor.') ||
    tagName.startsWith('AzureCDN')
    ? 'cdn'
    : 'cloud';
}

function parse(text: string, file: string): ParseResult<ProviderRangeRecord> {
  const data = parseJsonFeed(text, file, ServiceTags, 'Azure Service Tags');
  const locate = new JsonLineLocator(text);
  const collector = new ProviderRangeCollector('Microsoft Azure');
  for (const tag of data.values) {
    const metadata: Record<string, string> = { service: tag.name };
    if (tag.properties.region) metadata.region = tag.properties.region;
    const category = azureCategory(tag.name);
    for (const value of tag.properties.addressPrefixes) {
      collector.add(checkPrefix(value, 'addressPrefixes'), category, metadata, () => locate.lineOf(value));
    }
  }
  return collector.result();
}

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'azure',
  kind: 'provider_ranges',
  description: 'Microsoft Azure public cloud IP ranges by service tag and region (Service Tags)',
  // The weekly file name carries its date (ServiceTags_Public_YYYYMMDD.json) and is linked from
  // https://www.microsoft.com/en-us/download/details.aspx?id=56519 : download it and import it locally.
  urls: [],
  attribution: {
    source: 'Azure IP Ranges and Service Tags – Public Cloud',
    by: 'Microsoft',
    license: 'Microsoft download terms (https://www.microsoft.com/en-us/download/details.aspx?id=56519)',
  },
  parse,
};
