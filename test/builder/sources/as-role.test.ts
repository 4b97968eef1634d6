import t from 'tap';
import { source } from '../../../builder/sources/as-role.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('as-role', 'as-role.csv');

t.test('hand-written example without a header', async (t) => {
  const result = source.parse(text, 'as-role.csv');
  t.equal(result.read, 9);
  t.strictSame(result.rejected, []);
  t.strictSame(result.records[0], { asn: 3356, networkRole: 'tier1_transit' });
  t.strictSame(result.records[3], { asn: 6939, networkRole: 'major_transit' });
  t.strictSame(result.records[8], { asn: 32934, networkRole: 'content_network' });
});

t.test('with a header; a broken copy', async (t) => {
  const broken = `asn,network_role\n${breakText(text, '6939,major_transit', '6939,transit')}`;
  const result = source.parse(broken, 'as-role.csv');
  t.equal(result.read, 9);
  t.strictSame(result.rejected, [
    {
      line: 6,
      reason:
        'expected a network_role (tier1_transit, major_transit, midsize_transit, access_provider, content_network, stub) in column 2, got "transit"',
    },
  ]);
});
