/**
 * GET /v1/domain/{domain}/history?as_of=T (docs/api.md#as-of-a-past-moment): the states and the
 * answer intervals as they stood at T, staleness reckoned at T. The newest release's dns_interval
 * holds every interval of every epoch kept: at epoch e one exists when it was first observed at or
 * before e's DNS cut, and is open when it had not ended by then; an open one's last_confirmed is
 * its record type's last_positive in e's states. The newest epoch is the release itself: the
 * current query answers (now = T), with the as-of blocks.
 */
import { decodeStateEntries } from '../../as-of-symbols.js';
import { nowEpoch } from '../../time.js';
import { parseDomainParam, statement } from '../common.js';
import {
  currentState,
  domainHistory,
  intervalItem,
  type DomainHistoryParams,
  type PageInterval,
  type StateRow,
} from '../domain-history.js';
import { decodeCursor, encodeCursor } from '../paging.js';
import type { Release } from '../release.js';
import { fenceKey, withinFence } from '../time-fence.js';
import { resolveAsOf, withBlocks, type Epoch } from './common.js';
import { versionAt } from './rows.js';

export function domainHistoryAsOf(
  releaseOrNull: Release | null,
  params: DomainHistoryParams,
  asOf: string | number,
  now = nowEpoch(),
) {
  const domain = parseDomainParam(params.domain);
  const resolved = resolveAsOf(releaseOrNull, asOf, now);
  const release = releaseOrNull!;
  if (resolved.newest)
    return withBlocks(domainHistory(release, params, resolved.at, resolved.cursorKey), resolved);
  const epoch = resolved.epoch;
  const fence = params.fence ?? null;
  const query = `domain_history\0${domain}${fenceKey(fence)}${resolved.cursorKey}`;
  const after = decodeCursor(release, query, params.cursor, ['number']);
  const states = statesAt(release, epoch, domain);
  if (states === null) {
    return { domain, observed: false, current: [], intervals: [], next_cursor: null, ...resolved.blocks };
  }
  // The domain's intervals in the newest release: its domain_page row gives their id span and holds
  // the first of them (ids lo .. lo + page.length - 1, as dns_interval has them); the rest by SQL.
  const span = statement(
    release,
    `SELECT interval_lo, interval_hi, intervals FROM domain_page WHERE name = ?`,
    true,
  ).get(domain) as [lo: number | null, hi: number | null, page: string] | undefined;
  const intervals: PageInterval[] = [];
  let lastId = 0;
  let more = false;
  if (span !== undefined && span[0] !== null && span[1] !== null) {
    const [lo, hi] = span;
    const cut = epoch.dnsCut ?? -1;
    const from = Math.max(lo, ((after?.[0] as number | undefined) ?? 0) + 1);
    /** Takes the interval of id `id` (first observed by the cut); false once the page is full. */
    const take = (r: PageInterval | [...PageInterval, number], id: number): boolean => {
      const interval = intervalAt(epoch, states, r);
      if (fence !== null && !withinFence(fence, interval[2], interval[3])) return true;
      if (intervals.length === params.limit) {
        more = true;
        return false;
      }
      intervals.push(interval);
      lastId = id;
      return true;
    };
    const page = JSON.parse(span[2]) as PageInterval[];
    const pageEnd = Math.min(hi, lo + page.length - 1);
    let going = true;
    for (let id = from; going && id <= pageEnd; id++) {
      const r = page[id - lo]!;
      if (r[2] <= cut) going = take(r, id);
    }
    if (going && Math.max(from, pageEnd + 1) <= hi) {
      const rows = statement(
        release,
        `SELECT rtype, value, first_observed, last_confirmed, ended_at, id FROM dns_interval
           WHERE id BETWEEN ? AND ? AND first_observed <= ? ORDER BY id`,
        true,
      ).iterate(Math.max(from, pageEnd + 1), hi, cut);
      for (const r of rows as Iterable<[...PageInterval, number]>) {
        if (!take(r, r[5])) break;
      }
    }
  }
  return {
    domain,
    observed: true,
    current: states.map((s) => currentState(s, resolved.at)),
    intervals: intervals.map(intervalItem),
    next_cursor: more ? encodeCursor(release, query, [lastId]) : null,
    ...resolved.blocks,
  };
}

/** The domain's states as `epoch` held them (domain_page.states of then); null: not observed then. */
export function statesAt(release: Release, epoch: Epoch, name: string): StateRow[] | null {
  const row = versionAt<[states: string | null]>(release, 'domain_hist', 'name', 'states', name, epoch);
  return row === undefined || row[0] === null ? null : (decodeStateEntries(row[0], epoch) as StateRow[]);
}

/**
 * An interval of the newest release (first observed by `epoch`'s DNS cut) as it stood at `epoch`:
 * ended only if it had ended by the cut; while open, last confirmed at its record type's
 * last_positive in the epoch's states.
 */
export function intervalAt(
  epoch: Epoch,
  states: StateRow[] | null,
  [rtype, value, firstObserved, lastConfirmed, endedAt]: PageInterval | [...PageInterval, number],
): PageInterval {
  const cut = epoch.dnsCut ?? -1;
  if (endedAt !== null && endedAt <= cut) return [rtype, value, firstObserved, lastConfirmed, endedAt];
  const positive = states?.find((s) => s[0] === rtype)?.[6] ?? null;
  return [rtype, value, firstObserved, positive ?? Math.min(lastConfirmed, cut), null];
}
