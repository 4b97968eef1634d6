/** ip-fetcher's derived BGP lists `{"IPv4Prefixes": [...], "IPv6Prefixes": [...]}` (Hetzner, OVH). */
import { z } from 'zod';
import type { RangeCategory } from '../../../shared/vocabulary.js';
import type { ParseResult, ProviderRangeRecord } from '../types.js';
import { JsonLineLocator, parseJsonFeed } from './json-feed.js';
import { checkPrefix, ProviderRangeCollector } from './provider-ranges.js';

const BgpPrefixList = z.object({
  IPv4Prefixes: z.array(z.string()),
  IPv6Prefixes: z.array(z.string()),
});

export function parseBgpPrefixList(
  text: string,
  file: string,
  provider: string,
  category: RangeCategory,
): ParseResult<ProviderRangeRecord> {
  const data = parseJsonFeed(text, file, BgpPrefixList, `${provider} BGP prefix list`);
  const locate = new JsonLineLocator(text);
  const collector = new ProviderRangeCollector(provider);
  for (const [values, field, family] of [
    [data.IPv4Prefixes, 'IPv4Prefixes', 4],
    [data.IPv6Prefixes, 'IPv6Prefixes', 6],
  ] as const) {
    for (const value of values) {
      collector.add(checkPrefix(value, field, family), category, {}, () => locate.lineOf(value));
    }
  }
  return collector.result();
}
