/**
 * countText (server/encoding/count-text.ts) writes counts and JSON-RPC ids without V8's
 * number-string cache; its text must be String(n)'s (and JSON.stringify(n)'s) for every integer.
 */
import t from 'tap';
import { countText } from '../../server/encoding/count-text.js';

t.test('the same text as String() for counts', async (t) => {
  const fixed = [0, -0, 1, 9, 10, 59, 60, 1000, 999_999, 1_000_000, 2 ** 31, 2 ** 53 - 1, 1e15, 1e20, 1e21];
  for (const n of fixed) t.equal(countText(n), String(n), `${String(n)}`);
  t.equal(countText(-0), '0', 'minus zero');
  t.equal(countText(Number.POSITIVE_INFINITY), 'Infinity', 'an unlimited quota');
  // Random integers of every magnitude up to 2^53.
  let seed = 42;
  const random = () => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  let differ = 0;
  for (let i = 0; i < 100_000; i++) {
    const n = Math.floor(random() * 2 ** Math.floor(random() * 53));
    if (countText(n) !== String(n) || countText(n) !== JSON.stringify(n)) differ += 1;
  }
  t.equal(differ, 0, '100,000 random integers: none differ');
});
