/**
 * Address prefixes as numbers, and sets of address ranges for membership tests.
 */

export interface Prefix4 {
  base: number;
  size: number;
}

export interface Prefix6 {
  groups: number[];
  length: number;
}

/** Sorted, merged [first, last] intervals for membership tests. */
export class IntervalSet {
  private readonly firsts: bigint[] = [];
  private readonly lasts: bigint[] = [];

  constructor(ranges: [bigint, bigint][]) {
    ranges.sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
    for (const [first, last] of ranges) {
      const n = this.lasts.length;
      if (n > 0 && first <= this.lasts[n - 1]! + 1n) {
        if (last > this.lasts[n - 1]!) this.lasts[n - 1] = last;
      } else {
        this.firsts.push(first);
        this.lasts.push(last);
      }
    }
  }

  has(value: bigint): boolean {
    let lo = 0;
    let hi = this.firsts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.firsts[mid]! > value) hi = mid - 1;
      else if (this.lasts[mid]! < value) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

/** Same for IPv4 with plain numbers (the hot path). */
export class IntervalSet4 {
  private readonly firsts: Float64Array;
  private readonly lasts: Float64Array;

  constructor(ranges: Prefix4[]) {
    const sorted = [...ranges].sort((x, y) => x.base - y.base);
    const firsts: number[] = [];
    const lasts: number[] = [];
    for (const p of sorted) {
      const last = p.base + p.size - 1;
      const n = lasts.length;
      if (n > 0 && p.base <= lasts[n - 1]! + 1) {
        if (last > lasts[n - 1]!) lasts[n - 1] = last;
      } else {
        firsts.push(p.base);
        lasts.push(last);
      }
    }
    this.firsts = Float64Array.from(firsts);
    this.lasts = Float64Array.from(lasts);
  }

  has(value: number): boolean {
    let lo = 0;
    let hi = this.firsts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (this.firsts[mid]! > value) hi = mid - 1;
      else if (this.lasts[mid]! < value) lo = mid + 1;
      else return true;
    }
    return false;
  }
}

export function v6Value(groups: number[]): bigint {
  let v = 0n;
  for (const g of groups) v = (v << 16n) | BigInt(g);
  return v;
}

export function v6Range(p: Prefix6): [bigint, bigint] {
  const first = v6Value(p.groups);
  const hostMask = (1n << BigInt(128 - p.length)) - 1n;
  return [first & ~hostMask, first | hostMask];
}
