/**
 * The release's IP-to-ASN mapping: every imported mapping layered per address
 * (docs/decisions/0014-answers-on-real-feeds.md).
 *
 * - Sources are ranked by ASN_MAPPING, then any other imported mapping by name.
 * - Every row of the first source is kept, nested and overlapping rows included. A row of a later
 *   source is kept when it lies at least partly outside every row of the earlier sources: it fills
 *   their gaps; a row they cover entirely is dropped.
 * - An address is answered by the highest-ranked source with a kept row holding it, and of that
 *   source's rows by the smallest (fewest addresses; on a tie the row listed first in its files).
 *   So a "Not routed" row nested in a routed one answers `asn: null`, and a more specific route
 *   of another AS answers for its own addresses.
 *
 * The kept rows go to asn_range (ids in page order: IPv4 first, then by first address, larger
 * rows first); the address space is cut into asn_segment pieces, each naming the row that answers
 * there, so a lookup is one binary search.
 */
import type Database from 'better-sqlite3';
import { ipKey, parseIp, rangeToCidrs, type IpVersion } from '../../shared/ip.js';
import { RowWriter } from '../row-writer.js';
import { RangeTable } from './range-table.js';

export interface MappingRow {
  /** asn_range id (page order), set by layerMappings. */
  id: number;
  /** Position of the source in the preference order (0 = preferred). */
  rank: number;
  /** Position of the row in its source's snapshot (file order). */
  seq: number;
  source: string;
  version: IpVersion;
  first: bigint;
  last: bigint;
  /** The canonical texts of first and last, as the state holds them. */
  firstText: string;
  lastText: string;
  /** 0 = not routed. */
  asn: number;
  country: string | null;
  descr: string | null;
}

/** A piece of address space answered by one row. */
export interface MappingSegment {
  version: IpVersion;
  first: bigint;
  last: bigint;
  row: MappingRow;
}

export interface LayeredMapping {
  /** The kept rows in id order. */
  rows: MappingRow[];
  segments: MappingSegment[];
  /** Every row read, kept or not (id 0), in read order: source rank, then file order. */
  all: MappingRow[];
}

/** Sources in preference order: those named in `preference`, then the others by name. */
export function rankSources(available: string[], preference: string[]): string[] {
  const named = preference.filter((s) => available.includes(s));
  return [...named, ...available.filter((s) => !named.includes(s)).sort()];
}

/** Reads every row of every imported mapping from the attached state (`st`), ranked. */
export function readMappingRows(db: Database.Database, preference: string[]): MappingRow[] {
  const sources = db.prepare(`SELECT DISTINCT source FROM st.asn_range`).pluck().all() as string[];
  const ranked = rankSources(sources, preference);
  const select = db
    .prepare(
      `SELECT seq, version, first, last, asn, country, descr FROM st.asn_range WHERE source = ? ORDER BY seq`,
    )
    .raw();
  const rows: MappingRow[] = [];
  ranked.forEach((source, rank) => {
    for (const r of select.iterate(source) as IterableIterator<
      [number, number, string, string, number, string | null, string | null]
    >) {
      const first = parseIp(r[2]);
      const last = parseIp(r[3]);
      if (!first || !last) throw new Error(`state asn_range ${source} row ${r[0]}: unreadable range`);
      rows.push({
        id: 0,
        rank,
        seq: r[0],
        source,
        version: first.version,
        first: first.value,
        last: last.value,
        firstText: r[2],
        lastText: r[3],
        asn: r[4],
        country: r[5],
        descr: r[6],
      });
    }
  });
  return rows;
}

const compareBig = (a: bigint, b: bigint): number => (a < b ? -1 : a > b ? 1 : 0);

/** Of two rows holding an address, the one that answers there comes first. */
function answersBefore(a: MappingRow, b: MappingRow): boolean {
  if (a.rank !== b.rank) return a.rank < b.rank;
  const sizeA = a.last - a.first;
  const sizeB = b.last - b.first;
  if (sizeA !== sizeB) return sizeA < sizeB;
  return a.seq < b.seq;
}

/** Page order: IPv4 first, then by first address, a larger row before the rows nested at its start. */
function pageOrder(a: MappingRow, b: MappingRow): number {
  if (a.version !== b.version) return a.version - b.version;
  if (a.version === 4) {
    // IPv4 values are exact as numbers, and numbers compare faster than bigints.
    const byFirst = Number(a.first) - Number(b.first);
    if (byFirst !== 0) return byFirst;
    const byLast = Number(b.last) - Number(a.last);
    if (byLast !== 0) return byLast;
  } else {
    const byFirst = compareBig(a.first, b.first);
    if (byFirst !== 0) return byFirst;
    const byLast = compareBig(b.last, a.last);
    if (byLast !== 0) return byLast;
  }
  return a.rank - b.rank || a.seq - b.seq;
}

/**
 * Keeps the rows the layering uses (their ids set, in page order; a dropped row keeps id 0) and
 * cuts the space into segments. `all` is in read order (source rank, then file order).
 */
export function layerMappings(all: MappingRow[]): LayeredMapping {
  const sorted = [...all].sort(pageOrder);
  const kept: MappingRow[] = [];
  const ranks = new Set(all.map((r) => r.rank)).size;
  for (const version of [4, 6] as const) {
    // The union of the rows of the ranks before r, as sorted, merged intervals.
    let earlier: Array<[bigint, bigint]> = [];
    for (let rank = 0; rank < ranks; rank++) {
      const union: Array<[bigint, bigint]> = [];
      for (const r of sorted) {
        if (r.version !== version) continue;
        if (r.rank === rank && !coveredBy(earlier, r.first, r.last)) r.id = -1;
        if (r.rank <= rank) {
          const top = union[union.length - 1];
          if (top && r.first <= top[1] + 1n) {
            if (r.last > top[1]) top[1] = r.last;
          } else union.push([r.first, r.last]);
        }
      }
      earlier = union;
    }
  }
  for (const r of sorted) {
    if (r.id !== -1) continue;
    kept.push(r);
    r.id = kept.length;
  }
  // kept is in page order, so each family's rows are in order of their first address.
  const segments: MappingSegment[] = [];
  sweepSegments(
    kept.filter((r) => r.version === 4),
    segments,
  );
  sweepSegments(
    kept.filter((r) => r.version === 6),
    segments,
  );
  return { rows: kept, segments, all };
}

/**
 * Walks the rows (one family, sorted by first address) from change point to change point, keeping
 * the rows that hold the current address (`open`; nesting is shallow, so a list), and appends a
 * segment per stretch answered by one row.
 */
function sweepSegments(rows: MappingRow[], out: MappingSegment[]): void {
  let open: MappingRow[] = [];
  let i = 0;
  let at = 0n;
  while (i < rows.length || open.length > 0) {
    if (open.length === 0) at = rows[i]!.first;
    while (i < rows.length && rows[i]!.first <= at) open.push(rows[i++]!);
    open = open.filter((r) => r.last >= at);
    if (open.length === 0) continue;
    let best = open[0]!;
    let end = best.last;
    for (const r of open) {
      if (answersBefore(r, best)) best = r;
      if (r.last < end) end = r.last;
    }
    if (i < rows.length && rows[i]!.first - 1n < end) end = rows[i]!.first - 1n;
    const previous = out[out.length - 1];
    if (previous && previous.row === best && previous.last + 1n === at) previous.last = end;
    else out.push({ version: best.version, first: at, last: end, row: best });
    at = end + 1n;
  }
}

/** Sorted, merged (touching intervals joined) copy of `intervals`. */
export function mergeIntervals(intervals: Array<[bigint, bigint]>): Array<[bigint, bigint]> {
  const sorted = [...intervals].sort((a, b) => compareBig(a[0], b[0]));
  const merged: Array<[bigint, bigint]> = [];
  for (const [first, last] of sorted) {
    const top = merged[merged.length - 1];
    if (top && first <= top[1] + 1n) {
      if (last > top[1]) top[1] = last;
    } else merged.push([first, last]);
  }
  return merged;
}

/** True when first..last lies inside one interval of `merged` (sorted, merged). */
function coveredBy(merged: Array<[bigint, bigint]>, first: bigint, last: bigint): boolean {
  let lo = 0;
  let hi = merged.length - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (merged[mid]![0] <= first) lo = mid + 1;
    else hi = mid - 1;
  }
  return hi >= 0 && merged[hi]![1] >= last;
}

/** Addresses of `merged` (sorted, merged) that also lie in `other` (sorted, merged). */
export function overlapSize(merged: Array<[bigint, bigint]>, other: Array<[bigint, bigint]>): bigint {
  let total = 0n;
  for (const [first, last] of merged) {
    // The first interval of `other` that could overlap: the last one starting at or before `first`.
    let lo = 0;
    let hi = other.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      if (other[mid]![0] <= first) lo = mid + 1;
      else hi = mid - 1;
    }
    for (let k = Math.max(0, hi); k < other.length && other[k]![0] <= last; k++) {
      const from = other[k]![0] > first ? other[k]![0] : first;
      const to = other[k]![1] < last ? other[k]![1] : last;
      if (to >= from) total += to - from + 1n;
    }
  }
  return total;
}

/** Writes asn_range (the kept rows) and asn_segment; returns the AS number answering each address. */
export function writeMapping(
  db: Database.Database,
  mapping: LayeredMapping,
): RangeTable<{ asn: number | null }> {
  const ranges = new RowWriter(
    db,
    11,
    (rows) =>
      `INSERT INTO asn_range (id, first, last, version, first_text, last_text, asn, country, descr, prefixes, source) VALUES ${rows}`,
  );
  for (const r of mapping.rows) {
    ranges.row(
      r.id,
      ipKey(r.version, r.first),
      ipKey(r.version, r.last),
      r.version,
      r.firstText,
      r.lastText,
      r.asn === 0 ? null : r.asn,
      r.country,
      r.descr,
      JSON.stringify(rangeToCidrs(r.version, r.first, r.last)),
      r.source,
    );
  }
  ranges.flush();
  const segments = new RowWriter(
    db,
    3,
    (rows) => `INSERT INTO asn_segment (first, last, range_id) VALUES ${rows}`,
  );
  const table = new RangeTable<{ asn: number | null }>();
  const values = new Map<number, { asn: number | null }>();
  for (const s of mapping.segments) {
    segments.row(ipKey(s.version, s.first), ipKey(s.version, s.last), s.row.id);
    const asn = s.row.asn === 0 ? null : s.row.asn;
    let value = values.get(s.row.asn);
    if (!value) values.set(s.row.asn, (value = { asn }));
    table.add(s.version, s.first, s.last, value);
  }
  segments.flush();
  return table;
}

/**
 * For each query range, of `rows` (kept rows, page order) the row that holds all of it and would answer there: of the rows
 * holding the whole range, the one of the best-ranked source, then the smallest; null when no row
 * holds all of it. For the per-AS providers block: a published range counts for that row's AS.
 */
export function rowsContaining(
  rows: MappingRow[],
  queries: Array<{ version: IpVersion; first: bigint; last: bigint }>,
): Array<MappingRow | null> {
  const answers = new Array<MappingRow | null>(queries.length).fill(null);
  for (const version of [4, 6] as const) {
    // `rows` is in page order: each family's rows by first address.
    const family = rows.filter((r) => r.version === version);
    const order = queries
      .map((q, index) => ({ q, index }))
      .filter(({ q }) => q.version === version)
      .sort((a, b) => compareBig(a.q.first, b.q.first));
    let open: MappingRow[] = [];
    let i = 0;
    for (const { q, index } of order) {
      while (i < family.length && family[i]!.first <= q.first) open.push(family[i++]!);
      open = open.filter((r) => r.last >= q.first);
      let best: MappingRow | null = null;
      for (const r of open) if (r.last >= q.last && (best === null || answersBefore(r, best))) best = r;
      answers[index] = best;
    }
  }
  return answers;
}
