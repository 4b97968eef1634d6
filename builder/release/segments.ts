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
  const points = new Set<bigint>();
  for (const r of ranges) {
    points.add(r.first);
    points.add(r.last + 1n);
  }
  const bounds = [...points].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const indexOf = new Map<bigint, number>();
  bounds.forEach((b, i) => indexOf.set(b, i));
  // covering[i] = ids holding the elementary interval bounds[i] .. bounds[i+1]-1
  const covering: number[][] = Array.from({ length: bounds.length }, () => []);
  const byId = new Map<number, SegmentInput>();
  for (const r of ranges) {
    byId.set(r.id, r);
    const from = indexOf.get(r.first)!;
    const to = indexOf.get(r.last + 1n)!;
    for (let i = from; i < to; i++) covering[i]!.push(r.id);
  }
  const segments: Segment[] = [];
  for (let i = 0; i + 1 < bounds.length; i++) {
    const ids = covering[i]!;
    if (ids.length === 0) continue;
    ids.sort((a, b) => byId.get(b)!.prefixLength - byId.get(a)!.prefixLength || a - b);
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
