/**
 * The time fence of the interval lists (docs/api.md#time-fence): an answer interval was seen from
 * its `first_observed` to its `last_confirmed`, and a fence keeps those seen in a window, as
 * passive-DNS time fencing does. Four bounds, any of them open: first seen at or after / at or before,
 * last seen at or after / at or before. The REST and MCP form, `from`, `to` and `strict`: by default
 * the intervals overlapping the window (first seen at or before `to`, last seen at or after `from`),
 * with `strict` those wholly inside it (first seen at or after `from`, last seen at or before `to`).
 * The DNSDB form (server/dnsdb/) names the four bounds itself.
 */
import { QueryValidationError } from '../errors.js';

export interface TimeFence {
  firstAfter: number | null;
  firstBefore: number | null;
  lastAfter: number | null;
  lastBefore: number | null;
}

const OPEN: TimeFence = { firstAfter: null, firstBefore: null, lastAfter: null, lastBefore: null };

/** The fence of `from`, `to` and `strict`; null when it has none. Refuses a window that ends before it starts. */
export function timeFence(args: { from?: number; to?: number; strict?: boolean }): TimeFence | null {
  const from = args.from ?? null;
  const to = args.to ?? null;
  if (from === null && to === null) return null;
  if (from !== null && to !== null && to < from) {
    throw new QueryValidationError([
      { loc: ['query', 'to'], msg: 'Input should not be before from', type: 'value_error' },
    ]);
  }
  return args.strict === true
    ? { ...OPEN, firstAfter: from, lastBefore: to }
    : { ...OPEN, lastAfter: from, firstBefore: to };
}

/** A fence of any bounds; null when all are open. */
export function fenceOf(bounds: Partial<TimeFence>): TimeFence | null {
  const fence = { ...OPEN, ...bounds };
  return Object.values(fence).every((v) => v === null || v === undefined) ? null : fence;
}

/** The fence as part of a query's identity (a cursor is bound to it). */
export function fenceKey(fence: TimeFence | null): string {
  if (fence === null) return '';
  const b = (v: number | null) => (v === null ? '' : String(v));
  return `\0${b(fence.firstAfter)}\0${b(fence.firstBefore)}\0${b(fence.lastAfter)}\0${b(fence.lastBefore)}`;
}

/**
 * The SQL condition of the fence over the columns `first_observed` and `last_confirmed`, with its
 * values (bounds far outside any epoch second stand for an open side).
 */
export function fenceCondition(fence: TimeFence): { sql: string; values: [number, number, number, number] } {
  return {
    sql: 'first_observed >= ? AND first_observed <= ? AND last_confirmed >= ? AND last_confirmed <= ?',
    values: [
      fence.firstAfter ?? -1,
      fence.firstBefore ?? Number.MAX_SAFE_INTEGER,
      fence.lastAfter ?? -1,
      fence.lastBefore ?? Number.MAX_SAFE_INTEGER,
    ],
  };
}

/** Whether an interval seen from `first` to `last` passes the fence. */
export function withinFence(fence: TimeFence, first: number, last: number): boolean {
  return (
    first >= (fence.firstAfter ?? -Infinity) &&
    first <= (fence.firstBefore ?? Infinity) &&
    last >= (fence.lastAfter ?? -Infinity) &&
    last <= (fence.lastBefore ?? Infinity)
  );
}
