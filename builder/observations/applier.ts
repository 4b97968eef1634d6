/**
 * Applying parsed observations (ObservationRecord, as the collector and the ZDNS import make
 * them) to the DNS state.
 */
import type { StateDb } from '../state.js';
import type { ObservationRecord } from '../sources/types.js';
import { DnsStateMachine, emptyCounts, type ApplyCounts } from '../dns-state/machine.js';
import type { SaveResult } from '../dns-state/save.js';

/**
 * Applies parsed observations through the state machine (loaded from the state database when
 * constructed). Nothing is written until save().
 */
export class ObservationApplier {
  readonly machine: DnsStateMachine;

  constructor(db: StateDb) {
    this.machine = new DnsStateMachine(db);
  }

  /** Applies records in order. Records for one name and type must come in time order. */
  apply(records: ObservationRecord[], counts: ApplyCounts = emptyCounts()): ApplyCounts {
    for (const r of records) this.machine.applyRecord(r, counts);
    return counts;
  }

  /** Writes everything applied since the last save in one transaction. */
  save(): SaveResult {
    return this.machine.save();
  }
}
