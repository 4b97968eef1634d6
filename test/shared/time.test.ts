/**
 * toIso (shared/time.ts) writes whole seconds by arithmetic: checked against
 * Date.prototype.toISOString, the independent oracle, on every day boundary that matters and on
 * a million random seconds from 1970 to 9999.
 */
import t from 'tap';
import { toIso } from '../../shared/time.js';

const oracle = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');

t.test('edges: epoch, leap days, century years, the last four-digit second', async (t) => {
  const cases: Array<[number, string]> = [
    [0, '1970-01-01T00:00:00Z'],
    [951_782_400, '2000-02-29T00:00:00Z'],
    [951_868_799, '2000-02-29T23:59:59Z'],
    [951_868_800, '2000-03-01T00:00:00Z'],
    [4_107_542_400, '2100-03-01T00:00:00Z'],
    [1_798_761_599, '2026-12-31T23:59:59Z'],
    [253_402_300_799, '9999-12-31T23:59:59Z'],
  ];
  for (const [s, iso] of cases) t.equal(toIso(s), iso, `${s}`);
  // Outside what arithmetic writes: as Date writes it.
  t.equal(toIso(253_402_300_800), '+010000-01-01T00:00:00Z');
  t.equal(toIso(-1), '1969-12-31T23:59:59Z');
  t.equal(toIso(1.5), '1970-01-01T00:00:01.500Z');
});

t.test('a million random seconds and every day from 1970 to 2200 agree with Date', async (t) => {
  let seed = 42;
  const random = () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
  const differ: string[] = [];
  for (let i = 0; i < 1_000_000; i++) {
    const s = Math.floor(random() * 253_402_300_800);
    if (toIso(s) !== oracle(s)) differ.push(`${s}: ${toIso(s)} against ${oracle(s)}`);
  }
  for (let day = 0; day < 365.25 * 230; day++) {
    for (const s of [day * 86_400, day * 86_400 + 86_399]) {
      if (toIso(s) !== oracle(s)) differ.push(`${s}: ${toIso(s)} against ${oracle(s)}`);
    }
  }
  t.same(differ.slice(0, 5), [], 'no second differs');
});
