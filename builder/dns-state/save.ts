/**
 * Saves the DNS state in ONE transaction: the new names, the new dns_ended rows, the dns_state
 * rows that changed and a dns_round row (the times of the observations applied). Nothing reaches the database before that commit, so a process that dies
 * mid-import leaves the state as it was, and the rerun redoes the work. saveStateInParallel
 * (parallel-save.ts) is the same save with the dns_state rows bound in worker threads.
 */
import { nowEpoch } from '../../shared/time.js';
import type { StateDb } from '../state.js';
import { RowWriter } from '../row-writer.js';
import type { StateKeys } from './state-keys.js';
import { ROWS_PER_STATEMENT, writeStateRows } from './state-rows.js';

export interface SaveResult {
  /** Names written to dns_name. */
  names: number;
  /** Rows appended to dns_ended. */
  ended: number;
  /** dns_state rows written. */
  states: number;
  /** 'replace': INSERT OR REPLACE of the changed keys; 'rewrite': DELETE and insert all keys. */
  mode: 'replace' | 'rewrite' | 'none';
  /** Worker threads that wrote dns_state rows (0: this thread did). */
  partitions: number;
  seconds: number;
  /** Seconds per step: sorting new names, writing names, ended rows, states, and the commit. */
  steps: { sort: number; names: number; ended: number; states: number; commit: number };
}

/**
 * Share of changed keys from which saveState() rewrites dns_state whole (DELETE, then insert every key
 * in key order) instead of INSERT OR REPLACE per changed key (also in key order). Measured with
 * all 4,000,000 keys changed (a second round imported into a saved first one), both take the
 * same time within the noise of the machine (10.1 s and 10.1 s, 13.1 s and 10.9 s): a replace
 * of a WITHOUT ROWID row found by its key costs about what an append does. The rewrite is kept
 * for states where most keys changed (every confirmation changes its key) because it leaves a
 * freshly packed table and, in saveStateInParallel(), lets SQLite copy the workers' rows into the
 * emptied table as whole records (1.6 s for 4 million rows; 3.3 s with OR REPLACE over them);
 * replace otherwise, which only touches the changed keys.
 */
const REWRITE_SHARE = 0.75;

/** SQLite page cache while saving (KiB, as PRAGMA cache_size takes it when negative). */
export const SAVE_CACHE_SIZE = -32768;

/** A save under way (prepareSave). */
export interface SavePlan {
  started: number;
  /** New name indexes in id order. */
  fresh: Int32Array;
  /** All name indexes in id order. */
  order: Int32Array;
  result: SaveResult;
  /** When the current step began. */
  mark: number;
}

/**
 * Writes what changed since the last save in one transaction: new names, new dns_ended rows,
 * and the dns_state rows of changed keys, everything in key order. After an error nothing is
 * written and this state no longer matches the database: discard it.
 */
export function saveState(db: StateDb, state: StateKeys): SaveResult {
  const plan = prepareSave(state);
  const mode = plan.result.mode;
  withSaveCache(db, () => {
    db.transaction(() => {
      writeNamesAndEnded(db, state, plan);
      if (mode === 'none') return;
      if (mode === 'rewrite') db.prepare(`DELETE FROM dns_state`).run();
      plan.result.states = writeStateRows(
        db,
        state.view(),
        plan.order,
        mode === 'rewrite',
        mode === 'replace',
      );
      step(plan, 'states');
    })();
    step(plan, 'commit');
  });
  return finishSave(state, plan);
}

/**
 * What a save writes: ids for the new names (in name order, above every stored id), the
 * names in id order, and whether dns_state is rewritten whole or only changed keys replaced.
 */
export function prepareSave(state: StateKeys): SavePlan {
  const started = performance.now();
  const fresh = state.names.sortedByPrefix(state.storedNames);
  for (let r = 0; r < fresh.length; r++) state.nameIds[fresh[r]!] = state.nextNameId + r;
  const order = new Int32Array(state.names.count);
  order.set(state.byId.subarray(0, state.storedNames));
  order.set(fresh, state.storedNames);
  let present = 0;
  for (let k = 0; k < state.names.count * 2; k++) if (state.outcome[k] !== 0) present++;
  const mode: SaveResult['mode'] =
    state.dirtyCount === 0 ? 'none' : state.dirtyCount >= present * REWRITE_SHARE ? 'rewrite' : 'replace';
  const steps = { sort: (performance.now() - started) / 1000, names: 0, ended: 0, states: 0, commit: 0 };
  return {
    started,
    fresh,
    order,
    result: { names: 0, ended: 0, states: 0, mode, partitions: 0, seconds: 0, steps },
    mark: performance.now(),
  };
}

/** Adds the time since the last step to the step `name`. */
export function step(plan: SavePlan, name: keyof SaveResult['steps']): void {
  const now = performance.now();
  plan.result.steps[name] += (now - plan.mark) / 1000;
  plan.mark = now;
}

/** Inserts the new names (in id order) and the dns_ended rows not yet saved. */
export function writeNamesAndEnded(db: StateDb, state: StateKeys, plan: SavePlan): void {
  const names = new RowWriter(
    db,
    2,
    (rows) => `INSERT INTO dns_name (id, name) VALUES ${rows}`,
    ROWS_PER_STATEMENT,
  );
  const nv = names.values;
  for (const index of plan.fresh) {
    const at = names.at;
    nv[at] = state.nameIds[index];
    nv[at + 1] = state.names.name(index);
    names.endRow();
  }
  names.flush();
  plan.result.names = names.written;
  step(plan, 'names');
  const ended = new RowWriter(
    db,
    6,
    (rows) =>
      `INSERT INTO dns_ended (name_id, rtype, value, first_observed, last_confirmed, ended_at)
       SELECT column1, CASE column2 WHEN 1 THEN 'AAAA' ELSE 'A' END, column3, column4, column5, column6
       FROM (VALUES ${rows})`,
    ROWS_PER_STATEMENT,
  );
  const ev = ended.values;
  for (let i = 0; i < state.endedKeys.length; i++) {
    const k = state.endedKeys[i]!;
    const at = ended.at;
    ev[at] = state.nameIds[k >> 1];
    ev[at + 1] = k & 1;
    ev[at + 2] = state.endedValues[i];
    ev[at + 3] = state.endedFirst[i];
    ev[at + 4] = state.endedLast[i];
    ev[at + 5] = state.endedAt[i];
    ended.endRow();
  }
  ended.flush();
  plan.result.ended = ended.written;
  if (!Number.isNaN(state.appliedMin)) {
    db.prepare(`INSERT INTO dns_round (applied_at, min_observed, max_observed) VALUES (?, ?, ?)`).run(
      nowEpoch(),
      state.appliedMin,
      state.appliedMax,
    );
  }
  step(plan, 'ended');
}

/** After the commit: the state in memory now matches the database. */
export function finishSave(state: StateKeys, plan: SavePlan): SaveResult {
  state.byId.set(plan.fresh, state.storedNames);
  state.nextNameId += plan.fresh.length;
  state.storedNames = state.names.count;
  state.endedKeys = [];
  state.endedValues = [];
  state.endedFirst = [];
  state.endedLast = [];
  state.endedAt = [];
  state.appliedMin = NaN;
  state.appliedMax = NaN;
  state.dirty.fill(0);
  state.dirtyCount = 0;
  plan.result.seconds = (performance.now() - plan.started) / 1000;
  return plan.result;
}

/** Runs fn with the small page cache of a save or a load (each goes through the tables in order). */
export function withSaveCache<T>(db: StateDb, fn: () => T): T {
  const cacheSize = db.pragma('cache_size', { simple: true }) as number;
  db.pragma(`cache_size = ${SAVE_CACHE_SIZE}`);
  try {
    return fn();
  } finally {
    db.pragma(`cache_size = ${cacheSize}`);
  }
}
