/**
 * Google's range-list shape `{creationTime, prefixes: [{ipv4Prefix | ipv6Prefix, service?, scope?}]}`,
 * used by cloud.json, the crawler lists, and also by Bing's bingbot.json.
 */
import { z } from 'zod';
import type { RangeCategory } from '../../../shared/vocabulary.js';
import type { ParseResult, ProviderRangeRecord } from '../types.js';
import { feedTimestamp, JsonLineLocator, parseJsonFeed } from './json-feed.js';
import { checkPrefix, ProviderRangeCollector } from './provider-ranges.js';

const PrefixItem = z
  .object({
    ipv4Prefix: z.string().optional(),
    ipv6Prefix: z.string().optional(),
    service: z.string().optional(),
    scope: z.string().optional(),
  })
  .refine((item) => (item.ipv4Prefix === undefined) !== (item.ipv6Prefix === undefined), {
    message: 'expected exactly one of ipv4Prefix, ipv6Prefix',
  });

const PrefixList = z.object({
  syncToken: z.string().optional(),
  creationTime: z.string().optional(),
  prefixes: z.array(PrefixItem),
});

export type GooglePrefixItem = z.output<typeof PrefixItem>;

export interface GooglePrefixListOptions {
  /** Named in error messages, e.g. `Google cloud.json`. */
  formatName: string;
  provider: string;
  category: RangeCategory;
  metadataFor(item: GooglePrefixItem): Record<string, string>;
}

export function parseGooglePrefixList(
  text: string,
  file: string,
  options: GooglePrefixListOptions,
): ParseResult<ProviderRangeRecord> {
  const data = parseJsonFeed(text, file, PrefixList, options.formatName);
  const locate = new JsonLineLocator(text);
  const collector = new ProviderRangeCollector(options.provider);
  for (const item of data.prefixes) {
    const [value, field, family] =
      item.ipv4Prefix !== undefined
        ? ([item.ipv4Prefix, 'ipv4Prefix', 4] as const)
        : ([item.ipv6Prefix ?? '', 'ipv6Prefix', 6] as const);
    collector.add(checkPrefix(value, field, family), options.category, options.metadataFor(item), () =>
      locate.lineOf(value),
    );
  }
  return collector.result(feedTimestamp(data.creationTime, file, 'creationTime'));
}
