import t from 'tap';
import {
  canonicalIpv4,
  JsonArraysOfText,
  sortAscii,
  ValueNumbers,
} from '../../builder/release/dns-tables.js';

t.test('sortAscii sorts in byte order, as Array.prototype.sort does', async (t) => {
  const texts = [
    '',
    'a',
    'ab',
    'a',
    '1.2.3.4',
    '1.2.3',
    '1.2.3.4.5',
    '10.0.0.1',
    '9.9.9.9',
    '::1',
    '2001:db8::1',
  ];
  let x = 7;
  for (let i = 0; i < 5000; i++) {
    x = (x * 1103515245 + 12345) % 2147483648;
    texts.push(
      i % 3 ? `${x % 256}.${(x >> 8) % 256}.${(x >> 16) % 10}.${i % 7}` : `2001:db8:${x.toString(16)}::${i}`,
    );
  }
  t.same(sortAscii([...texts]), [...texts].sort());
  const mixed = [...texts.slice(0, 200), 'é', 'z'];
  t.same(sortAscii([...mixed]), [...mixed].sort(), 'a non-ASCII text: the built-in sort');
});

t.test('canonicalIpv4 accepts only canonical dotted quads', async (t) => {
  t.equal(canonicalIpv4('1.2.3.4', 0, 7), 0x01020304);
  t.equal(canonicalIpv4('255.255.255.255', 0, 15), 4294967295);
  t.equal(canonicalIpv4('0.0.0.0', 0, 7), 0);
  t.equal(canonicalIpv4('x10.0.0.1y', 1, 9), 0x0a000001);
  for (const text of [
    '01.2.3.4',
    '1.2.3.04',
    '256.1.1.1',
    '1.2.3',
    '1.2.3.4.5',
    '1..3.4',
    '1.2.3.',
    '',
    '::1',
    '1.2.3.4 ',
  ])
    t.equal(canonicalIpv4(text, 0, text.length), -1, text);
});

t.test('ValueNumbers and JsonArraysOfText number each text once, in first-seen order', async (t) => {
  const numbers = new ValueNumbers();
  const text =
    '["1.2.3.4","::1"],["1.2.3.4","01.2.3.4"], [ "::1" ,"a\\"b"],[],["skipped"],["255.255.255.255"]';
  const arrays = new JsonArraysOfText(text);
  t.same([...arrays.next(numbers)], [0, 1]);
  t.same([...arrays.next(numbers)], [0, 2]);
  t.same([...arrays.next(numbers)], [1, 3]);
  t.same([...arrays.next(numbers)], []);
  t.same([...arrays.next(null)], []);
  t.same([...arrays.next(numbers)], [4]);
  arrays.end();
  t.equal(numbers.of('1.2.3.4'), 0);
  t.equal(numbers.of('a"b'), 3);
  t.same(numbers.texts(), ['1.2.3.4', '::1', '01.2.3.4', 'a"b', '255.255.255.255']);
  // Many addresses: the table grows and keeps every number.
  const many = new ValueNumbers();
  for (let i = 0; i < 3_000_000; i += 3) many.of(`10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`);
  t.equal(many.count, 1_000_000);
  t.equal(many.of('10.0.0.3'), 1);
  for (let i = 0; i < 300_000; i++) many.of(`2001:db8::${i.toString(16)}`);
  t.equal(many.count, 1_300_000);
  t.equal(many.of('2001:db8::ff'), 1_000_255);
  t.equal(many.texts()[1_000_255], '2001:db8::ff');
  t.throws(() => new JsonArraysOfText('["a').next(numbers), /end of a string/);
  t.throws(() => new JsonArraysOfText('["a"]x').end(), /expected the end/);
});
