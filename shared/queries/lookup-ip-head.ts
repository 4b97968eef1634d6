/**
 * lookup_ip's answer for the address most lookups ask about, written without building it
 * (docs/decisions/0038): a public IPv4 address with nothing of its own (no ip_summary row, no PTR
 * row) answers its networks' fields only, so its JSON head (the response's own fields, which the
 * release blocks follow: server/encoding/json.ts) is
 *
 *     {"ip":"<address>",  the routing part  ,  the provider part  ,  the fixed rest
 *
 * where the routing part depends only on the asn_range row and the route holding the address, and
 * the provider part only on its provider segment. Each part is JSON.stringify of lookupIp's own
 * fields, serialised once and kept (RecentCache); the rest is the answer of no PTR row and no
 * domains. Whether an address has a row of its own is answered from a sorted array of the
 * release's IPv4 values in ip_summary and ptr (4 bytes each), read in the background the first
 * time it is needed. Until then, and for every other address (IPv6, a bogon, one with a row, the
 * range tables not yet in memory), lookupIpHead answers null and the caller runs lookupIp, so an
 * answer is always the one lookupIp gives, byte for byte (test/shared/lookup-ip-head.test.ts).
 */
import { parseIp, type Ip } from '../ip.js';
import { findIpBogon } from '../bogons.js';
import { RecentCache, parseIpParam } from './common.js';
import {
  domainsBlock,
  loadedAsnRanges,
  loadedProviderSegments,
  networkOf,
  providerRanges,
  ptrBlock,
  rangeDetailsById,
  routingOf,
  warmLookupIp,
  type LookupIpParams,
} from './lookup-ip.js';
import { ReleaseSlot, type Release } from './release.js';

/** Routing parts kept per release (two generations of half as many), one per asn_range row. */
const ROUTING_PARTS = 65_536;
/** Provider parts kept per release, one per provider segment. */
const PROVIDER_PARTS = 16_384;
/** Rows read per statement while the address filter loads, with a turn of the event loop between. */
const FILTER_CHUNK = 20_000;

/** An asn_range row's routing parts: the row's IPv4 routes as numbers, and the part of each. */
interface RoutingParts {
  /** Route i is [lows[i], highs[i]]; an address in none has the part at index lows.length. */
  lows: Float64Array;
  highs: Float64Array;
  /** `"asn":{…}` per route, serialised the first time an address of it is asked. */
  parts: Array<string | undefined>;
}

/**
 * A row's routing part when one route covers the whole row (333,723 of the 412,014 IPv4 rows of
 * the full-scale release: fewer reads than RoutingParts' arrays), else its parts per route.
 */
type RowParts = string | RoutingParts;

interface HeadState {
  /** The IPv4 values with an ip_summary or ptr row; null until loaded. */
  owned: OwnedValues | null;
  /** The load of `owned`, once started. */
  loading: Promise<void> | null;
  routing: RecentCache<number, RowParts>;
  /** By provider segment position (-1: none). */
  provider: RecentCache<number, string>;
}

const STATE = new ReleaseSlot<HeadState>('lookup_ip heads', () => ({
  owned: null,
  loading: null,
  routing: new RecentCache(ROUTING_PARTS / 2),
  provider: new RecentCache(PROVIDER_PARTS / 2),
}));

/** What follows the provider part: no PTR row, no domains, not a bogon. */
const REST = `${JSON.stringify({
  ptr: ptrBlock(undefined),
  domains: domainsBlock(undefined),
  is_bogon: false,
  bogon: null,
}).slice(1, -1)},`;

/**
 * The JSON head of lookup_ip's answer for `params`, or null when lookupIp must answer (see above).
 * Throws lookupIp's own refusal of a malformed address.
 */
export function lookupIpHead(release: Release, params: LookupIpParams): string | null {
  const { ip, text } = parseIpParam(params.ip);
  if (ip.version !== 4) return null;
  const state = STATE.of(release);
  const owned = state.owned;
  const asnRanges = loadedAsnRanges(release);
  const segments = loadedProviderSegments(release);
  if (owned === null || asnRanges === undefined || segments === undefined) {
    if (state.loading === null && asnRanges !== undefined) loadOwned(release, state);
    return null;
  }
  const value = Number(ip.value);
  if (holds(owned, value) || findIpBogon(ip) !== null) return null;
  const at = asnRanges.index.find(ip);
  const routing =
    at < 0 ? '"asn":null' : routingPart(release, state, asnRanges.segmentRows[at]! + 1, ip, value);
  return `{"ip":"${text}",${routing},${providerPart(release, state, segments.index.find(ip), ip)},${REST}`;
}

/**
 * IPv4 values, ascending, with where each /16 starts among them: a lookup searches only its /16's
 * (a few values, in one or two cache lines) instead of halving a 4 MB array twenty times.
 */
interface OwnedValues {
  values: Uint32Array;
  /** The values of /16 number k are values[starts[k] .. starts[k + 1]). */
  starts: Uint32Array;
}

function ownedValues(values: Uint32Array): OwnedValues {
  const starts = new Uint32Array(65_537);
  for (let i = 0; i < values.length; i++) starts[(values[i]! >>> 16) + 1]! += 1;
  for (let k = 0; k < 65_536; k++) starts[k + 1]! += starts[k]!;
  return { values, starts };
}

/** Whether `owned` holds `value`. */
function holds(owned: OwnedValues, value: number): boolean {
  const values = owned.values;
  const slash16 = value >>> 16;
  let lo = owned.starts[slash16]!;
  let hi = owned.starts[slash16 + 1]! - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const v = values[mid]!;
    if (v === value) return true;
    if (v < value) lo = mid + 1;
    else hi = mid - 1;
  }
  return false;
}

/** `"asn":{…}` for an address of asn_range row `id`. */
function routingPart(release: Release, state: HeadState, id: number, ip: Ip, value: number): string {
  let entry = state.routing.get(id);
  if (entry === undefined) {
    entry = rowParts(release, id, ip);
    state.routing.set(id, entry);
  }
  if (typeof entry === 'string') return entry;
  const { lows, highs } = entry;
  let route = 0;
  while (route < lows.length && !(lows[route]! <= value && value <= highs[route]!)) route++;
  let part = entry.parts[route];
  if (part === undefined) {
    part = routingJson(release, id, ip);
    entry.parts[route] = part;
  }
  return part;
}

/** The routing part of an address of row `id`, serialised. */
function routingJson(release: Release, id: number, ip: Ip): string {
  return JSON.stringify({ asn: routingOf(rangeDetailsById(release, id), ip) }).slice(1, -1);
}

/** The parts of IPv4 row `id` (`ip` one of its addresses): one, when one route covers the row. */
function rowParts(release: Release, id: number, ip: Ip): RowParts {
  const prefixes = rangeDetailsById(release, id).prefixes;
  const words = loadedAsnRanges(release)!;
  const first = words.firstWords[(id - 1) * 4 + 3]!;
  const last = words.lastWords[(id - 1) * 4 + 3]!;
  const only = prefixes.length === 1 ? prefixes[0]! : undefined;
  if (only !== undefined && Number(only.first) <= first && last <= Number(only.last)) {
    return routingJson(release, id, ip);
  }
  return {
    lows: Float64Array.from(prefixes, (p) => Number(p.first)),
    highs: Float64Array.from(prefixes, (p) => Number(p.last)),
    parts: [],
  };
}

/** `"is_datacenter":…,"provider_ranges":[…]` for an address of provider segment `at` (-1: none). */
function providerPart(release: Release, state: HeadState, at: number, ip: Ip): string {
  let part = state.provider.get(at);
  if (part === undefined) {
    const { asn: _asn, ...network } = networkOf(providerRanges(release, ip), null);
    part = JSON.stringify(network).slice(1, -1);
    state.provider.set(at, part);
  }
  return part;
}

/**
 * Resolves once lookupIpHead can answer in `release` (its range tables in memory: warmLookupIp, and
 * the address filter read); the filter's load starts now if it has not.
 */
export async function lookupIpHeadReady(release: Release): Promise<void> {
  await warmLookupIp(release);
  const state = STATE.of(release);
  await (state.loading ?? loadOwned(release, state));
}

/**
 * Reads the IPv4 values of ip_summary and ptr into `state.owned`, in chunks with a turn of the
 * event loop between them; a release closed meanwhile stops it. Once, per release.
 */
function loadOwned(release: Release, state: HeadState): Promise<void> {
  const read = async (): Promise<OwnedValues> => {
    // Into a typed array grown by doubling, rows visited one at a time: a JS array of the values
    // and a chunk's strings held at once raised a process's peak RSS by 50–67 MB on the full-scale
    // release (1,049,884 values), against 12–13 MB this way (docs/decisions/0038).
    let values = new Uint32Array(1 << 16);
    let count = 0;
    for (const table of ['ip_summary', 'ptr']) {
      const first = release.db.prepare(`SELECT value FROM ${table} ORDER BY value LIMIT ?`).pluck();
      const next = release.db
        .prepare(`SELECT value FROM ${table} WHERE value > ? ORDER BY value LIMIT ?`)
        .pluck();
      let after: string | null = null;
      for (;;) {
        if (!release.db.open) throw new Error('the release was closed');
        const rows = (
          after === null ? first.iterate(FILTER_CHUNK) : next.iterate(after, FILTER_CHUNK)
        ) as IterableIterator<string>;
        let read = 0;
        for (const text of rows) {
          read++;
          after = text;
          const ip = text.includes(':') ? null : parseIp(text);
          if (ip === null) continue;
          if (count === values.length) {
            const grown = new Uint32Array(values.length * 2);
            grown.set(values);
            values = grown;
          }
          values[count++] = Number(ip.value);
        }
        if (read < FILTER_CHUNK) break;
        await new Promise((resolve) => setImmediate(resolve));
      }
    }
    return ownedValues(values.slice(0, count).sort());
  };
  // A closed release answers nothing more; a failure leaves lookupIp answering every address.
  state.loading = read().then(
    (owned) => {
      state.owned = owned;
    },
    () => {},
  );
  return state.loading;
}
