/**
 * Tor bulk exit list (check.torproject.org/torbulkexitlist): one exit address per line.
 * Each becomes a /32 (/128) `tor_exit` range; an address listed twice is kept once.
 */
import { forEachLine, isBlankOrComment } from './common/lines.js';
import { checkAddress, ProviderRangeCollector } from './common/provider-ranges.js';
import { TOR_EXIT_CHURN, TOR_EXIT_METADATA, TOR_PROVIDER } from './common/tor.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from './types.js';

function parse(text: string, _file: string): ParseResult<ProviderRangeRecord> {
  const collector = new ProviderRangeCollector(TOR_PROVIDER);
  forEachLine(text, (line, lineNumber) => {
    if (isBlankOrComment(line)) return;
    collector.add(
      checkAddress(line.trim(), 'the line (one address per line)'),
      'tor_exit',
      TOR_EXIT_METADATA,
      lineNumber,
    );
  });
  return collector.result();
}

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'tor-bulk-exit',
  kind: 'provider_ranges',
  description: 'Tor bulk exit list (torbulkexitlist), one /32 per address',
  urls: ['https://check.torproject.org/torbulkexitlist'],
  attribution: { source: 'Tor bulk exit list', by: 'The Tor Project', license: 'no license stated' },
  churn: TOR_EXIT_CHURN,
  parse,
};
