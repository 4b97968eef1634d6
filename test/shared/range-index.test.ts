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
