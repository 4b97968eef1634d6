/**
 * RangeIndexBuilder: ranges of both families into arrays of the sizes counted beforehand; a count
 * that does not match what is read is an error, never a silently short or padded index.
 */
import t from 'tap';
import { RangeIndexBuilder } from '../../shared/queries/range-index.js';
import { ipKey, parseIp } from '../../shared/ip.js';

const key = (text: string) => {
  const ip = parseIp(text)!;
  return ipKey(ip.version, ip.value);
};

t.test('ranges of both families in key order: find() gives each address its row', async (t) => {
  const builder = new RangeIndexBuilder({ v4: 2, v6: 2 });
  // Key order: ::1 (IPv6), then the IPv4-mapped keys, then 2001:db8::.
  builder.add(key('::1'), key('::1'));
  builder.add(key('1.1.1.0'), key('1.1.1.255'));
  builder.add(key('8.8.8.0'), key('8.8.8.255'));
  builder.add(key('2001:db8::'), key('2001:db8::ffff'));
  t.equal(builder.rows, 4);
  const index = builder.build();
  const found = (text: string) => index.find(parseIp(text)!);
  t.equal(found('::1'), 0);
  t.equal(found('1.1.1.0'), 1);
  t.equal(found('1.1.1.255'), 1);
  t.equal(found('1.1.2.0'), -1);
  t.equal(found('8.8.8.8'), 2);
  t.equal(found('2001:db8::abcd'), 3);
  t.equal(found('2001:db8::1:0'), -1);
  t.equal(found('::2'), -1);
});

t.test('a count that does not match the ranges read is an error', async (t) => {
  const short = new RangeIndexBuilder({ v4: 1, v6: 0 });
  short.add(key('1.1.1.0'), key('1.1.1.255'));
  t.throws(() => short.add(key('2001:db8::'), key('2001:db8::ffff')), {
    message: 'more IPv6 ranges than the 0 counted',
  });
  t.throws(() => short.add(key('8.8.8.0'), key('8.8.8.255')), {
    message: 'more IPv4 ranges than the 1 counted',
  });
  t.equal(short.rows, 1, 'a refused range takes no row');
  const long = new RangeIndexBuilder({ v4: 2, v6: 1 });
  long.add(key('1.1.1.0'), key('1.1.1.255'));
  t.throws(() => long.build(), { message: 'read 1 IPv4 and 0 IPv6 ranges, counted 2 and 1' });
});

t.test('IPv4 find from the /16 agrees with a search of the whole table', async (t) => {
  // Ranges of every size, from one address to a /8 (starting in a /16 whose own ranges are none),
  // with gaps between them; the oracle walks every range.
  let random = 38;
  const next = (n: number) => (random = (random * 1103515245 + 12345) % 2 ** 31) % n;
  const ranges: Array<[number, number]> = [];
  for (let start = next(1 << 20); start < 2 ** 32 - 1 && ranges.length < 5_000;) {
    const size = [1, 256, 1 << 12, 1 << 16, 1 << 20, 1 << 24][next(6)]! + next(4096);
    const end = Math.min(2 ** 32 - 1, start + size - 1);
    ranges.push([start, end]);
    start = end + 1 + (next(3) === 0 ? 0 : next(1 << 18));
  }
  const text = (n: number) => `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
  const builder = new RangeIndexBuilder({ v4: ranges.length, v6: 0 });
  for (const [first, last] of ranges) builder.add(key(text(first)), key(text(last)));
  const index = builder.build();
  const oracle = (value: number) => ranges.findIndex(([first, last]) => first <= value && value <= last);
  const probes: number[] = [0, 2 ** 32 - 1];
  for (const [first, last] of ranges)
    probes.push(first, last, Math.max(0, first - 1), Math.min(2 ** 32 - 1, last + 1));
  for (let i = 0; i < 20_000; i++) probes.push(next(2 ** 31) * 2 + next(2));
  let differ = 0;
  let inside = 0;
  for (const value of probes) {
    const expected = oracle(value);
    if (index.find(parseIp(text(value))!) !== expected) differ++;
    if (expected >= 0) inside++;
  }
  t.equal(differ, 0, `${probes.length} addresses, every one found as the oracle finds it`);
  t.equal(inside, 21_855, "inside a range (the seeded draw's count), the others outside");
});
