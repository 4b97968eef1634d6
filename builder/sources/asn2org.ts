/**
 * Vincent Bernat's asn2org asns.csv: header `"asn","name","source"`, then one AS per line,
 * name quoted (`""` for a quote inside). The source column (PeeringDB, RIPE, DB-IP, …) is
 * not kept. A header is recognised but not required.
 */
import { AsnRecordCollector } from './common/asn-records.js';
import { parseAsnText } from './common/asn-text.js';
import { splitCsvLine } from './common/csv.js';
import { forEachLine, quote } from './common/lines.js';
import type { AsNameRecord, ParseResult, SourceDefinition } from './types.js';

function parse(text: string, _file: string): ParseResult<AsNameRecord> {
  const collector = new AsnRecordCollector<AsNameRecord>('name', (record) => record.name);
  let firstDataLine = true;
  forEachLine(text, (line, lineNumber) => {
    if (line.trim() === '') return;
    const fields = splitCsvLine(line);
    const isFirst = firstDataLine;
    firstDataLine = false;
    if (isFirst && fields?.[0] === 'asn' && fields[1] === 'name') return;
    if (!fields || fields.length !== 3) {
      collector.reject(
        lineNumber,
        `expected 3 CSV columns ("asn","name","source"), got ${fields ? fields.length : 'unbalanced quotes'}: ${quote(line)}`,
      );
      return;
    }
    const [asnText, nameText] = fields as [string, string, string];
    const asn = parseAsnText(asnText.trim());
    if (asn === null) {
      collector.reject(
        lineNumber,
        `expected an AS number (1 to 4294967295) in column 1, got ${quote(asnText)}`,
      );
      return;
    }
    const name = nameText.trim();
    if (name === '') {
      collector.reject(lineNumber, `expected a non-empty AS name in column 2 for AS${asn}`);
      return;
    }
    collector.add({ asn, name }, lineNumber);
  });
  return collector.result();
}

export const source: SourceDefinition<'as_names'> = {
  name: 'asn2org',
  kind: 'as_names',
  description: 'AS number to organization name (asn2org: PeeringDB, then RIR databases, then DB-IP)',
  urls: ['https://vincentbernat.github.io/asn2org/asns.csv'],
  attribution: {
    source: 'asn2org',
    by: 'Vincent Bernat, from PeeringDB, the RIR databases and DB-IP',
    license: 'CC0-1.0 (list); PeeringDB AUP, RIR terms and DB-IP CC BY 4.0 for the underlying data',
  },
  parse,
};
