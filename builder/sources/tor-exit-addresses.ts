/**
 * TorDNSEL exit list (check.torproject.org/exit-addresses): an optional `@type tordnsel 1.0` /
 * `Downloaded <UTC>` header, then blocks of `ExitNode <fingerprint>`, `Published <UTC>`,
 * `LastStatus <UTC>` and one or more `ExitAddress <address> <UTC>`. Each ExitAddress line
 * is a data row and becomes a /32 (/128) `tor_exit` range dated by the line's own time (when
 * TorDNSEL last saw an exit from it). An address listed by two relays is kept once, with the
 * later time (both lines count as read, neither is rejected).
 */
import { forEachLine, quote } from './common/lines.js';
import { checkAddress, ProviderRangeCollector } from './common/provider-ranges.js';
import { utcTimestamp } from './common/timestamps.js';
import { TOR_EXIT_CHURN, TOR_EXIT_METADATA, TOR_PROVIDER } from './common/tor.js';
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
    // `ExitAddress <address> <UTC>`: when TorDNSEL last saw the relay exit from the address.
    const gap = rest.indexOf(' ');
    const address = gap < 0 ? rest : rest.slice(0, gap);
    const seenAt = gap < 0 ? null : utcTimestamp(rest.slice(gap + 1));
    if (gap >= 0 && seenAt === null) {
      collector.reject(
        lineNumber,
        `expected "ExitAddress <address> <YYYY-MM-DD HH:MM:SS>", got ${quote(trimmed)}`,
      );
      return;
    }
    collector.add(
      checkAddress(address, 'ExitAddress'),
      'tor_exit',
      TOR_EXIT_METADATA,
      lineNumber,
      seenAt ?? undefined,
    );
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
  churn: TOR_EXIT_CHURN,
  parse,
};
