/**
 * GET /v1/ip/{ip}/domains?as_of=T (docs/api.md#as-of-a-past-moment): the intervals on the address
 * as they stood at T (domain-history.ts intervalAt), in that epoch's order: by first_observed, then
 * by the epoch's domain ids (seed rank, apex before www., then the other names by name), which the
 * newest release's ids need not follow. The newest epoch is the release itself: the current query
 * answers, with the as-of blocks.
 */
import { ApiError } from '../../errors.js';
import { findIpBogon } from '../../bogons.js';
import { nowEpoch } from '../../time.js';
import { BoundedCache, parseIpParam, statement } from '../common.js';
import type { PageInterval, StateRow } from '../domain-history.js';
import { domainItem, ipDomains, type IpDomainsParams } from '../ip-domains.js';
import { decodeCursor, encodeCursor } from '../paging.js';
import { ReleaseSlot, type Release } from '../release.js';
import { fenceKey, withinFence } from '../time-fence.js';
import { resolveAsOf, withBlocks, type Epoch } from './common.js';
import { intervalAt, statesAt } from './domain-history.js';
import { versionAt } from './rows.js';

/** A domain at an epoch: its name, its place in the epoch's domain order, its states then. */
interface DomainAt {
  name: string;
  /** 0: a seed name, 1: another observed name. */
  group: number;
  /** Seed names: rank * 2, + 1 for a www. name that is there as its apex's www. name. */
  key: number;
  states: StateRow[] | null;
}

/** Domains by newest-release id and epoch. */
const DOMAINS_AT = new ReleaseSlot('domains as of', () => new BoundedCache<number, DomainAt>(50_000));
const EPOCH_KEY_SPAN = 65_536;

export function ipDomainsAsOf(
  releaseOrNull: Release | null,
  params: IpDomainsParams,
  asOf: string | number,
  now = nowEpoch(),
) {
  const { ip, text } = parseIpParam(params.ip);
  const bogon = findIpBogon(ip);
  if (bogon !== null) {
    throw new ApiError(
      'non_public_ip',
      `${text} is in ${bogon.prefix} (${bogon.name}, ${bogon.rfc}): reverse lookups need a public address`,
    );
  }
  const resolved = resolveAsOf(releaseOrNull, asOf, now);
  const release = releaseOrNull!;
  if (resolved.newest) return withBlocks(ipDomains(release, params, resolved.cursorKey), resolved);
  const epoch = resolved.epoch;
  const fence = params.fence ?? null;
  const query = `ip_domains\0${text}\0${params.includeEnded ? 1 : 0}${fenceKey(fence)}${resolved.cursorKey}`;
  // The key of a page: the first_observed of its last item and how many items of that instant
  // have been served (the order within an instant is the epoch's, not an index's).
  const [afterTime, served] = (decodeCursor(release, query, params.cursor, ['number', 'number']) ?? [
    -1, 0,
  ]) as [number, number];
  const recordType = ip.version === 4 ? ('A' as const) : ('AAAA' as const);
  const rows = statement(
    release,
    `SELECT domain_id, first_observed, last_confirmed, ended_at FROM dns_interval
       INDEXED BY dns_interval_by_value WHERE value = ? AND first_observed >= ? AND first_observed <= ?
       ORDER BY first_observed, domain_id`,
    true,
  ).iterate(text, afterTime, epoch.dnsCut ?? -1) as Iterable<[number, number, number, number | null]>;
  const items: Array<ReturnType<typeof domainItem>> = [];
  let next: [number, number] | null = null;
  let group: Array<{ at: DomainAt; interval: PageInterval }> = [];
  let groupTime = -1;
  // Items of one instant are collected, then placed in the epoch's order (flush).
  const flush = (): boolean => {
    group.sort((a, b) => compareDomains(a.at, b.at));
    const from = groupTime === afterTime ? served : 0;
    for (let k = from; k < group.length; k++) {
      if (items.length === params.limit) {
        next = [groupTime, k];
        return true;
      }
      const { at, interval } = group[k]!;
      items.push(
        domainItem(at.name, recordType, {
          first_observed: interval[2],
          last_confirmed: interval[3],
          ended_at: interval[4],
        }),
      );
    }
    group = [];
    return false;
  };
  let full = false;
  for (const [domainId, firstObserved, lastConfirmed, endedAt] of rows) {
    if (firstObserved !== groupTime && group.length > 0 && (full = flush())) break;
    groupTime = firstObserved;
    const at = domainAt(release, epoch, domainId);
    const interval = intervalAt(epoch, at.states, [recordType, text, firstObserved, lastConfirmed, endedAt]);
    if (!params.includeEnded && interval[4] !== null) continue;
    if (fence !== null && !withinFence(fence, interval[2], interval[3])) continue;
    group.push({ at, interval });
  }
  if (!full && group.length > 0) flush();
  return {
    ip: text,
    include_ended: params.includeEnded,
    items,
    next_cursor: next === null ? null : encodeCursor(release, query, next),
    ...resolved.blocks,
  };
}

function compareDomains(a: DomainAt, b: DomainAt): number {
  if (a.group !== b.group) return a.group - b.group;
  if (a.key !== b.key) return a.key - b.key;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** The domain of a newest-release id as `epoch` held it (builder: writeDomains' order). */
function domainAt(release: Release, epoch: Epoch, domainId: number): DomainAt {
  const cache = DOMAINS_AT.of(release);
  const cacheKey = domainId * EPOCH_KEY_SPAN + epoch.index;
  const kept = cache.get(cacheKey);
  if (kept !== undefined) return kept;
  const name = statement(release, `SELECT name FROM domain WHERE id = ?`).pluck().get(domainId) as string;
  const seed = seedRankAt(release, epoch, name);
  let key = 0;
  if (seed !== null) {
    // www.x ranked as x is x's www. name (rank * 2 + 1); a www. name ranked on its own is a seed name.
    const apex = name.startsWith('www.') ? seedRankAt(release, epoch, name.slice(4)) : null;
    key = seed * 2 + (apex === seed ? 1 : 0);
  }
  const at: DomainAt = { name, group: seed === null ? 1 : 0, key, states: statesAt(release, epoch, name) };
  cache.set(cacheKey, at);
  return at;
}

/** The seed rank of a name at `epoch` (null: not a seed name then). */
function seedRankAt(release: Release, epoch: Epoch, name: string): number | null {
  const row = versionAt<[rank: number | null, inSeed: number]>(
    release,
    'domain_hist',
    'name',
    'rank, in_seed',
    name,
    epoch,
  );
  return row === undefined || row[1] !== 1 || row[0] === null ? null : row[0];
}
