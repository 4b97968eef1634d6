/**
 * In-memory lookup of sorted, non-overlapping address ranges (binary search). IPv4 uses plain
 * numbers for speed, IPv6 bigint. Used at build time to place addresses in ASN ranges and
 * provider segments.
 */
import { parseIp } from '../../shared/ip.js';

export class RangeTable<T> {
  private v4First: number[] = [];
  private v4Last: number[] = [];
  private v4Value: T[] = [];
  private v6First: bigint[] = [];
  private v6Last: bigint[] = [];
  private v6Value: T[] = [];

  /** Ranges must be added in ascending order per family and must not overlap. */
  add(version: 4 | 6, first: bigint, last: bigint, value: T): void {
    if (version === 4) {
      this.v4First.push(Number(first));
      this.v4Last.push(Number(last));
      this.v4Value.push(value);
    } else {
      this.v6First.push(first);
      this.v6Last.push(last);
      this.v6Value.push(value);
    }
  }

  find(version: 4 | 6, value: bigint): T | undefined {
    if (version === 4) {
      const v = Number(value);
      const i = upperBound(this.v4First, v) - 1;
      return i >= 0 && this.v4Last[i]! >= v ? this.v4Value[i] : undefined;
    }
    const i = upperBound(this.v6First, value) - 1;
    return i >= 0 && this.v6Last[i]! >= value ? this.v6Value[i] : undefined;
  }

  /** The entry holding a whole range first..last, if one does. */
  findContaining(version: 4 | 6, first: bigint, last: bigint): T | undefined {
    if (version === 4) {
      const i = upperBound(this.v4First, Number(first)) - 1;
      return i >= 0 && this.v4Last[i]! >= Number(last) ? this.v4Value[i] : undefined;
    }
    const i = upperBound(this.v6First, first) - 1;
    return i >= 0 && this.v6Last[i]! >= last ? this.v6Value[i] : undefined;
  }

  findText(address: string): T | undefined {
    const ip = parseIp(address);
    return ip ? this.find(ip.version, ip.value) : undefined;
  }
}

/** Index of the first element greater than `value`. */
function upperBound<V extends number | bigint>(sorted: V[], value: V): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! <= value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}
