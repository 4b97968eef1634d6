import t from 'tap';
import { source } from '../../../builder/sources/oracle.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('oracle', 'public_ip_ranges.json');

t.test('excerpt: region, and tags joined as service', async (t) => {
  const result = source.parse(text, 'public_ip_ranges.json');
  t.equal(result.read, 12);
  t.equal(result.records.length, 12);
  t.strictSame(result.rejected, []);
  t.equal(result.publishedAt, '2026-07-27T06:55:33Z');
  t.strictSame(result.records[0], {
    prefix: '40.233.0.0/19',
    provider: 'Oracle Cloud',
    category: 'cloud',
    metadata: { region: 'mx-monterrey-1', service: 'OCI' },
  });
  t.strictSame(result.records[4], {
    prefix: '134.70.200.0/23',
    provider: 'Oracle Cloud',
    category: 'cloud',
    metadata: { region: 'mx-monterrey-1', service: 'OSN,OBJECT_STORAGE' },
  });
  t.strictSame(result.records[6]?.metadata, { region: 'us-ashburn-1', service: 'OCI' });
});

t.test('a broken copy', async (t) => {
  const broken = breakText(text, '"139.177.96.0/21"', '"139.177.96.0/21 "'); // line 14
  const result = source.parse(broken, 'public_ip_ranges.json');
  t.equal(result.read, 12);
  t.strictSame(result.rejected, [
    { line: 14, reason: 'expected a CIDR (address/length) in cidr, got "139.177.96.0/21 "' },
  ]);
});

t.test('an entry without tags has no service key', async (t) => {
  const broken = breakText(
    text,
    '"tags": [\n                        "OCI"\n                    ]',
    '"tags": []',
  );
  const result = source.parse(broken, 'public_ip_ranges.json');
  t.strictSame(result.records[0]?.metadata, { region: 'mx-monterrey-1' });
});
