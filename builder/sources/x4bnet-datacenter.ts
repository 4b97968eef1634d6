/**
 * X4BNet lists_vpn input/datacenter/ASN.txt: one `AS<number> # comment` per line (space or
 * TAB before the `#`; the comment is optional). Every ASN is `hosting` (an external
 * classification). An ASN listed twice is kept once.
 */
import { AsnRecordCollector } from './common/asn-records.js';
import { parseAsnText } from './common/asn-text.js';
import { forEachLine, isBlankOrComment, quote } from './common/lines.js';
import type { AsCategoryRecord, ParseResult, SourceDefinition } from './types.js';

function parse(text: string, _file: string): ParseResult<AsCategoryRecord> {
  const collector = new AsnRecordCollector<AsCategoryRecord>('category', (record) => record.category);
  forEachLine(text, (line, lineNumber) => {
    if (isBlankOrComment(line)) return;
    const hash = line.indexOf('#');
    const asnText = (hash < 0 ? line : line.slice(0, hash)).trim();
    const asn = /^AS\d+$/i.test(asnText) ? parseAsnText(asnText) : null;
    if (asn === null) {
      collector.reject(
        lineNumber,
        `expected "AS<number>" (1 to 4294967295) before the comment, got ${quote(asnText)}`,
      );
      return;
    }
    collector.add({ asn, category: 'hosting' }, lineNumber);
  });
  return collector.result();
}

export const source: SourceDefinition<'as_category'> = {
  name: 'x4bnet-datacenter',
  kind: 'as_category',
  description: 'X4BNet datacenter/hosting ASN list (lists_vpn input/datacenter/ASN.txt), all as hosting',
  urls: ['https://raw.githubusercontent.com/X4BNet/lists_vpn/main/input/datacenter/ASN.txt'],
  attribution: { source: 'X4BNet lists_vpn datacenter ASNs', by: 'X4BNet', license: 'MIT' },
  parse,
};
