/**
 * GET /v1/ip/{ip}?as_of=T (docs/api.md#as-of-a-past-moment): routing, provider ranges, PTR and
 * domain counts as the epoch that answered at T held them. The newest epoch is the release itself:
 * the current query answers, with the as-of blocks.
 */
import { findIpBogon } from '../../bogons.js';
import { ipKey, type Ip } from '../../ip.js';
import { nowEpoch } from '../../time.js';
import { BoundedCache, parseIpParam, statement } from '../common.js';
import {
  domainsBlock,
  lookupIp,
  networkOf,
  providerRangeItem,
  ptrBlock,
  rangeDetails,
  routingOf,
  type AsnRangeRow,
  type AsnRow,
  type LookupIpParams,
  type ProviderRangeItem,
  type ProviderRangeRow,
  type PtrRow,
  type RangeDetails,
  type SummaryRow,
} from '../lookup-ip.js';
import { ReleaseSlot, type Release } from '../release.js';
import { decodeLastSeen, decodeRoundTime } from '../../as-of-symbols.js';
import { VALID_AT, resolveAsOf, withBlocks, type Epoch } from './common.js';
import { versionAt, versionRowAt } from './rows.js';
import { segmentHidsAt } from './epoch-index.js';

export function lookupIpAsOf(
  releaseOrNull: Release | null,
  params: LookupIpParams,
  asOf: string | number,
  now = nowEpoch(),
) {
  const { ip, text } = parseIpParam(params.ip);
  const resolved = resolveAsOf(releaseOrNull, asOf, now);
  const release = releaseOrNull!;
  const bogon = findIpBogon(ip);
  if (bogon !== null || resolved.newest) {
    const answer = lookupIp(release, params);
    return answer.is_bogon ? answer : withBlocks(answer, resolved);
  }
  const epoch = resolved.epoch;
  return {
    ip: text,
    ...ipNetworkAt(release, epoch, ip),
    ptr: ptrBlock(ptrAt(release, epoch, text)),
    domains: domainsBlock(summaryAt(release, epoch, text)),
    is_bogon: false as const,
    bogon: null,
    ...resolved.blocks,
  };
}

/** The network part of an answer at `epoch` (lookup-ip.ts ipNetwork as that epoch held it). */
export function ipNetworkAt(release: Release, epoch: Epoch, ip: Ip) {
  // The epoch's segments in memory once built (epoch-index.ts); SQL seeks until then.
  const inMemory = segmentHidsAt(release, epoch, ip);
  if (inMemory !== undefined) {
    return networkOf(
      providerRangesOf(release, epoch, inMemory.ranges),
      inMemory.asnRange === null ? null : routingOfHid(release, epoch, ip, inMemory.asnRange),
    );
  }
  const key = ipKey(ip.version, ip.value);
  return networkOf(providerRangesAt(release, epoch, key), routingAt(release, epoch, ip, key));
}

/** Cache keys of rows read at an epoch: a version id and the epoch's position. */
const EPOCH_KEY_SPAN = 65_536;

/** provider_range_hist items by version id and epoch (null: no such version). */
const RANGE_ITEMS = new ReleaseSlot(
  'provider range items as of',
  () => new BoundedCache<number, ProviderRangeItem | null>(50_000),
);
/** asn_range_hist rows with their AS at an epoch, by version id and epoch. */
const RANGE_DETAILS = new ReleaseSlot(
  'asn_range details as of',
  () => new BoundedCache<number, RangeDetails | null>(100_000),
);

function providerRangesAt(release: Release, epoch: Epoch, key: Buffer): ProviderRangeItem[] {
  const segment = statement(
    release,
    `SELECT last, range_hids FROM provider_segment_hist
       WHERE first <= ? AND ${VALID_AT} ORDER BY first DESC LIMIT 1`,
    true,
  ).get(key, epoch.epoch, epoch.epoch) as [last: Buffer, hids: string] | undefined;
  if (!segment || Buffer.compare(segment[0], key) < 0) return [];
  return providerRangesOf(release, epoch, JSON.parse(segment[1]) as number[]);
}

/** The items of the provider ranges `hids` at `epoch`. */
function providerRangesOf(release: Release, epoch: Epoch, hids: ArrayLike<number>): ProviderRangeItem[] {
  if (hids.length === 0) return [];
  const cache = RANGE_ITEMS.of(release);
  const byHid = statement(
    release,
    `SELECT prefix, provider, category, metadata, first_seen, last_seen, source FROM provider_range_hist WHERE hid = ?`,
    true,
  );
  const out: ProviderRangeItem[] = [];
  for (let k = 0; k < hids.length; k++) {
    const hid = hids[k]!;
    const at = hid * EPOCH_KEY_SPAN + epoch.index;
    let item = cache.get(at);
    if (item === undefined) {
      const row = byHid.get(hid) as [...ProviderRangeRow, source: string] | undefined;
      item = row
        ? providerRangeItem([row[0], row[1], row[2], row[3], row[4], decodeLastSeen(row[5], row[6], epoch)])
        : null;
      cache.set(at, item);
    }
    if (item) out.push(item);
  }
  return out;
}

function routingAt(release: Release, epoch: Epoch, ip: Ip, key: Buffer) {
  const segment = statement(
    release,
    `SELECT last, range_hid FROM asn_segment_hist WHERE first <= ? AND ${VALID_AT} ORDER BY first DESC LIMIT 1`,
    true,
  ).get(key, epoch.epoch, epoch.epoch) as [last: Buffer, hid: number] | undefined;
  if (!segment || Buffer.compare(segment[0], key) < 0) return null;
  return routingOfHid(release, epoch, ip, segment[1]);
}

/** The `asn` field for an address inside the asn_range version `hid` at `epoch`. */
function routingOfHid(release: Release, epoch: Epoch, ip: Ip, hid: number) {
  const at = hid * EPOCH_KEY_SPAN + epoch.index;
  const cache = RANGE_DETAILS.of(release);
  let details = cache.get(at);
  if (details === undefined) {
    const row = statement(
      release,
      `SELECT asn, country, descr, prefixes, source FROM asn_range_hist WHERE hid = ?`,
    ).get(hid) as AsnRangeRow | undefined;
    details = row ? rangeDetails(row, row.asn === null ? undefined : asnAt(release, epoch, row.asn)) : null;
    cache.set(at, details);
  }
  return details === null ? null : routingOf(details, ip);
}

/** The asn row of `asn` as `epoch` held it (lookup-ip.ts's columns). */
function asnAt(release: Release, epoch: Epoch, asn: number): AsnRow | undefined {
  return versionRowAt<AsnRow>(
    release,
    'asn_hist',
    'asn',
    'name, country, category, category_source, network_role',
    asn,
    epoch,
  );
}

/** Whether the history has any PTR names at all (none: no seek). */
const HAS_PTR_HISTORY = new ReleaseSlot(
  'has PTR history',
  (release) => release.db.prepare(`SELECT EXISTS (SELECT 1 FROM ptr_hist)`).pluck().get() === 1,
);

function ptrAt(release: Release, epoch: Epoch, text: string): PtrRow | undefined {
  if (!HAS_PTR_HISTORY.of(release)) return undefined;
  const row = versionAt<PtrRow>(
    release,
    'ptr_hist',
    'value',
    'names, status, checked_at, last_confirmed',
    text,
    epoch,
  );
  if (!row) return undefined;
  return [row[0], row[1], decodeRoundTime(row[2], epoch), decodeRoundTime(row[3], epoch)];
}

function summaryAt(release: Release, epoch: Epoch, text: string): SummaryRow | undefined {
  const row = versionAt<SummaryRow>(
    release,
    'ip_summary_hist',
    'value',
    'current_count, sample, first_observed, last_confirmed',
    text,
    epoch,
  );
  if (!row) return undefined;
  return [row[0], row[1], decodeRoundTime(row[2], epoch), decodeRoundTime(row[3], epoch)];
}
