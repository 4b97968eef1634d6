/**
 * sapics ip-location-db ASN tables asn-ipv4.csv / asn-ipv6.csv: no header, four columns
 * `ip_range_start,ip_range_end,as_number,as_organization`, the organization quoted when it
 * holds a comma (`"Cloudflare, Inc."`, `"LLC ""SPUTNIK"""`). No country column: null.
 */
import { checkAsnRange } from './common/asn-ranges.js';
import { splitCsvLine } from './common/csv.js';
import { forEachLine, quote } from './common/lines.js';
import type { AsnRangeRecord, ParseResult, Rejected, SourceDefinition } from './types.js';

function parse(text: string, _file: string): ParseResult<AsnRangeRecord> {
  const records: AsnRangeRecord[] = [];
  const rejected: Rejected[] = [];
  let read = 0;
  forEachLine(text, (line, lineNumber) => {
    if (line.trim() === '') return;
    read++;
    const columns = splitCsvLine(line);
    if (columns === null) {
      rejected.push({
        line: lineNumber,
        reason: `expected a CSV line with balanced quotes, got ${quote(line)}`,
      });
      return;
    }
    if (columns.length !== 4) {
      rejected.push({
        line: lineNumber,
        reason: `expected 4 CSV columns (ip_range_start, ip_range_end, as_number, as_organization), got ${columns.length}`,
      });
      return;
    }
    const [first, last, asn, organization] = columns as [string, string, string, string];
    const checked = checkAsnRange(first, last, asn, undefined, organization);
    if (checked.ok) records.push(checked.record);
    else rejected.push({ line: lineNumber, reason: checked.reason });
  });
  return { records, rejected, read };
}

export const source: SourceDefinition<'asn_mapping'> = {
  name: 'ip-location-db',
  kind: 'asn_mapping',
  description:
    'ip-location-db ASN tables (RouteViews, NRO delegations, DB-IP ASN Lite): range to AS number and organization',
  urls: [
    'https://cdn.jsdelivr.net/npm/@ip-location-db/asn/asn-ipv4.csv',
    'https://cdn.jsdelivr.net/npm/@ip-location-db/asn/asn-ipv6.csv',
  ],
  attribution: {
    source: 'ip-location-db ASN',
    by: 'sapics/ip-location-db, from RouteViews, NRO and DB-IP (IP Geolocation by DB-IP, https://db-ip.com)',
    license: 'CC BY 4.0',
  },
  parse,
};
