/**
 * The time fence of the interval lists (docs/api.md#paging): `from` and `to` (epoch seconds) keep
 * the answer intervals seen in that window, as DNSDB's time fencing does. An interval was seen from
 * its `first_observed` to its `last_confirmed`: by default it is kept when that span overlaps the
 * window (first seen at or before `to`, last seen at or after `from`); `strict` keeps only those
 * wholly inside it (first seen at or after `from`, last seen at or before `to`).
 */
import { QueryValidationError } from '../errors.js';

export interface TimeFence {
  from: number | null;
  to: number | null;
  strict: boolean;
}

/** The fence of a call's arguments; null when it has none. Refuses a window that ends before it starts. */
export function timeFence(args: { from?: number; to?: number; strict?: boolean }): TimeFence | null {
  const from = args.from ?? null;
  const to = args.to ?? null;
  if (from === null && to === null) return null;
  if (from !== null && to !== null && to < from) {
    throw new QueryValidationError([
      { loc: ['query', 'to'], msg: 'Input should not be before from', type: 'value_error' },
    ]);
  }
  return { from, to, strict: args.strict === true };
}

/** The fence as part of a query's identity (a cursor is bound to it). */
export function fenceKey(fence: TimeFence | null): string {
  return fence === null ? '' : `\0${fence.from ?? ''}\0${fence.to ?? ''}\0${fence.strict ? 1 : 0}`;
}

/**
 * The SQL condition of the fence over columns `first_observed` and `last_confirmed`, with its
 * values (bounds far outside any epoch second stand for a missing side).
 */
export function fenceCondition(fence: TimeFence): { sql: string; values: [number, number] } {
  const from = fence.from ?? -1;
  const to = fence.to ?? Number.MAX_SAFE_INTEGER;
  return fence.strict
    ? { sql: 'first_observed >= ? AND last_confirmed <= ?', values: [from, to] }
    : { sql: 'last_confirmed >= ? AND first_observed <= ?', values: [from, to] };
}

/** Whether an interval seen from `first` to `last` passes the fence. */
export function withinFence(fence: TimeFence, first: number, last: number): boolean {
  const from = fence.from ?? -Infinity;
  const to = fence.to ?? Infinity;
  return fence.strict ? first >= from && last <= to : last >= from && first <= to;
}
