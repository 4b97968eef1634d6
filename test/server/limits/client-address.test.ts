/** The address the refused-key throttle counts per (docs/api.md#authentication). */
import t from 'tap';
import { clientAddressKey, trustProxyOption } from '../../../server/limits/client-address.js';

t.test('IPv4 as is, IPv4-mapped as IPv4, IPv6 per /64', async (t) => {
  const cases: Array<[string | undefined, string]> = [
    ['192.0.2.1', '192.0.2.1'],
    ['::ffff:192.0.2.1', '192.0.2.1'],
    ['::FFFF:c000:201', '192.0.2.1'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::9', '2001:db8:1:2::/64'],
    ['2001:DB8:1:2:ffff::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    [undefined, 'unknown'],
  ];
  for (const [input, expected] of cases) t.equal(clientAddressKey(input), expected, String(input));
  t.equal(
    clientAddressKey('2001:db8:1:2::a'),
    clientAddressKey('2001:db8:1:2:ffff:ffff:ffff:ffff'),
    'same /64',
  );
  t.not(clientAddressKey('2001:db8:1:2::a'), clientAddressKey('2001:db8:1:3::a'), 'another /64');
});

t.test('TRUST_PROXY: empty is none, else a list', async (t) => {
  t.equal(trustProxyOption(''), false);
  t.same(trustProxyOption('10.0.0.1, loopback,'), ['10.0.0.1', 'loopback']);
});
