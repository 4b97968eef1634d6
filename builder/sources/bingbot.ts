/**
 * Bingbot ranges. Accepts Bing's bingbot.json (`{creationTime, prefixes: [{ipv4Prefix}]}`, the
 * Google shape) and a plain list of CIDRs, one per line (as derived from it by mirrors). A
 * file whose first non-blank character is `{` is read as JSON. All `crawler`.
 */
import { parseCidrLines } from './common/cidr-lines.js';
import { parseGooglePrefixList } from './common/google-prefix-list.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from './types.js';

const PROVIDER = 'Microsoft';
const METADATA = { operator: 'Microsoft', bot: 'Bingbot' };

function parse(text: string, file: string): ParseResult<ProviderRangeRecord> {
  if (text.trimStart().startsWith('{')) {
    return parseGooglePrefixList(text, file, {
      formatName: 'Bing bingbot.json',
      provider: PROVIDER,
      category: 'crawler',
      metadataFor: () => METADATA,
    });
  }
  return parseCidrLines(text, file, {
    provider: PROVIDER,
    category: 'crawler',
    metadata: METADATA,
    columns: 'single',
  });
}

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'bingbot',
  kind: 'provider_ranges',
  description: 'Bingbot crawler IP ranges (bingbot.json, or a plain CIDR list)',
  urls: ['https://www.bing.com/toolbox/bingbot.json'],
  attribution: { source: 'Bingbot IP ranges', by: 'Microsoft', license: 'no license stated' },
  parse,
};
