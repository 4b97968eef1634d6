/** RecentCache (shared/queries/common.ts): two generations, no moves between them. */
import t from 'tap';
import { RecentCache } from '../../shared/queries/common.js';

t.test('a working set of 1.5 × half keys, asked in turn: after the first pass, every ask hits', async (t) => {
  const cache = new RecentCache<number, string>(1000);
  let misses = 0;
  for (let pass = 0; pass < 10; pass++) {
    for (let k = 0; k < 1500; k++) {
      if (cache.get(k) === undefined) {
        misses += 1;
        cache.set(k, `v${k}`);
      }
    }
  }
  t.equal(misses, 1500, 'one miss per key, on the first pass');
  t.equal(cache.get(1499), 'v1499');
});

t.test('bounded: the oldest generation is dropped; a kept null is a hit', async (t) => {
  const cache = new RecentCache<number, string | null>(100);
  cache.set(-1, null);
  t.equal(cache.get(-1), null, 'null, not undefined: a hit');
  for (let k = 0; k < 300; k++) cache.set(k, `v${k}`);
  t.equal(cache.get(-1), undefined, 'dropped with its generation');
  // Generations of 100: [-1..98] and [99..198] dropped, [199..298] older, [299] newer.
  t.equal(cache.get(150), undefined, 'keys two generations old are gone');
  t.equal(cache.get(199), 'v199', 'the older generation still answers');
  t.equal(cache.get(299), 'v299');
});
