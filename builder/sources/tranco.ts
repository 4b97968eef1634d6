/**
 * Tranco top sites list top-1m.csv: `rank,domain` per line, no header. The domain is
 * normalised like an API parameter (shared/domain.ts); one that is not a valid host name is
 * a rejected row. A domain that appears twice (after normalisation) keeps its first (best)
 * rank; the repeat counts as read, not rejected. Tranco serves the list as a zip
 * (https://tranco-list.eu/top-1m.csv.zip): unzip it and import top-1m.csv locally.
 */
import { isNormalizedDomain, normalizeDomain, type NormalizedDomain } from '../../shared/domain.js';
import { forEachLine, quote } from './common/lines.js';
import type { ParseResult, Rejected, SeedRecord, SourceDefinition } from './types.js';

const RANK_RE = /^[1-9]\d{0,8}$/;

function parse(text: string, _file: string): ParseResult<SeedRecord> {
  const records: SeedRecord[] = [];
  const rejected: Rejected[] = [];
  const seen = new Set<string>();
  let read = 0;
  forEachLine(text, (line, lineNumber) => {
    if (line.trim() === '') return;
    read++;
    const comma = line.indexOf(',');
    if (comma < 0 || line.indexOf(',', comma + 1) >= 0) {
      rejected.push({ line: lineNumber, reason: `expected 2 CSV columns (rank,domain), got ${quote(line)}` });
      return;
    }
    const rankText = line.slice(0, comma);
    if (!RANK_RE.test(rankText)) {
      rejected.push({
        line: lineNumber,
        reason: `expected a positive rank in column 1, got ${quote(rankText)}`,
      });
      return;
    }
    const text = line.slice(comma + 1);
    const normalized: NormalizedDomain = isNormalizedDomain(text)
      ? { ok: true, domain: text }
      : normalizeDomain(text);
    if (!normalized.ok) {
      rejected.push({ line: lineNumber, reason: `expected a domain in column 2: ${normalized.reason}` });
      return;
    }
    const known = seen.size;
    seen.add(normalized.domain);
    if (seen.size === known) return;
    records.push({ rank: Number(rankText), domain: normalized.domain });
  });
  return { records, rejected, read };
}

export const source: SourceDefinition<'seed'> = {
  name: 'tranco',
  kind: 'seed',
  description: 'Tranco top 1M registered domains (rank,domain), the seed list of resolved names',
  // Published as a zip (https://tranco-list.eu/top-1m.csv.zip): imported locally after unzipping.
  urls: [],
  attribution: {
    source: 'Tranco list',
    by: 'Le Pochat et al., https://tranco-list.eu',
    license: 'see https://tranco-list.eu (terms of use)',
  },
  parse,
};
