import t from 'tap';
import { source } from '../../../builder/sources/apple-private-relay.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const v4 = fixture('apple-private-relay', 'egress-ipv4-cidrs.txt');
const v6 = fixture('apple-private-relay', 'egress-ipv6-cidrs-merged.txt');
const relay = (prefix: string) => ({
  prefix,
  provider: 'Apple iCloud Private Relay',
  category: 'relay',
  metadata: {},
});

t.test('CIDR-only lists', async (t) => {
  const result4 = source.parse(v4, 'egress-ipv4-cidrs.txt');
  t.equal(result4.read, 10);
  t.strictSame(result4.rejected, []);
  t.strictSame(result4.records[0], relay('104.28.28.0/32'));
  t.strictSame(result4.records[9], relay('172.226.226.36/31'));
  const result6 = source.parse(v6, 'egress-ipv6-cidrs-merged.txt');
  t.equal(result6.records.length, 5);
  t.strictSame(result6.records[0], relay('2a02:26f7:b00a:4000::/64'));
});

t.test("Apple's original 5-column CSV: location columns are not kept", async (t) => {
  // The original egress-ip-ranges.csv was not obtainable; these rows follow its published
  // layout `prefix,country,region,city,postal` with prefixes from the real derived list.
  const csv = '104.28.28.0/32,US,US-CA,Los Angeles,\n2a02:26f7:b00a:4000::/64,DE,DE-BE,Berlin,\n';
  const result = source.parse(csv, 'egress-ip-ranges.csv');
  t.strictSame(result.records, [relay('104.28.28.0/32'), relay('2a02:26f7:b00a:4000::/64')]);
  t.strictSame(result.rejected, []);
});

t.test('a broken copy', async (t) => {
  const result = source.parse(breakText(v4, '104.28.28.3/32', '104.28.28.3/32/1'), 'egress-ipv4-cidrs.txt');
  t.strictSame(result.rejected, [
    { line: 4, reason: 'expected a CIDR (address/length) in column 1, got "104.28.28.3/32/1"' },
  ]);
});
