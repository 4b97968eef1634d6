import t from 'tap';
import { source } from '../../../builder/sources/hetzner.js';
import { breakText, fixture } from '../../helpers/feed-fixture.js';

const text = fixture('hetzner', 'hetzner.json');

t.test('derived BGP list', async (t) => {
  const result = source.parse(text, 'hetzner.json');
  t.equal(result.read, 11);
  t.equal(result.records.length, 11);
  t.strictSame(result.rejected, []);
  t.strictSame(result.records[0], {
    prefix: '185.189.228.0/24',
    provider: 'Hetzner',
    category: 'hosting',
    metadata: {},
  });
  t.strictSame(result.records[9], {
    prefix: '2a01:4f8::/32',
    provider: 'Hetzner',
    category: 'hosting',
    metadata: {},
  });
});

t.test('a broken copy', async (t) => {
  const result = source.parse(breakText(text, '"2a06:be80::/29"', '"2a06:be80::/29x"'), 'hetzner.json');
  t.strictSame(result.rejected, [
    { line: 1, reason: 'expected an IPv6 CIDR (address/length) in IPv6Prefixes, got "2a06:be80::/29x"' },
  ]);
  t.throws(() => source.parse('{"IPv4Prefixes": "1.2.3.0/24", "IPv6Prefixes": []}', 'hetzner.json'), {
    message: /^hetzner\.json: not in the Hetzner BGP prefix list shape: IPv4Prefixes: /,
  });
});
