import t from 'tap';
import { findAsnBogon, findIpBogon, parseCsv } from '../../shared/bogons.js';
import { parseIp } from '../../shared/ip.js';

function bogonOf(text: string) {
  const ip = parseIp(text);
  if (!ip) throw new Error(`test bug: ${text} is not an address`);
  return findIpBogon(ip);
}

t.test('parseCsv reads RFC 4180 quoting as IANA writes it', async (t) => {
  const text =
    'a,b,c\r\n' +
    '"192.0.0.170/32, 192.0.0.171/32",NAT64,"[RFC8880][RFC7050], Section 2.2"\r\n' +
    '"""This network""",x,"[RFC8190]\n        [RFC919], Section 7"\r\n' +
    ',,\r\n' +
    'last,row,no newline';
  t.strictSame(parseCsv(text), [
    ['a', 'b', 'c'],
    ['192.0.0.170/32, 192.0.0.171/32', 'NAT64', '[RFC8880][RFC7050], Section 2.2'],
    ['"This network"', 'x', '[RFC8190]\n        [RFC919], Section 7'],
    ['', '', ''],
    ['last', 'row', 'no newline'],
  ]);
  t.throws(() => parseCsv('a,"unterminated\r\n'), /ends inside a quoted field/);
});

t.test('IPv4 bogons', async (t) => {
  const cases: [string, { prefix: string; name: string; rfc: string } | null][] = [
    ['10.1.2.3', { prefix: '10.0.0.0/8', name: 'Private-Use', rfc: 'RFC 1918' }],
    ['172.31.255.255', { prefix: '172.16.0.0/12', name: 'Private-Use', rfc: 'RFC 1918' }],
    ['192.168.0.1', { prefix: '192.168.0.0/16', name: 'Private-Use', rfc: 'RFC 1918' }],
    ['100.64.1.1', { prefix: '100.64.0.0/10', name: 'Shared Address Space', rfc: 'RFC 6598' }],
    ['192.0.2.1', { prefix: '192.0.2.0/24', name: 'Documentation (TEST-NET-1)', rfc: 'RFC 5737' }],
    ['198.51.100.7', { prefix: '198.51.100.0/24', name: 'Documentation (TEST-NET-2)', rfc: 'RFC 5737' }],
    ['203.0.113.255', { prefix: '203.0.113.0/24', name: 'Documentation (TEST-NET-3)', rfc: 'RFC 5737' }],
    ['224.0.0.251', { prefix: '224.0.0.0/4', name: 'Multicast', rfc: 'RFC 5771' }],
    ['239.255.255.255', { prefix: '224.0.0.0/4', name: 'Multicast', rfc: 'RFC 5771' }],
    ['240.0.0.1', { prefix: '240.0.0.0/4', name: 'Reserved', rfc: 'RFC 1112' }],
    ['255.255.255.254', { prefix: '240.0.0.0/4', name: 'Reserved', rfc: 'RFC 1112' }],
    [
      '255.255.255.255',
      { prefix: '255.255.255.255/32', name: 'Limited Broadcast', rfc: 'RFC 8190, RFC 919' },
    ],
    ['127.0.0.1', { prefix: '127.0.0.0/8', name: 'Loopback', rfc: 'RFC 1122' }],
    ['169.254.169.254', { prefix: '169.254.0.0/16', name: 'Link Local', rfc: 'RFC 3927' }],
    ['0.0.0.0', { prefix: '0.0.0.0/32', name: 'This host on this network', rfc: 'RFC 1122' }],
    ['0.1.2.3', { prefix: '0.0.0.0/8', name: 'This network', rfc: 'RFC 791' }],
    ['198.19.0.1', { prefix: '198.18.0.0/15', name: 'Benchmarking', rfc: 'RFC 2544' }],
    ['192.0.0.5', { prefix: '192.0.0.0/29', name: 'IPv4 Service Continuity Prefix', rfc: 'RFC 7335' }],
    ['192.0.0.8', { prefix: '192.0.0.8/32', name: 'IPv4 dummy address', rfc: 'RFC 7600' }],
    ['192.0.0.100', { prefix: '192.0.0.0/24', name: 'IETF Protocol Assignments', rfc: 'RFC 6890' }],
    ['192.0.0.170', { prefix: '192.0.0.170/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880, RFC 7050' }],
    ['192.0.0.171', { prefix: '192.0.0.171/32', name: 'NAT64/DNS64 Discovery', rfc: 'RFC 8880, RFC 7050' }],
    // Globally reachable entries, also where they sit inside a non-reachable parent.
    ['192.0.0.9', null],
    ['192.0.0.10', null],
    ['192.31.196.1', null],
    ['192.52.193.1', null],
    ['192.175.48.1', null],
    // Terminated entry (deprecated 6to4 relay anycast): skipped.
    ['192.88.99.1', null],
    // Public addresses, including the neighbours of bogon blocks.
    ['8.8.8.8', null],
    ['1.1.1.1', null],
    ['9.255.255.255', null],
    ['11.0.0.0', null],
    ['100.63.255.255', null],
    ['100.128.0.0', null],
    ['172.32.0.0', null],
    ['223.255.255.255', null],
  ];
  for (const [address, expected] of cases) t.strictSame(bogonOf(address), expected, address);
});

const RESERVED = (prefix: string) => ({ prefix, name: 'Reserved by IETF', rfc: 'RFC 3513, RFC 4291' });

t.test('IPv6 bogons', async (t) => {
  const cases: [string, { prefix: string; name: string; rfc: string } | null][] = [
    ['::1', { prefix: '::1/128', name: 'Loopback Address', rfc: 'RFC 4291' }],
    ['::', { prefix: '::/128', name: 'Unspecified Address', rfc: 'RFC 4291' }],
    ['fe80::1', { prefix: 'fe80::/10', name: 'Link-Local Unicast', rfc: 'RFC 4291' }],
    ['fc00::1', { prefix: 'fc00::/7', name: 'Unique-Local', rfc: 'RFC 4193, RFC 8190' }],
    ['fdff:ffff::1', { prefix: 'fc00::/7', name: 'Unique-Local', rfc: 'RFC 4193, RFC 8190' }],
    ['2001:db8::1', { prefix: '2001:db8::/32', name: 'Documentation', rfc: 'RFC 3849' }],
    ['3fff::1', { prefix: '3fff::/20', name: 'Documentation', rfc: 'RFC 9637' }],
    ['ff02::1', { prefix: 'ff00::/8', name: 'Multicast', rfc: 'RFC 4291' }],
    ['::ffff:8.8.8.8', { prefix: '::ffff:0:0/96', name: 'IPv4-mapped Address', rfc: 'RFC 4291' }],
    ['100::1', { prefix: '100::/64', name: 'Discard-Only Address Block', rfc: 'RFC 6666' }],
    ['64:ff9b:1::1', { prefix: '64:ff9b:1::/48', name: 'IPv4-IPv6 Translat.', rfc: 'RFC 8215' }],
    ['2001:2::1', { prefix: '2001:2::/48', name: 'Benchmarking', rfc: 'RFC 5180, RFC Errata 1752' }],
    ['2001:100::1', { prefix: '2001::/23', name: 'IETF Protocol Assignments', rfc: 'RFC 2928' }],
    // Terminated ORCHID falls back to its parent 2001::/23.
    ['2001:10::1', { prefix: '2001::/23', name: 'IETF Protocol Assignments', rfc: 'RFC 2928' }],
    ['5f00::1', { prefix: '5f00::/16', name: 'Segment Routing (SRv6) SIDs', rfc: 'RFC 9602' }],
    // Reachable or N/A, also inside the non-reachable 2001::/23.
    ['2001::1', null], // TEREDO, N/A
    ['2002:808:808::1', null], // 6to4, N/A
    ['2001:1::1', null],
    ['2001:4:112::1', null],
    ['64:ff9b::808:808', null],
    ['2606:4700::1', null],
    ['2001:4860:4860::8888', null],
    [
      '2001:1ff:ffff:ffff:ffff:ffff:ffff:ffff',
      { prefix: '2001::/23', name: 'IETF Protocol Assignments', rfc: 'RFC 2928' },
    ],
    ['2001:200::', null],
    // Reserved by IETF in IANA's IPv6 Address Space registry (less specific than every
    // special-purpose entry inside it): only 2000::/3 holds public addresses.
    ['::2', RESERVED('::/8')],
    ['::1.1.1.1', RESERVED('::/8')], // IPv4-compatible ::101:101, not 1.1.1.1
    ['1::1', RESERVED('::/8')],
    ['0:1::', RESERVED('::/8')],
    ['100:1::1', RESERVED('100::/8')],
    ['200::1', { prefix: '200::/7', name: 'Reserved by IETF', rfc: 'RFC 4048' }],
    ['1fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', RESERVED('1000::/4')],
    ['4000::1', RESERVED('4000::/3')],
    ['6000::1', RESERVED('6000::/3')],
    ['8000::1', RESERVED('8000::/3')],
    ['a000::1', RESERVED('a000::/3')],
    ['c000::1', RESERVED('c000::/3')],
    ['e000::1', RESERVED('e000::/4')],
    ['f000::1', RESERVED('f000::/5')],
    ['f800::1', RESERVED('f800::/6')],
    ['fe00::1', RESERVED('fe00::/9')],
    ['fec0::1', { prefix: 'fec0::/10', name: 'Reserved by IETF', rfc: 'RFC 3879' }],
    [
      'feff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
      { prefix: 'fec0::/10', name: 'Reserved by IETF', rfc: 'RFC 3879' },
    ],
    ['2000::', null],
    ['3fff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', null],
  ];
  for (const [address, expected] of cases) t.strictSame(bogonOf(address), expected, address);
});

t.test('IPv4 and IPv6 tables are separate', async (t) => {
  // 10.0.0.0 has value 0x0a000000; the IPv6 address with that value is ::a00:0, reserved (::/8).
  t.equal(findIpBogon({ version: 6, value: 0x0a000001n })?.prefix, '::/8');
  t.equal(findIpBogon({ version: 4, value: 0x0a000001n })?.prefix, '10.0.0.0/8');
});

t.test('answers are shared frozen objects', async (t) => {
  const a = bogonOf('10.0.0.1');
  t.equal(a, bogonOf('10.255.255.255'));
  t.ok(Object.isFrozen(a));
});

t.test('AS number bogons', async (t) => {
  const cases: [number, { first: number; last: number; name: string; rfc: string } | null][] = [
    [0, { first: 0, last: 0, name: 'Reserved', rfc: 'RFC 7607' }],
    [1, null],
    [112, null],
    [13335, null],
    [23455, null],
    [23456, { first: 23456, last: 23456, name: 'AS_TRANS', rfc: 'RFC 6793' }],
    [23457, null],
    [64495, null],
    [64496, { first: 64496, last: 64511, name: 'Documentation', rfc: 'RFC 5398' }],
    [64511, { first: 64496, last: 64511, name: 'Documentation', rfc: 'RFC 5398' }],
    [64512, { first: 64512, last: 65534, name: 'Private Use', rfc: 'RFC 6996' }],
    [65534, { first: 64512, last: 65534, name: 'Private Use', rfc: 'RFC 6996' }],
    [65535, { first: 65535, last: 65535, name: 'Reserved', rfc: 'RFC 7300' }],
    [65536, { first: 65536, last: 65551, name: 'Documentation', rfc: 'RFC 5398' }],
    [65551, { first: 65536, last: 65551, name: 'Documentation', rfc: 'RFC 5398' }],
    [65552, null],
    [131071, null],
    [4199999999, null],
    [4200000000, { first: 4200000000, last: 4294967294, name: 'Private Use', rfc: 'RFC 6996' }],
    [4294967294, { first: 4200000000, last: 4294967294, name: 'Private Use', rfc: 'RFC 6996' }],
    [4294967295, { first: 4294967295, last: 4294967295, name: 'Reserved', rfc: 'RFC 7300' }],
  ];
  for (const [asn, expected] of cases) t.strictSame(findAsnBogon(asn), expected, `AS${asn}`);
});

t.test("the API's list is exactly the bogon AS numbers in 1..4294967295", async (t) => {
  // docs/api.md#get-v1asnasn: "23456, 64496 to 65551, 4200000000 to 4294967295".
  const specRanges: [number, number][] = [
    [23456, 23456],
    [64496, 65551],
    [4200000000, 4294967295],
  ];
  const isSpecBogon = (asn: number) => specRanges.some(([first, last]) => asn >= first && asn <= last);
  const probes = new Set<number>([1, 4294967295]);
  for (const [first, last] of specRanges) {
    for (const n of [first - 1, first, first + 1, last - 1, last, last + 1]) {
      if (n >= 1 && n <= 4294967295) probes.add(n);
    }
  }
  for (const n of [65535, 65536, 131071, 131072, 4199999999]) probes.add(n);
  for (const asn of probes) t.equal(findAsnBogon(asn) !== null, isSpecBogon(asn), `AS${asn}`);
});
