/**
 * Our own AS classification, imported from a local CSV `asn,category` (header optional, `AS13335`
 * or `13335`, category one of the API's AS categories, docs/api.md#get-v1ipip).
 * No publisher: urls [].
 */
import { AS_CATEGORIES } from '../../shared/vocabulary.js';
import { parseAsnValueCsv } from './common/asn-csv.js';
import type { AsCategoryRecord, ParseResult, SourceDefinition } from './types.js';

function parse(text: string, _file: string): ParseResult<AsCategoryRecord> {
  const result = parseAsnValueCsv(text, { header: ['asn', 'category'], values: AS_CATEGORIES });
  return { ...result, records: result.records.map(({ asn, value }) => ({ asn, category: value })) };
}

export const source: SourceDefinition<'as_category'> = {
  name: 'as-category',
  kind: 'as_category',
  description: 'Our own AS classification (CSV asn,category), imported from a local file',
  urls: [],
  attribution: { source: 'ipscope AS classification', by: 'ipscope', license: 'MIT' },
  parse,
};
