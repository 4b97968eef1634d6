import t from 'tap';
import { source } from '../../../builder/sources/digitalocean.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('digitalocean', 'google.csv');

t.test('geofeed excerpt: prefixes only, no location in metadata', async (t) => {
  const result = source.parse(text, 'google.csv');
  t.equal(result.read, 14);
  t.equal(result.records.length, 14);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, undefined);
  t.strictSame(result.records[0], {
    prefix: '5.101.96.0/21',
    provider: 'DigitalOcean',
    category: 'hosting',
    metadata: {},
  });
  t.strictSame(result.records[8], {
    prefix: '2400:6180:0:d0::/64',
    provider: 'DigitalOcean',
    category: 'hosting',
    metadata: {},
  });
  t.ok(
    result.records.every((record) => Object.keys(record.metadata).length === 0),
    'country, region, city and postal code are not kept',
  );
});

t.test('a broken copy', async (t) => {
  const broken = breakText(text, '24.144.68.0/22,', 'Santa Clara,'); // line 4
  const result = source.parse(broken, 'google.csv');
  t.strictSame(result.rejected, [
    { line: 4, reason: 'expected a CIDR (address/length) in column 1, got "Santa Clara"' },
  ]);
  t.equal(result.read, 14);
});
