import t from 'tap';
import { source } from '../../../builder/sources/ovh.js';
import { fixture } from '../../helpers/feed-fixture.js';

t.test('derived BGP list', async (t) => {
  const result = source.parse(fixture('ovh', 'ovh.json'), 'ovh.json');
  t.equal(result.read, 11);
  t.equal(result.records.length, 11);
  t.strictSame(result.rejected, []);
  t.strictSame(result.records[0], {
    prefix: '137.74.0.0/16',
    provider: 'OVHcloud',
    category: 'hosting',
    metadata: {},
  });
  t.strictSame(result.records[10], {
    prefix: '2001:41d0::/32',
    provider: 'OVHcloud',
    category: 'hosting',
    metadata: {},
  });
});
