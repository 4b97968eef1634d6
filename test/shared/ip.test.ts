import ipaddr from 'ipaddr.js';
import t from 'tap';
import {
  canonicalIp,
  formatCidr,
  formatValue,
  ipFromKey,
  ipKey,
  parseCidr,
  parseIp,
  rangeToCidrs,
  unmapIpv4,
} from '../../shared/ip.js';
import { fixture } from '../helpers/feed-fixture.js';

t.test('parseIp accepts one IPv4 or IPv6 address and nothing else', async (t) => {
  t.strictSame(parseIp('192.0.2.1'), { version: 4, value: 0xc0000201n });
  t.strictSame(parseIp('0.0.0.0'), { version: 4, value: 0n });
  t.strictSame(parseIp('255.255.255.255'), { version: 4, value: 0xffffffffn });
  t.strictSame(parseIp('::'), { version: 6, value: 0n });
  t.strictSame(parseIp('::1'), { version: 6, value: 1n });
  t.strictSame(parseIp('2001:DB8::1'), { version: 6, value: (0x20010db8n << 96n) | 1n });
  t.strictSame(parseIp('::ffff:192.0.2.1'), { version: 6, value: (0xffffn << 32n) | 0xc0000201n });
  // An embedded dotted quad is only a spelling of the last 32 bits: `::1.1.1.1` is ::101:101
  // (IPv4-compatible), not IPv4-mapped and not 1.1.1.1 (ipaddr.js read it as ::ffff:1.1.1.1).
  t.strictSame(parseIp('::1.1.1.1'), { version: 6, value: 0x01010101n });
  t.strictSame(parseIp('::1.1.1.1'), parseIp('::101:101'));
  t.strictSame(parseIp('1:2:3:4:5:6:1.2.3.4'), parseIp('1:2:3:4:5:6:102:304'));
  t.strictSame(parseIp('64:ff9b::192.0.2.33'), parseIp('64:ff9b::c000:221'));
  t.strictSame(unmapIpv4(parseIp('::1.1.1.1')!), { version: 6, value: 0x01010101n }, 'not mapped');
  t.strictSame(unmapIpv4(parseIp('::ffff:101:101')!), { version: 4, value: 0x01010101n }, 'mapped, in hex');
  for (const bad of [
    '',
    '01.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '256.1.1.1',
    '1.2.3.4 ',
    ' 1.2.3.4',
    '1.2.3.4/32',
    '0x7f.0.0.1',
    '2001:db8::1/128',
    'fe80::1%eth0',
    '2001:db8:::1',
    '2001:db8::1::2',
    '1:2:3:4:5:6:7:8:9',
    '1:2:3:4:5:6:7',
    '12345::1',
    '2001:db8::g',
    ':1::2',
    '1::2:',
    'example.com',
    '::1.2.3',
    '::01.2.3.4',
    '::1.2.3.4:5',
    '1.2.3.4::',
    ':1.2.3.4',
    '1:2:3:4:5:6:7:1.2.3.4',
    '::ffff:256.0.0.1',
  ]) {
    t.equal(parseIp(bad), null, JSON.stringify(bad));
  }
});

t.test(
  'parseIp reads a dotted quad as the strict pattern does (no leading zeros, octets to 255)',
  async (t) => {
    // The oracle: the pattern parseIp used before it read dotted quads character by character.
    const octet = '(25[0-5]|2[0-4]\\d|1\\d\\d|[1-9]?\\d)';
    const strict = new RegExp(`^${octet}\\.${octet}\\.${octet}\\.${octet}$`);
    const oracle = (text: string) => {
      const m = strict.exec(text);
      return m ? BigInt(((+m[1]! << 24) >>> 0) + (+m[2]! << 16) + (+m[3]! << 8) + +m[4]!) : null;
    };
    const pieces = [
      '0',
      '00',
      '01',
      '1',
      '9',
      '10',
      '99',
      '100',
      '199',
      '249',
      '250',
      '255',
      '256',
      '300',
      '999',
      '1000',
      '',
      '.',
      ' ',
      'a',
      '-1',
      '+1',
    ];
    let random = 35;
    const next = () => (random = (random * 1103515245 + 12345) % 2 ** 31);
    let checked = 0;
    let accepted = 0;
    for (let i = 0; i < 40_000; i++) {
      const parts = Array.from({ length: 3 + (next() % 3) }, () => pieces[next() % pieces.length]!);
      const text = next() % 7 === 0 ? parts.join('') : parts.join('.');
      const expected = oracle(text);
      const ip = parseIp(text);
      // Not a dotted quad: parseIp reads it as IPv6 or refuses it, as before (no colon here: refused).
      if (expected === null) {
        if (ip !== null) t.fail(`${JSON.stringify(text)} read as ${ip.value}`);
      } else if (ip === null || ip.version !== 4 || ip.value !== expected) {
        t.fail(`${JSON.stringify(text)}: expected ${expected}`);
      } else accepted++;
      checked++;
    }
    t.equal(checked, 40_000);
    t.equal(accepted, 547, "dotted quads among them (the seeded draw's count)");
    t.strictSame(parseIp('1.2.3.4\n'), null, 'no trailing newline');
    t.strictSame(parseIp('255.255.255.255'), { version: 4, value: 0xffffffffn });
  },
);

t.test('IPv6 hex spellings are read as ipaddr.js reads them', async (t) => {
  const addresses = [
    '::',
    '::1',
    '1::',
    '1:2:3:4:5:6:7::',
    '::2:3:4:5:6:7:8',
    '1:2:3:4:5:6:7:8',
    '0001:0002:0003:0004:0005:0006:0007:0008',
    'FFFF:ffff:FFFF:ffff:ffff:ffff:ffff:ffff',
    '2001:218:4001::ffff:ffff:ffff:ffff',
  ];
  for (const line of fixture('iptoasn', 'ip2asn-v6.tsv').trim().split('\n')) {
    addresses.push(...line.split('\t').slice(0, 2));
  }
  for (const address of addresses) {
    const expected = ipaddr.IPv6.parse(address).parts.reduce(
      (value, part) => (value << 16n) | BigInt(part),
      0n,
    );
    t.strictSame(parseIp(address), { version: 6, value: expected }, address);
  }
});

t.test('formatting follows RFC 5952', async (t) => {
  const cases: [string, string][] = [
    ['2001:0db8:0000:0000:0000:0000:0000:0001', '2001:db8::1'],
    ['2001:DB8::1', '2001:db8::1'],
    ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1'], // first of two equal runs
    ['2001:db8:0:1:1:1:1:1', '2001:db8:0:1:1:1:1:1'], // a single zero group is not compressed
    ['2001:0:0:1:0:0:0:1', '2001:0:0:1::1'], // the longest run
    ['0:0:0:0:0:0:0:0', '::'],
    ['1:0:0:0:0:0:0:0', '1::'],
    ['0:0:0:0:0:0:0:1', '::1'],
    ['2001:218:4001::ffff:ffff:ffff:ffff', '2001:218:4001:0:ffff:ffff:ffff:ffff'],
    ['192.0.2.1', '192.0.2.1'],
  ];
  for (const [input, canonical] of cases) t.equal(canonicalIp(input), canonical, input);
  t.equal(canonicalIp('01.2.3.4'), null);
  t.equal(formatValue(6, (1n << 128n) - 1n), 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff');
  t.equal(formatValue(4, 0xffffffffn), '255.255.255.255');
});

t.test('parseCidr clears host bits and says so', async (t) => {
  const cidr = parseCidr('216.244.7.9/24');
  t.strictSame(cidr, {
    version: 4,
    first: 0xd8f40700n,
    last: 0xd8f407ffn,
    prefixLength: 24,
    hostBitsSet: true,
  });
  t.equal(formatCidr(cidr!), '216.244.7.0/24');
  t.equal(parseCidr('2603:1000:4::10c/126')?.hostBitsSet, false);
  t.equal(formatCidr(parseCidr('2001:DB8:0::/32')!), '2001:db8::/32');
  t.equal(parseCidr('0.0.0.0/0')?.last, 0xffffffffn);
  for (const bad of [
    '192.0.2.1',
    '192.0.2.0/33',
    '2001:db8::/129',
    '192.0.2.0/',
    '192.0.2.0/-1',
    '192.0.2.0/2 4',
  ]) {
    t.equal(parseCidr(bad), null, bad);
  }
});

t.test('rangeToCidrs on real IPtoASN rows', async (t) => {
  const rows = fixture('iptoasn', 'ip2asn-v4.tsv')
    .trim()
    .split('\n')
    .map((line) => line.split('\t'));
  const cidrsOf = (first: string, last: string) => {
    const a = parseIp(first)!;
    const b = parseIp(last)!;
    return rangeToCidrs(a.version, a.value, b.value);
  };
  t.strictSame(cidrsOf(rows[0]![0]!, rows[0]![1]!), ['1.1.1.0/24'], '1.1.1.0 – 1.1.1.255');
  t.strictSame(cidrsOf(rows[3]![0]!, rows[3]![1]!), ['8.34.208.0/21'], '8.34.208.0 – 8.34.215.255');
  t.strictSame(
    cidrsOf(rows[9]![0]!, rows[9]![1]!),
    ['216.252.221.0/24', '216.252.222.0/23'],
    '216.252.221.0 – 216.252.223.255',
  );
  // IPv6 rows of ip2asn-v6.tsv
  t.strictSame(cidrsOf('2606:4700:2::', '2606:4700:11:ffff:ffff:ffff:ffff:ffff'), [
    '2606:4700:2::/47',
    '2606:4700:4::/46',
    '2606:4700:8::/45',
    '2606:4700:10::/47',
  ]);
  t.strictSame(cidrsOf('::', '::1'), ['::/127']);
  t.strictSame(
    cidrsOf('ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff'),
    ['ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff/128'],
  );
  t.strictSame(cidrsOf('fec0::', 'ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe').slice(0, 3), [
    'fec0::/10',
    'ff00::/9',
    'ff80::/10',
  ]);
  t.strictSame(rangeToCidrs(4, 0n, 0xffffffffn), ['0.0.0.0/0']);
  t.throws(() => rangeToCidrs(4, 2n, 1n), RangeError);
});

t.test('ipKey round trip and order', async (t) => {
  for (const text of [
    '0.0.0.0',
    '192.0.2.1',
    '255.255.255.255',
    '::',
    '::1',
    '2001:db8::1',
    'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  ]) {
    const ip = parseIp(text)!;
    const key = ipKey(ip.version, ip.value);
    t.equal(key.length, 16);
    t.strictSame(ipFromKey(key), ip, text);
  }
  t.strictSame(ipFromKey(new Uint8Array(ipKey(4, 0xc0000201n))), { version: 4, value: 0xc0000201n });
  t.equal(
    ipKey(4, 0xc0000201n).toString('hex'),
    '00000000000000000000ffffc0000201',
    'IPv4 as ::ffff:a.b.c.d',
  );
  const sorted = ['::1', '1.1.1.1', '8.8.8.8', '2001:db8::', 'fe80::'].map((text) => {
    const ip = parseIp(text)!;
    return ipKey(ip.version, ip.value);
  });
  for (let i = 1; i < sorted.length; i++)
    t.ok(Buffer.compare(sorted[i - 1]!, sorted[i]!) < 0, `key ${i - 1} < key ${i}`);
  t.strictSame(unmapIpv4(parseIp('::ffff:192.0.2.1')!), { version: 4, value: 0xc0000201n });
});

t.test('IPv4 rangeToCidrs (plain numbers) agrees with the same range in IPv6 arithmetic', async (t) => {
  // The IPv4 path works in numbers; the IPv6 path in bigints. An IPv4 range mapped to
  // ::ffff:a.b.c.d must decompose into the same blocks, 96 bits longer.
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  const cases: Array<[number, number]> = [
    [0, 2 ** 32 - 1],
    [0, 0],
    [2 ** 32 - 1, 2 ** 32 - 1],
    [2 ** 31, 2 ** 32 - 1],
    [1, 2 ** 32 - 2],
  ];
  for (let i = 0; i < 2000; i++) {
    const a = Math.floor(random() * 2 ** 32);
    const b = Math.min(2 ** 32 - 1, a + Math.floor(random() * 2 ** Math.floor(random() * 33)));
    cases.push([a, b]);
  }
  for (const [first, last] of cases) {
    const mapped = rangeToCidrs(6, (0xffffn << 32n) | BigInt(first), (0xffffn << 32n) | BigInt(last)).map(
      (cidr) => {
        const parsed = parseCidr(cidr)!;
        return `${formatValue(4, parsed.first & 0xffffffffn)}/${parsed.prefixLength - 96}`;
      },
    );
    t.strictSame(rangeToCidrs(4, BigInt(first), BigInt(last)), mapped, `${first}..${last}`);
  }
});
