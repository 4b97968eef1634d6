import type { PackedText } from './packed-text.js';

const NOT_ASCII = new Error('not ASCII');

/**
 * Sorts ASCII strings in byte order (JavaScript's `<` on them; SQLite's BINARY collation), in
 * place: an MSD radix sort on the character codes, insertion sort for small buckets. 2.6M
 * addresses: 3 s on a busy machine, where Array.prototype.sort took 7.5 s.
 */
export function sortAscii(texts: string[]): string[] {
  const scratch = new Array<string>(texts.length);
  // Per depth: counts, then bucket starts, of code + 1 (0: the text ends before this depth).
  const counts: Int32Array[] = [];
  const codes = new Uint8Array(texts.length);
  const radix = (lo: number, hi: number, depth: number): void => {
    if (hi - lo < 48) {
      for (let i = lo + 1; i < hi; i++) {
        const x = texts[i]!;
        let j = i - 1;
        while (j >= lo && texts[j]! > x) {
          texts[j + 1] = texts[j]!;
          j--;
        }
        texts[j + 1] = x;
      }
      return;
    }
    const count = (counts[depth] ??= new Int32Array(130));
    count.fill(0);
    let min = 129;
    let max = 0;
    for (let i = lo; i < hi; i++) {
      const t = texts[i]!;
      const c = depth < t.length ? t.charCodeAt(depth) + 1 : 0;
      if (c > 128) throw NOT_ASCII;
      codes[i] = c;
      count[c + 1]!++;
      if (c < min) min = c;
      if (c > max) max = c;
    }
    if (min === max) {
      if (min !== 0) radix(lo, hi, depth + 1);
      return;
    }
    for (let c = min; c <= max; c++) count[c + 1]! += count[c]!;
    // count[c] is now where bucket c starts (relative to lo); move, then recurse per bucket.
    for (let i = lo; i < hi; i++) scratch[lo + count[codes[i]!]!++] = texts[i]!;
    for (let i = lo; i < hi; i++) texts[i] = scratch[i]!;
    // After the move count[c] is where bucket c ends.
    let a = lo + (min === 0 ? count[0]! : 0);
    for (let c = Math.max(min, 1); c <= max; c++) {
      const b = lo + count[c]!;
      if (b - a > 1) radix(a, b, depth + 1);
      a = b;
    }
  };
  try {
    radix(0, texts.length, 0);
  } catch (error) {
    if (error !== NOT_ASCII) throw error;
    // UTF-16 order is byte order only for ASCII; addresses always are, other texts get a sort
    // that at least never fails.
    texts.sort();
  }
  return texts;
}

/**
 * The indexes of the texts of `text` in byte order (SQLite's BINARY collation, UTF-8 included):
 * the MSD radix sort above on the bytes themselves, so that no string is made of the texts.
 *
 * The same loops as sortAscii on purpose: one radix sort of positions shared by both, with the
 * code of a text at a depth as a callback, took 5.0-6.1 s instead of 1.7-1.9 s for sortAscii on
 * the full-scale bench's 2.6M addresses and 1.0-1.5 s instead of 0.8-0.95 s here on its 2M names
 * (2026-11-26, a scratch script, rounds 2-3 of each): the callback is not inlined once
 * it has two shapes, and both sorts are on the build's critical path.
 */
export function orderByBytes(text: PackedText): Int32Array {
  const { bytes, offsets, length } = text;
  const order = new Int32Array(length);
  for (let i = 0; i < length; i++) order[i] = i;
  const scratch = new Int32Array(length);
  const codes = new Uint16Array(length);
  const counts: Int32Array[] = [];
  // Byte `depth` of text i + 1, or 0 when the text ends before it.
  const code = (i: number, depth: number): number => {
    const at = offsets[i]! + depth;
    return at < offsets[i + 1]! - 1 ? bytes[at]! + 1 : 0;
  };
  const before = (a: number, b: number, depth: number): boolean => {
    for (let d = depth; ; d++) {
      const x = code(a, d);
      const y = code(b, d);
      if (x !== y) return x < y;
      if (x === 0) return false;
    }
  };
  const radix = (lo: number, hi: number, depth: number): void => {
    if (hi - lo < 48) {
      for (let i = lo + 1; i < hi; i++) {
        const x = order[i]!;
        let j = i - 1;
        while (j >= lo && before(x, order[j]!, depth)) {
          order[j + 1] = order[j]!;
          j--;
        }
        order[j + 1] = x;
      }
      return;
    }
    const count = (counts[depth] ??= new Int32Array(258));
    count.fill(0);
    let min = 257;
    let max = 0;
    for (let i = lo; i < hi; i++) {
      const c = code(order[i]!, depth);
      codes[i] = c;
      count[c + 1]!++;
      if (c < min) min = c;
      if (c > max) max = c;
    }
    if (min === max) {
      if (min !== 0) radix(lo, hi, depth + 1);
      return;
    }
    for (let c = min; c <= max; c++) count[c + 1]! += count[c]!;
    for (let i = lo; i < hi; i++) scratch[lo + count[codes[i]!]!++] = order[i]!;
    order.set(scratch.subarray(lo, hi), lo);
    let a = lo + (min === 0 ? count[0]! : 0);
    for (let c = Math.max(min, 1); c <= max; c++) {
      const b = lo + count[c]!;
      if (b - a > 1) radix(a, b, depth + 1);
      a = b;
    }
  };
  radix(0, length, 0);
  return order;
}
