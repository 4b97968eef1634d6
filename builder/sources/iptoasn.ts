/**
 * IPtoASN (iptoasn.com) range → ASN tables ip2asn-v4/v6/combined.tsv: no header, five
 * TAB-separated columns `range_start range_end AS_number country_code AS_description`.
 * Unrouted space is `0 None Not routed` (asn 0, country and description null); `Unknown`
 * country is null too.
 */
import { checkAsnRange } from './common/asn-ranges.js';
import { forEachLine } from './common/lines.js';
import type { AsnRangeRecord, ParseResult, Rejected, SourceDefinition } from './types.js';

function parse(text: string, _file: string): ParseResult<AsnRangeRecord> {
  const records: AsnRangeRecord[] = [];
  const rejected: Rejected[] = [];
  let read = 0;
  forEachLine(text, (line, lineNumber) => {
    if (line.trim() === '') return;
    read++;
    const columns = line.split('\t');
    if (columns.length !== 5) {
      rejected.push({
        line: lineNumber,
        reason: `expected 5 TAB-separated columns (range_start, range_end, AS_number, country_code, AS_description), got ${columns.length}`,
      });
      return;
    }
    const [first, last, asn, country, description] = columns as [string, string, string, string, string];
    const checked = checkAsnRange(first, last, asn, country, description);
    if (checked.ok) records.push(checked.record);
    else rejected.push({ line: lineNumber, reason: checked.reason });
  });
  return { records, rejected, read };
}

export const source: SourceDefinition<'asn_mapping'> = {
  name: 'iptoasn',
  kind: 'asn_mapping',
  description: 'IPtoASN range to AS number, registry country and AS description (ip2asn-v4/v6 TSV)',
  urls: ['https://iptoasn.com/data/ip2asn-v4.tsv.gz', 'https://iptoasn.com/data/ip2asn-v6.tsv.gz'],
  attribution: { source: 'IPtoASN', by: 'iptoasn.com', license: 'PDDL v1.0' },
  parse,
};
