/**
 * The answer-interval state machine (docs/api.md#states-and-staleness), held in memory.
 *
 * Per (name, record type) the state keeps the latest query outcome and the latest good answer:
 * its sorted canonical addresses (`vals`, a JSON array) and, at the same positions, the time each
 * address was first observed in the current run of answers (`firsts`). Every address of the
 * current answer is an open interval (first_observed = its entry of firsts, last_confirmed =
 * last_positive); an address that leaves the answer set ends its interval (a dns_ended row with
 * ended_at = the query that saw the change), one that joins opens one at the query's time,
 * addresses in both keep theirs. The same set in another order or with another TTL only advances
 * last_confirmed. A transient failure (timeout, servfail, malformed) never ends an interval.
 *
 * The whole DNS state is loaded from SQLite once (load.ts), observations are applied in
 * JavaScript, and `save()` writes everything in ONE transaction (save.ts). A line no newer than
 * the state's last query for its name and type is skipped, so importing a file twice changes
 * nothing. `saveInParallel()` is the same save with the dns_state rows bound in worker threads
 * (parallel-save.ts). What the state holds, and how, is in state-keys.ts.
 */
import type { StateDb } from '../state.js';
import type { ObservationRecord } from '../sources/types.js';
import { loadState } from './load.js';
import { hashBytes } from '../../shared/hash.js';
import { ObservationFields } from './observation-fields.js';
import { OUTCOME_CODES, POSITIVE, TRANSIENT } from './outcome-codes.js';
import { saveStateInParallel } from './parallel-save.js';
import { saveState, type SaveResult } from './save.js';
import { StateKeys } from './state-keys.js';
import { EMPTY_JSON } from './text-column.js';

export interface ApplyCounts {
  /** Names and types seen for the first time. */
  created: number;
  /** Same answer as before (last_confirmed advanced). */
  confirmed: number;
  /** Answer changed (intervals ended and/or opened). */
  changed: number;
  /** Transient failures recorded (state marked stale, answer kept). */
  transient: number;
  /** Lines no newer than the state: already applied, not applied again. */
  skipped: number;
}

export function emptyCounts(): ApplyCounts {
  return { created: 0, confirmed: 0, changed: 0, transient: 0, skipped: 0 };
}

export class DnsStateMachine {
  private readonly state = new StateKeys();

  // The firsts text of a new answer first seen at firstsTime, per number of addresses.
  private firstsTime = NaN;
  private readonly firstsCache: Buffer[] = [];

  private scratch = Buffer.allocUnsafe(4096);
  private readonly recordFields = new ObservationFields();

  constructor(private readonly db: StateDb) {
    loadState(db, this.state);
  }

  /** Applies one already parsed (canonical) observation. */
  applyRecord(r: ObservationRecord, counts: ApplyCounts): void {
    const f = this.recordFields;
    const vals = JSON.stringify(r.values);
    const cnames = JSON.stringify(r.cnames);
    const room = (r.name.length + vals.length + cnames.length) * 3;
    if (room > this.scratch.length) this.scratch = Buffer.allocUnsafe(room * 2);
    const b = this.scratch;
    f.buf = b;
    f.valsBuf = b;
    f.nameStart = 0;
    f.nameEnd = b.write(r.name, 0, 'utf8');
    f.nameHash = hashBytes(b, 0, f.nameEnd);
    f.valsStart = f.nameEnd;
    f.valsEnd = f.valsStart + b.write(vals, f.valsStart, 'utf8');
    f.nVals = r.values.length;
    f.cnamesStart = f.valsEnd;
    f.cnamesEnd = f.cnamesStart + b.write(cnames, f.cnamesStart, 'utf8');
    f.aaaa = r.type === 'AAAA' ? 1 : 0;
    f.time = r.time;
    f.outcome = OUTCOME_CODES.get(r.outcome)!;
    this.apply(f, counts);
  }

  /** Applies one observation. Observations of one name and type must come in time order. */
  apply(f: ObservationFields, counts: ApplyCounts): void {
    const state = this.state;
    let index = state.names.find(f.buf, f.nameStart, f.nameEnd, f.nameHash);
    if (index < 0) {
      index = state.names.add(f.buf, f.nameStart, f.nameEnd, f.nameHash);
      state.newKeys(index);
    }
    const k = index * 2 + f.aaaa;
    const t = f.time;
    const oc = f.outcome;
    if (state.outcome[k] === 0) {
      // First sight of a name and type.
      const transient = TRANSIENT[oc] === 1;
      state.outcome[k] = oc;
      state.good[k] = transient ? 0 : oc;
      if (f.nVals > 0) {
        state.vals.set(k, f.valsBuf, f.valsStart, f.valsEnd);
        const firsts = this.firstsOf(t, f.nVals);
        state.firsts.set(k, firsts, 0, firsts.length);
      }
      state.cnames.set(k, f.buf, f.cnamesStart, f.cnamesEnd);
      state.lastObserved[k] = t;
      state.lastConfirmed[k] = transient ? NaN : t;
      state.lastPositive[k] = oc === POSITIVE ? t : NaN;
      counts.created++;
    } else if (t <= state.lastObserved[k]!) {
      counts.skipped++;
      return;
    } else if (TRANSIENT[oc] === 1) {
      // The answer is kept; only the latest query moves.
      state.outcome[k] = oc;
      state.lastObserved[k] = t;
      counts.transient++;
    } else if (
      state.good[k] === oc &&
      (f.nVals === 0 ? state.vals.isEmpty(k) : state.vals.equals(k, f.valsBuf, f.valsStart, f.valsEnd))
    ) {
      // Same answer: last_confirmed advances, the CNAME chain is updated.
      state.outcome[k] = oc;
      state.lastObserved[k] = t;
      state.lastConfirmed[k] = t;
      if (oc === POSITIVE) state.lastPositive[k] = t;
      if (!state.cnames.equals(k, f.buf, f.cnamesStart, f.cnamesEnd)) {
        state.cnames.set(k, f.buf, f.cnamesStart, f.cnamesEnd);
      }
      counts.confirmed++;
    } else {
      this.change(k, f);
      counts.changed++;
    }
    if (state.dirty[k] === 0) {
      state.dirty[k] = 1;
      state.dirtyCount++;
    }
    // Comparisons false for NaN: the first applied observation sets both.
    if (!(t >= state.appliedMin)) state.appliedMin = t;
    if (!(t <= state.appliedMax)) state.appliedMax = t;
  }

  /** A different answer: addresses that left end their interval, those that joined open one. */
  private change(k: number, f: ObservationFields): void {
    const state = this.state;
    const t = f.time;
    if (!state.vals.isEmpty(k)) {
      const before = JSON.parse(state.vals.text(k)) as string[];
      const beforeFirsts = JSON.parse(state.firsts.text(k)) as number[];
      const after =
        f.nVals > 0 ? (JSON.parse(f.valsBuf.toString('utf8', f.valsStart, f.valsEnd)) as string[]) : [];
      const lastConfirmed = state.lastPositive[k]!;
      for (let i = 0; i < before.length; i++) {
        if (after.includes(before[i]!)) continue;
        state.endedKeys.push(k);
        state.endedValues.push(before[i]!);
        state.endedFirst.push(beforeFirsts[i]!);
        state.endedLast.push(lastConfirmed);
        state.endedAt.push(t);
      }
      state.firsts.setText(
        k,
        `[${after
          .map((v) => {
            const i = before.indexOf(v);
            return i < 0 ? t : beforeFirsts[i]!;
          })
          .join(',')}]`,
      );
    } else if (f.nVals > 0) {
      const firsts = this.firstsOf(t, f.nVals);
      state.firsts.set(k, firsts, 0, firsts.length);
    }
    if (f.nVals > 0) state.vals.set(k, f.valsBuf, f.valsStart, f.valsEnd);
    else state.vals.setText(k, EMPTY_JSON);
    state.cnames.set(k, f.buf, f.cnamesStart, f.cnamesEnd);
    state.outcome[k] = f.outcome;
    state.good[k] = f.outcome;
    state.lastObserved[k] = t;
    state.lastConfirmed[k] = t;
    if (f.outcome === POSITIVE) state.lastPositive[k] = t;
  }

  /** `[t,t,…]` for n addresses first seen at t (kept for the lines of the same second). */
  private firstsOf(t: number, n: number): Buffer {
    if (t !== this.firstsTime) {
      this.firstsTime = t;
      this.firstsCache.length = 0;
    }
    let text = this.firstsCache[n];
    if (text === undefined) {
      text = Buffer.from(`[${new Array<number>(n).fill(t).join(',')}]`);
      this.firstsCache[n] = text;
    }
    return text;
  }

  /**
   * Writes what changed since the last save in one transaction: new names, new dns_ended rows,
   * and the dns_state rows of changed keys, everything in key order. After an error nothing is
   * written and this machine no longer matches the database: discard it.
   */
  save(): SaveResult {
    return saveState(this.db, this.state);
  }

  /** save(), with the dns_state rows written in `workers` threads from `fromRows` rows on. */
  saveInParallel(workers: number, fromRows?: number): Promise<SaveResult> {
    return saveStateInParallel(this.db, this.state, workers, fromRows);
  }
}
