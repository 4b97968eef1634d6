/**
 * domain_page: one row per domain keyed by its name, with its current states and the first page
 * of its intervals (docs/decisions/0022). Written by the worker thread in two steps:
 *
 * 1. pageStates(), while the main thread still reads the intervals: the names' order, and each
 *    domain's states as one JSON text made by SQLite from st.dns_state (read in its own name_id
 *    order, grouped per name, sorted into name order by SQLite's sorter) into temp.page_state,
 *    keyed by the domain's position in name order.
 * 2. writeDomainPages(), once the intervals are there: the rows in name order (appends to the
 *    WITHOUT ROWID table), the intervals' JSON made here from the typed arrays, the states taken
 *    by SQLite from temp.page_state by position (increasing: the next row of the same page).
 */
import type Database from 'better-sqlite3';
import { DOMAIN_PAGE_INTERVALS } from '../../../shared/release-schema.js';
import { RowWriter } from '../../row-writer.js';
import type { IntervalArrays } from './intervals.js';
import type { PackedText } from './packed-text.js';
import { orderByBytes } from './sort-ascii.js';

/** The names' order, for writeDomainPages. */
export interface PageOrder {
  /** Domain ids in name order. */
  ids: Int32Array;
  /** max(last_observed) of st.dns_state, null when it is empty (the meta's observation window). */
  lastObserved: number | null;
}

/**
 * Sorts the names (ids from firstId, in `names` order) and fills temp.page_state (pos, states)
 * for every domain with a DNS state; `nameToDomain`: dns_name id -> domain id.
 */
export function pageStates(
  db: Database.Database,
  names: PackedText,
  firstId: number,
  nameToDomain: Int32Array,
): PageOrder {
  const order = orderByBytes(names);
  const pos = new Int32Array(names.length);
  for (let p = 0; p < order.length; p++) pos[order[p]!] = p;
  const ids = order; // reused: index -> id in place
  for (let p = 0; p < ids.length; p++) ids[p] = ids[p]! + firstId;

  db.exec(`CREATE TEMP TABLE name_pos (name_id INTEGER PRIMARY KEY, pos INTEGER NOT NULL)`);
  const insert = new RowWriter(db, 2, (rows) => `INSERT INTO temp.name_pos (name_id, pos) VALUES ${rows}`);
  for (let nameId = 1; nameId < nameToDomain.length; nameId++) {
    const d = nameToDomain[nameId]!;
    if (d !== 0) insert.row(nameId, pos[d - firstId]);
  }
  insert.flush();
  db.exec(`CREATE TEMP TABLE page_state (pos INTEGER PRIMARY KEY, states TEXT NOT NULL)`);
  // As in the old dns_state table (the same sorter, on half as many rows): small caches keep the
  // memory down while the main thread reads the intervals. The state is the outer loop, read in
  // its key order, so each name's rows are grouped without a sort and come in record-type order.
  // rtype and outcome are words of the vocabulary, vals and cnames JSON arrays already.
  const caches = [db.pragma('cache_size', { simple: true }), db.pragma('st.cache_size', { simple: true })];
  db.pragma('cache_size = -8192');
  db.pragma('st.cache_size = -8192');
  db.exec(`
    INSERT INTO temp.page_state (pos, states)
    SELECT m.pos, g.states FROM (
      SELECT name_id, '[' || group_concat('["' || rtype || '","' || outcome || '",' || vals || ',' || cnames || ','
        || last_observed || ',' || ifnull(last_confirmed, 'null') || ',' || ifnull(last_positive, 'null') || ']',
        ',' ORDER BY rtype) || ']' AS states
      FROM st.dns_state GROUP BY name_id
    ) g CROSS JOIN temp.name_pos m ON m.name_id = g.name_id
    ORDER BY m.pos;
    DROP TABLE temp.name_pos;
  `);
  const lastObserved = db.prepare(`SELECT max(last_observed) FROM st.dns_state`).pluck().get() as
    number | null;
  db.pragma(`cache_size = ${caches[0] as number}`);
  db.pragma(`st.cache_size = ${caches[1] as number}`);
  return { ids, lastObserved };
}

/**
 * Writes domain_page in name order: every domain of `order` (also those without states or
 * intervals: a name in the release is `observed`), its intervals from `iv` (in domain order).
 */
export function writeDomainPages(
  db: Database.Database,
  order: PageOrder,
  names: PackedText,
  firstId: number,
  iv: IntervalArrays,
  values: PackedText,
): void {
  // Where each domain's intervals start (they are in domain order): start[d]..start[d + 1].
  const maxId = firstId + names.length;
  const start = new Int32Array(maxId + 1);
  for (let i = 0; i < iv.count; i++) start[iv.domain[i]! + 1]!++;
  for (let d = 1; d <= maxId; d++) start[d]! += start[d - 1]!;
  // Addresses are canonical text: between quotes as they are, unless some would need escapes.
  const quoted = values.isJsonSafe()
    ? (v: number) => `"${values.get(v)}"`
    : (v: number) => JSON.stringify(values.get(v));
  const insert = new RowWriter(
    db,
    6,
    (rows) =>
      `INSERT INTO domain_page (name, id, states, intervals, interval_lo, interval_hi)
       SELECT column1, column2, ifnull((SELECT states FROM temp.page_state WHERE pos = column3), '[]'), column4,
         column5, column6
       FROM (VALUES ${rows})`,
  );
  const { ids } = order;
  for (let p = 0; p < ids.length; p++) {
    const d = ids[p]!;
    const lo = start[d]!;
    const hi = start[d + 1]!;
    let intervals = '[';
    for (let i = lo; i < hi && i < lo + DOMAIN_PAGE_INTERVALS; i++) {
      const e = iv.ended[i]!;
      intervals +=
        (i === lo ? '[' : ',[') +
        (iv.aaaa[i] ? '"AAAA",' : '"A",') +
        quoted(iv.value[i]!) +
        ',' +
        iv.first[i]! +
        ',' +
        iv.last[i]! +
        ',' +
        (e === e ? e : 'null') +
        ']';
    }
    intervals += ']';
    // dns_interval ids are the positions + 1.
    insert.row(names.get(d - firstId), d, p, intervals, lo < hi ? lo + 1 : null, lo < hi ? hi : null);
  }
  insert.flush();
  db.exec(`DROP TABLE temp.page_state`);
}
