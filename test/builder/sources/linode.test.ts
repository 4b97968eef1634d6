import t from 'tap';
import { source } from '../../../builder/sources/linode.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('linode', 'geofeed.csv');

t.test('geofeed excerpt: comments skipped, "Last modified" as publishedAt', async (t) => {
  const result = source.parse(text, 'geofeed.csv');
  t.equal(result.read, 16, '19 lines less 3 comments');
  t.equal(result.records.length, 16);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2025-07-24T10:00:06Z');
  t.strictSame(result.records[0], {
    prefix: '2600:3c00::/32',
    provider: 'Linode',
    category: 'hosting',
    metadata: {},
  });
  t.strictSame(
    result.records[6],
    { prefix: '2600:3c12:b00::/40', provider: 'Linode', category: 'hosting', metadata: {} },
    'published as 2600:3c12:0b00::/40, written canonically',
  );
  t.strictSame(result.records[7], {
    prefix: '72.14.177.0/24',
    provider: 'Linode',
    category: 'hosting',
    metadata: {},
  });
  t.equal(result.records[15]?.prefix, '172.239.31.0/24');
});

t.test('a broken copy: line numbers count the comment lines', async (t) => {
  const broken = breakText(text, '2600:3c0f:3::/48,', '2600:3c0f:3::/129,'); // line 7
  const result = source.parse(broken, 'geofeed.csv');
  t.strictSame(result.rejected, [
    { line: 7, reason: 'expected a CIDR (address/length) in column 1, got "2600:3c0f:3::/129"' },
  ]);
});
