/**
 * TorDNSEL exit list (check.torproject.org/exit-addresses): an optional `@type tordnsel 1.0` /
 * `Downloaded <UTC>` header, then blocks of `ExitNode <fingerprint>`, `Published <UTC>`,
 * `LastStatus <UTC>` and one or more `ExitAddress <address> <UTC>`. Each ExitAddress line
 * is a data row and becomes a /32 (/128) `tor_exit` range. An address listed by two relays
 * is kept once (both lines count as read, neither is rejected).
 */
import { forEachLine, quote } from './common/lines.js';
import { checkAddress, ProviderRangeCollector } from './common/provider-ranges.js';
import { utcTimestamp } from './common/timestamps.js';
import { TOR_EXIT_METADATA, TOR_PROVIDER } from './common/tor.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from './types.js';

const BLOCK_KEYWORDS = new Set(['ExitNode', 'Published', 'LastStatus']);

function parse(text: string, file: string): ParseResult<ProviderRangeRecord> {
  const collector = new ProviderRangeCollector(TOR_PROVIDER);
  let publishedAt: string | undefined;
  let recognised = false;
  let dataLines = 0;
  forEachLine(text, (line, lineNumber) => {
    const trimmed = line.trim();
    if (trimmed === '') return;
    const space = trimmed.indexOf(' ');
    const keyword = space < 0 ? trimmed : trimmed.slice(0, space);
    const rest = space < 0 ? '' : trimmed.slice(space + 1).trim();
    if (keyword === '@type') return;
    if (keyword === 'Downloaded') {
      publishedAt = utcTimestamp(rest) ?? publishedAt;
      return;
    }
    dataLines++;
    if (BLOCK_KEYWORDS.has(keyword)) {
      recognised = true;
      return;
    }
    if (keyword !== 'ExitAddress') {
      collector.reject(
        lineNumber,
        `expected a line starting with ExitNode, Published, LastStatus or ExitAddress, got ${quote(trimmed)}`,
      );
      return;
    }
    recognised = true;
    const address = rest.split(' ')[0] ?? '';
    collector.add(checkAddress(address, 'ExitAddress'), 'tor_exit', TOR_EXIT_METADATA, lineNumber);
  });
  if (dataLines > 0 && !recognised) {
    throw new Error(
      `${file}: expected a TorDNSEL exit list (ExitNode / ExitAddress lines), found none; for one address per line use the tor-bulk-exit source`,
    );
  }
  return collector.result(publishedAt);
}

export const source: SourceDefinition<'provider_ranges'> = {
  name: 'tor-exit-addresses',
  kind: 'provider_ranges',
  description: 'Tor exit addresses observed by TorDNSEL (exit-addresses), one /32 per address',
  urls: ['https://check.torproject.org/exit-addresses'],
  attribution: { source: 'TorDNSEL exit list', by: 'The Tor Project', license: 'no license stated' },
  parse,
};
