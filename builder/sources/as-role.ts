/**
 * AS network roles, imported from a local CSV `asn,network_role` (header optional, `AS174` or
 * `174`, role one of the API's network roles, docs/api.md#get-v1ipip). No publisher: urls [].
 */
import { NETWORK_ROLES } from '../../shared/vocabulary.js';
import { parseAsnValueCsv } from './common/asn-csv.js';
import type { AsRoleRecord, ParseResult, SourceDefinition } from './types.js';

function parse(text: string, _file: string): ParseResult<AsRoleRecord> {
  const result = parseAsnValueCsv(text, { header: ['asn', 'network_role'], values: NETWORK_ROLES });
  return { ...result, records: result.records.map(({ asn, value }) => ({ asn, networkRole: value })) };
}

export const source: SourceDefinition<'as_role'> = {
  name: 'as-role',
  kind: 'as_role',
  description: 'AS network roles (CSV asn,network_role), imported from a local file',
  urls: [],
  attribution: {
    source: 'AS network roles',
    by: 'imported third-party AS metadata',
    license: 'see the imported file',
  },
  parse,
};
