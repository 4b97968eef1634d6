/**
 * What a worker of `--workers N` knows of the units used of the counters it holds leases of
 * (ipc-counters.ts): for each counter (a workspace's minute window or month, a capped project's
 * month), the primary's count as of the worker's batch `ack`, plus the units this worker handed
 * out since (those the primary has not counted yet: not sent, or in a batch after `ack`). The limit
 * headers of a unit handed out from a lease are these sums, so they count every unit the primary
 * had counted when it last told this worker, and every unit this worker handed out.
 */
import type { TakeResult } from '../limits/counters.js';
import { counterKeys } from './lent-units.js';
import type { LeaseScope, UsedCount } from './messages.js';

interface View {
  /** The primary's count of units used. */
  known: number;
  /** Units handed out here, sent in batch `seq`, not in `known` yet: [seq, units, seq, units, …]. */
  pending: number[];
  /** Units handed out here, not sent yet. */
  unsent: number;
}

function own(view: View): number {
  let units = view.unsent;
  for (let i = 1; i < view.pending.length; i += 2) units += view.pending[i]!;
  return units;
}

function acknowledge(view: View, ack: number): void {
  let i = 0;
  while (i < view.pending.length && view.pending[i]! <= ack) i += 2;
  if (i > 0) view.pending.splice(0, i);
}

export class UsedViews {
  private readonly views = new Map<string, View>();
  /** Keys with units not sent yet. */
  private readonly unsent = new Set<string>();

  /** A lease granted with `result` (units used, answered after the worker's batch `ack`). */
  seed(scope: LeaseScope, result: TakeResult, ack: number): void {
    const keys = counterKeys(scope);
    this.set(keys.minute, result.minuteUsed, ack);
    this.set(keys.month, result.monthUsed, ack);
    if (keys.project !== null) this.set(keys.project, result.projectUsed, ack);
  }

  /** `units` of a lease of `scope` handed out here (negative: given back to the lease). */
  handed(scope: LeaseScope, units: number): void {
    const keys = counterKeys(scope);
    this.add(keys.minute, units);
    this.add(keys.month, units);
    if (keys.project !== null) this.add(keys.project, units);
  }

  /** The units used of a lease's counters as this worker knows them. */
  used(scope: LeaseScope): { minuteUsed: number; monthUsed: number; projectUsed: number } {
    const keys = counterKeys(scope);
    return {
      minuteUsed: this.value(keys.minute),
      monthUsed: this.value(keys.month),
      projectUsed: keys.project === null ? 0 : this.value(keys.project),
    };
  }

  /** The units not sent yet went out in batch `seq`. */
  sent(seq: number): void {
    for (const key of this.unsent) {
      const view = this.views.get(key);
      if (view !== undefined && view.unsent !== 0) {
        view.pending.push(seq, view.unsent);
        view.unsent = 0;
      }
    }
    this.unsent.clear();
  }

  /** The primary's counts after this worker's batch `ack`. */
  apply(counts: UsedCount[], ack: number): void {
    for (const count of counts) {
      if (count.kind === 'workspace') {
        const keys = counterKeys({ ...count, workspaceId: count.id, projectId: '', project: false });
        this.update(keys.minute, count.minuteUsed, ack);
        this.update(keys.month, count.monthUsed, ack);
      } else {
        this.update(`p\n${count.id}\n${count.month}`, count.used, ack);
      }
    }
  }

  /** Forgets the counters of minute windows before `window` and months other than `month`. */
  prune(window: number, month: string): void {
    for (const key of this.views.keys()) {
      const [kind, , when] = key.split('\n');
      if (kind === 'm' ? Number(when) < window : when !== month) {
        this.views.delete(key);
        this.unsent.delete(key);
      }
    }
  }

  private set(key: string, known: number, ack: number): void {
    const view = this.views.get(key);
    if (view === undefined) this.views.set(key, { known, pending: [], unsent: 0 });
    else this.update(key, known, ack);
  }

  /** Counts of a counter this worker follows (others are ignored). */
  private update(key: string, known: number, ack: number): void {
    const view = this.views.get(key);
    if (view === undefined) return;
    view.known = known;
    acknowledge(view, ack);
  }

  private add(key: string, units: number): void {
    let view = this.views.get(key);
    if (view === undefined) this.views.set(key, (view = { known: 0, pending: [], unsent: 0 }));
    view.unsent += units;
    this.unsent.add(key);
  }

  private value(key: string): number {
    const view = this.views.get(key);
    return view === undefined ? 0 : view.known + own(view);
  }
}
