/**
 * What the DNS state holds in memory: the names with their dns_name ids, and per key (name index
 * × 2 + record type) typed arrays for the codes and the times and the three JSON texts; plus the
 * dns_ended rows not yet saved. No JavaScript object per name or key, so major garbage
 * collections stay cheap, and the arrays sit in SharedArrayBuffers that save workers read in
 * place. Filled by loadState, changed by DnsStateMachine, written by saveState.
 */
import { grow, sharedF64, sharedU8 } from './memory.js';
import { NameTable } from './name-table.js';
import type { StateView } from './state-rows.js';
import { TextColumn } from './text-column.js';

export class StateKeys {
  readonly names = new NameTable();
  /**
   * dns_name.id per name index. New names get theirs when saved: above every stored id, ordered
   * by name, so both B-trees of dns_name (rowid and the UNIQUE index) are (nearly) only appended
   * to.
   */
  nameIds = sharedF64(1024);
  /** Name indexes by ascending id: [0, storedNames) are in dns_name. */
  byId = new Int32Array(1024);
  storedNames = 0;
  nextNameId = 1;

  // Per key = name index × 2 + (AAAA ? 1 : 0). Outcome 0: no state yet. Times: epoch seconds, NaN = null.
  outcome = sharedU8(2048);
  good = sharedU8(2048);
  dirty = sharedU8(2048);
  lastObserved = sharedF64(2048);
  lastConfirmed = sharedF64(2048);
  lastPositive = sharedF64(2048);
  readonly vals = new TextColumn();
  readonly firsts = new TextColumn();
  readonly cnames = new TextColumn();
  dirtyCount = 0;

  // dns_ended rows not yet saved.
  endedKeys: number[] = [];
  endedValues: string[] = [];
  endedFirst: number[] = [];
  endedLast: number[] = [];
  endedAt: number[] = [];

  /**
   * Oldest and newest time of the observations applied since the last save (NaN: none), the
   * dns_round row the save appends.
   */
  appliedMin = NaN;
  appliedMax = NaN;

  /** Index of the stored name with this id, or -1 (binary search in byId). */
  indexOfId(id: number): number {
    let lo = 0;
    let hi = this.storedNames - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const index = this.byId[mid]!;
      const x = this.nameIds[index]!;
      if (x === id) return index;
      if (x < id) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  /** Room for the two keys of a new name index. */
  newKeys(index: number): void {
    if (index >= this.nameIds.length) {
      this.nameIds = grow(this.nameIds, sharedF64(this.nameIds.length * 2));
      this.byId = grow(this.byId, new Int32Array(this.byId.length * 2));
    }
    const keys = (index + 1) * 2;
    if (keys > this.outcome.length) {
      const size = this.outcome.length * 2;
      this.outcome = grow(this.outcome, sharedU8(size));
      this.good = grow(this.good, sharedU8(size));
      this.dirty = grow(this.dirty, sharedU8(size));
      this.lastObserved = grow(this.lastObserved, sharedF64(size));
      this.lastConfirmed = grow(this.lastConfirmed, sharedF64(size));
      this.lastPositive = grow(this.lastPositive, sharedF64(size));
      this.vals.ensure(size);
      this.firsts.ensure(size);
      this.cnames.ensure(size);
    }
  }

  /** The per-key arrays and texts as they are now. */
  view(): StateView {
    return {
      nameIds: this.nameIds,
      outcome: this.outcome,
      good: this.good,
      dirty: this.dirty,
      lastObserved: this.lastObserved,
      lastConfirmed: this.lastConfirmed,
      lastPositive: this.lastPositive,
      vals: this.vals.view(),
      firsts: this.firsts.view(),
      cnames: this.cnames.view(),
    };
  }
}
