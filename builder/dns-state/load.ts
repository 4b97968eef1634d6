/**
 * Loads the DNS state (dns_name and dns_state) from SQLite into a StateKeys, once per import.
 */
import type { StateDb } from '../state.js';
import { OUTCOME_CODE_SQL } from './outcome-codes.js';
import { withSaveCache } from './save.js';
import type { StateKeys } from './state-keys.js';
import { EMPTY_JSON } from './text-column.js';

/** Rows per query when the state is loaded (texts of that many rows in one string). */
const LOAD_ROWS = 16384;

/**
 * Loads dns_name and dns_state. Rows are fetched LOAD_ROWS at a time with their values joined
 * into a few strings by SQLite (group_concat): fetching millions of rows one by one costs a few
 * microseconds each through better-sqlite3. The strings of one query list the rows in the same
 * order, whatever it is.
 */
export function loadState(db: StateDb, state: StateKeys): void {
  // The load reads each table once, in order: a small page cache does, and spares memory.
  withSaveCache(db, () => {
    loadNames(db, state);
    loadStates(db, state);
  });
}

/** dns_name: the names, their ids, and the name indexes in id order. */
function loadNames(db: StateDb, state: StateKeys): void {
  const names = db.prepare(
    `SELECT count(*), group_concat(id, ','), group_concat(name, char(10))
     FROM (SELECT id, name FROM dns_name WHERE id > ? ORDER BY id LIMIT ${LOAD_ROWS})`,
  );
  let after = -Infinity;
  for (;;) {
    const [count, ids, text] = names.raw().get(after) as [number, string | null, string | null];
    if (count === 0) break;
    const first = state.names.count;
    if (state.names.addMany(text!) !== count) throw new Error('dns_name: a name spans lines');
    const parsed = JSON.parse(`[${ids!}]`) as number[];
    for (let i = 0; i < count; i++) {
      state.newKeys(first + i);
      state.nameIds[first + i] = parsed[i]!;
      after = Math.max(after, parsed[i]!);
    }
  }
  state.storedNames = state.names.count;
  state.nextNameId = Number.isFinite(after) ? after + 1 : 1;
  // Name indexes by id, to find the name of a dns_state row.
  const byId = state.byId.subarray(0, state.storedNames);
  let sorted = true;
  for (let i = 0; i < byId.length; i++) {
    byId[i] = i;
    if (i > 0 && state.nameIds[i]! < state.nameIds[i - 1]!) sorted = false;
  }
  if (!sorted) byId.sort((a, b) => state.nameIds[a]! - state.nameIds[b]!);
}

/** dns_state: the codes, times and texts of every key (its name loaded before). */
function loadStates(db: StateDb, state: StateKeys): void {
  const text = (column: string): string =>
    `group_concat(CASE ${column} WHEN '${EMPTY_JSON}' THEN '' ELSE ${column} END, char(10))`;
  const states = db.prepare(
    `SELECT count(*),
       group_concat(name_id || ',' || CASE rtype WHEN 'A' THEN 0 WHEN 'AAAA' THEN 1 ELSE -1 END
         || ',' || ${OUTCOME_CODE_SQL('outcome')} || ',' || ${OUTCOME_CODE_SQL(`coalesce(good_outcome, '')`)}
         || ',' || last_observed || ',' || ifnull(last_confirmed, 'null') || ',' || ifnull(last_positive, 'null'), ','),
       ${text('vals')}, ${text('firsts')}, ${text('cnames')}
     FROM (SELECT * FROM dns_state WHERE (name_id, rtype) > (?, ?) ORDER BY name_id, rtype LIMIT ${LOAD_ROWS})`,
  );
  const keys = new Int32Array(LOAD_ROWS);
  let afterId = -Infinity;
  let afterType = 0;
  for (;;) {
    const row = states.raw().get(afterId, afterType === 1 ? 'AAAA' : 'A') as [
      number,
      string,
      string,
      string,
      string,
    ];
    const count = row[0];
    if (count === 0) break;
    const numbers = JSON.parse(`[${row[1]}]`) as Array<number | null>;
    for (let i = 0; i < count; i++) {
      const nameId = numbers[i * 7]!;
      const aaaa = numbers[i * 7 + 1]!;
      const oc = numbers[i * 7 + 2]!;
      const good = numbers[i * 7 + 3]!;
      const index = state.indexOfId(nameId);
      if (index < 0)
        throw new Error(`dns_state has a row for name id ${nameId}, which dns_name does not list`);
      if (aaaa < 0 || oc <= 0 || good < 0) {
        throw new Error(`dns_state row of name id ${nameId} has an unknown record type or outcome`);
      }
      if (nameId > afterId || (nameId === afterId && aaaa > afterType)) {
        afterId = nameId;
        afterType = aaaa;
      }
      const k = index * 2 + aaaa;
      keys[i] = k;
      state.outcome[k] = oc;
      state.good[k] = good;
      state.lastObserved[k] = numbers[i * 7 + 4]!;
      state.lastConfirmed[k] = numbers[i * 7 + 5] ?? NaN;
      state.lastPositive[k] = numbers[i * 7 + 6] ?? NaN;
    }
    state.vals.load(row[2], keys, count);
    state.firsts.load(row[3], keys, count);
    state.cnames.load(row[4], keys, count);
  }
}
