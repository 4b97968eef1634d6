import t from 'tap';
import { source } from '../../../builder/sources/fastly.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('fastly', 'public-ip-list.json');

t.test('complete file', async (t) => {
  const result = source.parse(text, 'public-ip-list.json');
  t.equal(result.read, 21);
  t.equal(result.records.length, 21);
  t.strictSame(result.rejected, []);
  t.strictSame(result.records[0], {
    prefix: '23.235.32.0/20',
    provider: 'Fastly',
    category: 'cdn',
    metadata: {},
  });
  t.strictSame(result.records[20], {
    prefix: '2a04:4e42::/32',
    provider: 'Fastly',
    category: 'cdn',
    metadata: {},
  });
});

t.test('a broken copy: single-line JSON reports line 1', async (t) => {
  const broken = breakText(text, '"2a04:4e40::/32"', '"151.101.0.0/16"');
  const result = source.parse(broken, 'public-ip-list.json');
  t.strictSame(result.rejected, [
    {
      line: 1,
      reason: 'expected an IPv6 CIDR (address/length) in ipv6_addresses, got an IPv4 CIDR "151.101.0.0/16"',
    },
  ]);
  t.throws(() => source.parse('{"addresses": []}', 'public-ip-list.json'), {
    message: /^public-ip-list\.json: not in the Fastly public-ip-list shape: ipv6_addresses: /,
  });
});
