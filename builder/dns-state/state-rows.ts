/**
 * dns_state rows as few bound values as possible, written from the per-key arrays of the state
 * (a StateView): by the importing thread, or by a save worker on shared memory.
 */
import type { StateDb } from '../state.js';
import { RowWriter } from '../row-writer.js';
import { OUTCOME_SQL } from './outcome-codes.js';
import { EMPTY_JSON, textAt, type TextView } from './text-column.js';

/** Rows per multi-row INSERT into the state: fewer statement calls without huge statements. */
export const ROWS_PER_STATEMENT = 64;

const STATE_COLUMNS = `name_id, rtype, outcome, good_outcome, vals, firsts, cnames, last_observed, last_confirmed, last_positive`;

/*
 * A dns_state row is bound as few values as possible (each bound value costs about 0.1 µs,
 * a string more): column1 packs name_id × 512 + AAAA × 256 + (last_confirmed = last_observed) × 128
 * + (last_positive = last_observed) × 64 + outcome × 8 + good outcome; column2 is last_observed.
 * The other values are bound only when a row needs them (its shape): last_confirmed and
 * last_positive when they are neither null nor last_observed, vals and firsts when not empty,
 * cnames when not empty. Rows of one shape go through one multi-row INSERT.
 */
/**
 * Times are bound as t - TIME_BASE (added back in SQL): small integers, which V8 keeps unboxed,
 * where epoch seconds would allocate a heap number per value. Any time stays exact.
 */
const TIME_BASE = 1_800_000_000;
const SHAPE_CONFIRMED = 1;
const SHAPE_POSITIVE = 2;
const SHAPE_VALS = 4;
const SHAPE_CNAMES = 8;

function stateSql(shape: number, replace: boolean, rows: string): string {
  let column = 3;
  const next = (): string => `column${column++}`;
  const time = (flag: number, bit: number): string =>
    shape & flag ? `${next()} + ${TIME_BASE}` : `CASE WHEN column1 & ${bit} THEN column2 + ${TIME_BASE} END`;
  const confirmed = time(SHAPE_CONFIRMED, 128);
  const positive = time(SHAPE_POSITIVE, 64);
  const vals = shape & SHAPE_VALS ? next() : `'${EMPTY_JSON}'`;
  const firsts = shape & SHAPE_VALS ? next() : `'${EMPTY_JSON}'`;
  const cnames = shape & SHAPE_CNAMES ? next() : `'${EMPTY_JSON}'`;
  return `INSERT ${replace ? 'OR REPLACE ' : ''}INTO dns_state (${STATE_COLUMNS})
    SELECT column1 >> 9, CASE WHEN column1 & 256 THEN 'AAAA' ELSE 'A' END,
      ${OUTCOME_SQL('((column1 >> 3) & 7)')}, ${OUTCOME_SQL('(column1 & 7)')},
      ${vals}, ${firsts}, ${cnames}, column2 + ${TIME_BASE}, ${confirmed}, ${positive}
    FROM (VALUES ${rows})`;
}

function shapeColumns(shape: number): number {
  return (
    2 +
    (shape & SHAPE_CONFIRMED ? 1 : 0) +
    (shape & SHAPE_POSITIVE ? 1 : 0) +
    (shape & SHAPE_VALS ? 2 : 0) +
    (shape & SHAPE_CNAMES ? 1 : 0)
  );
}

/** What writeStateRows reads: the per-key arrays and texts of a DnsStateMachine. */
export interface StateView {
  nameIds: Float64Array;
  outcome: Uint8Array;
  good: Uint8Array;
  dirty: Uint8Array;
  lastObserved: Float64Array;
  lastConfirmed: Float64Array;
  lastPositive: Float64Array;
  vals: TextView;
  firsts: TextView;
  cnames: TextView;
}

/**
 * Inserts the dns_state rows of the names `order` lists (name indexes, in id order): every key
 * with a state (all) or the changed ones; with OR REPLACE when `replace`. Runs in the importing
 * thread or in a save worker (save-worker.ts), on a view of shared memory. Returns how many.
 */
export function writeStateRows(
  db: StateDb,
  view: StateView,
  order: Int32Array,
  all: boolean,
  replace: boolean,
): number {
  const { nameIds, outcome, good, dirty, lastObserved, lastConfirmed, lastPositive } = view;
  // Views that crossed a thread boundary arrive as plain Uint8Arrays: Buffers again.
  const asBuffer = (t: TextView): TextView => {
    const bytes: Uint8Array = t.bytes;
    return {
      ...t,
      bytes: Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length),
    };
  };
  const vals = asBuffer(view.vals);
  const firsts = asBuffer(view.firsts);
  const cnames = asBuffer(view.cnames);
  const writers: RowWriter[] = [];
  for (let r = 0; r < order.length; r++) {
    const index = order[r]!;
    const nameId = nameIds[index]!;
    for (let k = index * 2; k < index * 2 + 2; k++) {
      const oc = outcome[k]!;
      if (oc === 0 || (!all && dirty[k] === 0)) continue;
      const observed = lastObserved[k]!;
      const confirmed = lastConfirmed[k]!;
      const positive = lastPositive[k]!;
      const confirmedSame = confirmed === observed;
      const positiveSame = positive === observed;
      const shape =
        (confirmedSame || confirmed !== confirmed ? 0 : SHAPE_CONFIRMED) |
        (positiveSame || positive !== positive ? 0 : SHAPE_POSITIVE) |
        (vals.lengths[k] === 0 ? 0 : SHAPE_VALS) |
        (cnames.lengths[k] === 0 ? 0 : SHAPE_CNAMES);
      const w = (writers[shape] ??= new RowWriter(
        db,
        shapeColumns(shape),
        (rows) => stateSql(shape, replace, rows),
        ROWS_PER_STATEMENT,
      ));
      const v = w.values;
      let at = w.at;
      v[at++] =
        nameId * 512 +
        (k & 1) * 256 +
        (confirmedSame ? 128 : 0) +
        (positiveSame ? 64 : 0) +
        oc * 8 +
        good[k]!;
      v[at++] = observed - TIME_BASE;
      if (shape & SHAPE_CONFIRMED) v[at++] = confirmed - TIME_BASE;
      if (shape & SHAPE_POSITIVE) v[at++] = positive - TIME_BASE;
      if (shape & SHAPE_VALS) {
        v[at++] = textAt(vals, k);
        v[at++] = textAt(firsts, k);
      }
      if (shape & SHAPE_CNAMES) v[at++] = textAt(cnames, k);
      w.endRow();
    }
  }
  let written = 0;
  for (const w of writers) {
    if (!w) continue;
    w.flush();
    written += w.written;
  }
  return written;
}
