/**
 * Flattens possibly nested provider ranges into non-overlapping segments, each listing the ranges
 * that hold it, so that "every range holding this IP" is one binary search at lookup time.
 */
export interface SegmentInput {
  id: number;
  /** Position in one ordered space (IPv4 mapped into IPv6 space, see ipKey). */
  first: bigint;
  last: bigint;
  prefixLength: number;
}

export interface Segment {
  first: bigint;
  last: bigint;
  /** Range ids holding the segment, most specific (longest prefix) first. */
  ids: number[];
}

export function buildSegments(ranges: SegmentInput[]): Segment[] {
  // Boundaries sorted and deduplicated. (Map/Set keyed by bigint are very slow in V8: avoid them.)
  const all: bigint[] = [];
  for (const r of ranges) all.push(r.first, r.last + 1n);
  all.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const bounds: bigint[] = [];
  for (const b of all) if (bounds.length === 0 || bounds[bounds.length - 1] !== b) bounds.push(b);
  const indexOf = (value: bigint): number => {
    let lo = 0;
    let hi = bounds.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (bounds[mid]! < value) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  // covering[i] = ranges holding the elementary interval bounds[i] .. bounds[i+1]-1
  const covering: SegmentInput[][] = Array.from({ length: bounds.length }, () => []);
  for (const r of ranges) {
    const to = indexOf(r.last + 1n);
    for (let i = indexOf(r.first); i < to; i++) covering[i]!.push(r);
  }
  const segments: Segment[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const holders = covering[i]!;
    if (holders.length === 0) continue;
    holders.sort((a, b) => b.prefixLength - a.prefixLength || a.id - b.id);
    const ids = holders.map((h) => h.id);
    const prev = segments[segments.length - 1];
    if (prev && prev.last + 1n === bounds[i] && sameIds(prev.ids, ids)) {
      prev.last = bounds[i + 1]! - 1n;
    } else {
      segments.push({ first: bounds[i]!, last: bounds[i + 1]! - 1n, ids });
    }
  }
  return segments;
}

function sameIds(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}
