/**
 * Our two-column AS classification CSVs (`asn,category`, `asn,network_role`): an optional
 * header line, `#` comments and blank lines skipped, the AS number as `13335` or `AS13335`.
 */
import type { ParseResult } from '../types.js';
import { AsnRecordCollector } from './asn-records.js';
import { parseAsnText } from './asn-text.js';
import { splitCsvLine } from './csv.js';
import { forEachLine, isBlankOrComment, quote } from './lines.js';

export interface AsnValueCsvOptions<V extends string> {
  /** Column names, e.g. `['asn', 'category']`; a first data line equal to them is the header. */
  header: readonly [string, string];
  /** The allowed values of column 2. */
  values: readonly V[];
}

export function parseAsnValueCsv<V extends string>(
  text: string,
  options: AsnValueCsvOptions<V>,
): ParseResult<{ asn: number; value: V }> {
  const allowed = new Set<string>(options.values);
  const [asnColumn, valueColumn] = options.header;
  const collector = new AsnRecordCollector<{ asn: number; value: V }>(valueColumn, (record) => record.value);
  let firstDataLine = true;
  forEachLine(text, (line, lineNumber) => {
    if (isBlankOrComment(line)) return;
    const fields = splitCsvLine(line)?.map((field) => field.trim());
    const isFirst = firstDataLine;
    firstDataLine = false;
    if (isFirst && fields?.[0]?.toLowerCase() === asnColumn && fields[1]?.toLowerCase() === valueColumn)
      return;
    if (!fields || fields.length !== 2) {
      collector.reject(
        lineNumber,
        `expected 2 CSV columns (${asnColumn},${valueColumn}), got ${fields ? fields.length : 'unbalanced quotes'}: ${quote(line)}`,
      );
      return;
    }
    const [asnText, value] = fields as [string, string];
    const asn = parseAsnText(asnText);
    if (asn === null) {
      collector.reject(
        lineNumber,
        `expected an AS number (1 to 4294967295, "AS" optional) in column 1, got ${quote(asnText)}`,
      );
      return;
    }
    if (!allowed.has(value)) {
      collector.reject(
        lineNumber,
        `expected a ${valueColumn} (${options.values.join(', ')}) in column 2, got ${quote(value)}`,
      );
      return;
    }
    collector.add({ asn, value: value as V }, lineNumber);
  });
  return collector.result();
}
