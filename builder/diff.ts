/**
 * `builder diff OLD NEW`: what changed between two releases, as NDJSON, one change per line, read
 * from the answers the API gives on each (so a change here is a change a client would see):
 *
 * - range_added / range_gone: a published range (per feed, i.e. source) in one release only;
 * - route_added / route_gone / route_asn_changed: a route (a prefix that GET /v1/ip answers as
 *   `asn.route` for its own first address) in one release only, or with another AS number;
 * - domain_moved / domain_started / domain_ended: the networks (AS + provider) of a domain's current
 *   hosting runs (GET /v1/domain/{d}/hosting) changed, or it has current ones in one release only;
 * - ip_gained_domains / ip_lost_domains: an address has current domains in one release only.
 *
 * Sections come in that order, each sorted (feed and prefix, prefix, domain name, address).
 */
import { parseCidr, type Ip } from '../shared/ip.js';
import { ipNetwork, warmLookupIp, type Release } from '../shared/queries/index.js';
import { decodeRun, type EncodedRun } from '../shared/hosting-run-codec.js';

export type Change = Record<string, unknown> & { change: string };

export interface DiffSummary {
  [change: string]: number;
}

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Merge-joins two key-ordered row streams: calls `pair` with the row of each side (or undefined). */
export function mergeJoin<R>(
  older: Iterable<R>,
  newer: Iterable<R>,
  key: (row: R) => string,
  pair: (key: string, before: R | undefined, after: R | undefined) => void,
): void {
  const a = older[Symbol.iterator]();
  const b = newer[Symbol.iterator]();
  let x = a.next();
  let y = b.next();
  while (!x.done || !y.done) {
    const kx = x.done ? null : key(x.value);
    const ky = y.done ? null : key(y.value);
    if (ky === null || (kx !== null && kx < ky)) {
      pair(kx!, x.value as R, undefined);
      x = a.next();
    } else if (kx === null || ky < kx) {
      pair(ky, undefined, y.value as R);
      y = b.next();
    } else {
      pair(kx, x.value as R, y.value as R);
      x = a.next();
      y = b.next();
    }
  }
}

interface RangeRow {
  source: string;
  prefix: string;
  provider: string;
  category: string;
}

function ranges(release: Release): Map<string, RangeRow> {
  const rows = release.db
    .prepare(`SELECT source, prefix, provider, category FROM provider_range`)
    .all() as RangeRow[];
  return new Map(rows.map((r) => [`${r.source} ${r.prefix}`, r]));
}

/** Prefix -> AS number (null: AS0) of every route the API answers for the prefix's first address. */
function routes(release: Release, prefixes: Iterable<string>): Map<string, number | null> {
  const out = new Map<string, number | null>();
  for (const prefix of prefixes) {
    const cidr = parseCidr(prefix);
    if (!cidr) continue;
    const ip: Ip = { version: cidr.version, value: cidr.first };
    const asn = ipNetwork(release, ip).asn;
    if (asn !== null && asn.route === prefix) out.set(prefix, asn.asn);
  }
  return out;
}

function routePrefixes(release: Release): Set<string> {
  const set = new Set<string>();
  for (const list of release.db
    .prepare(`SELECT prefixes FROM asn_range`)
    .pluck()
    .iterate() as Iterable<string>)
    for (const p of JSON.parse(list) as string[]) set.add(p);
  return set;
}

interface Network {
  asn: number | null;
  provider: string | null;
}

/** The distinct networks of a domain's current runs, in a stable order. */
function currentNetworks(runs: string): Network[] {
  const seen = new Map<string, Network>();
  for (const encoded of JSON.parse(runs) as EncodedRun[]) {
    const run = decodeRun(encoded, null);
    if (run.current) seen.set(`${run.asn}|${run.provider}`, { asn: run.asn, provider: run.provider });
  }
  return [...seen.entries()].sort(([a], [b]) => byText(a, b)).map(([, n]) => n);
}

const DOMAINS_SQL = `SELECT d.name, h.runs FROM domain d JOIN domain_hosting h ON h.domain_id = d.id ORDER BY d.name`;
const IPS_SQL = `SELECT value, current_count, sample FROM ip_summary WHERE current_count > 0 ORDER BY value`;

/** Computes the changes, handing each to `emit` in output order; returns the counts per kind. */
export async function diffReleases(
  older: Release,
  newer: Release,
  emit: (change: Change) => void,
): Promise<DiffSummary> {
  const summary: DiffSummary = {};
  const out = (change: Change) => {
    summary[change.change] = (summary[change.change] ?? 0) + 1;
    emit(change);
  };
  await warmLookupIp(older);
  await warmLookupIp(newer);

  const [ra, rb] = [ranges(older), ranges(newer)];
  const rangeKeys = [...new Set([...ra.keys(), ...rb.keys()])].sort(byText);
  for (const key of rangeKeys) {
    const before = ra.get(key);
    const after = rb.get(key);
    if (before && !after) out({ change: 'range_gone', ...before });
    if (after && !before) out({ change: 'range_added', ...after });
  }

  const prefixes = new Set([...routePrefixes(older), ...routePrefixes(newer)]);
  const [ta, tb] = [routes(older, prefixes), routes(newer, prefixes)];
  for (const prefix of [...prefixes].sort(byText)) {
    const [had, has] = [ta.has(prefix), tb.has(prefix)];
    if (had && !has) out({ change: 'route_gone', route: prefix, asn: ta.get(prefix)! });
    else if (has && !had) out({ change: 'route_added', route: prefix, asn: tb.get(prefix)! });
    else if (had && ta.get(prefix) !== tb.get(prefix))
      out({ change: 'route_asn_changed', route: prefix, old_asn: ta.get(prefix)!, new_asn: tb.get(prefix)! });
  }

  type DomainRow = { name: string; runs: string };
  mergeJoin<DomainRow>(
    older.db.prepare(DOMAINS_SQL).iterate() as Iterable<DomainRow>,
    newer.db.prepare(DOMAINS_SQL).iterate() as Iterable<DomainRow>,
    (r) => r.name,
    (domain, before, after) => {
      const was = before ? currentNetworks(before.runs) : [];
      const is = after ? currentNetworks(after.runs) : [];
      if (was.length === 0 && is.length > 0) out({ change: 'domain_started', domain, networks: is });
      else if (was.length > 0 && is.length === 0) out({ change: 'domain_ended', domain, old_networks: was });
      else if (JSON.stringify(was) !== JSON.stringify(is))
        out({ change: 'domain_moved', domain, old_networks: was, networks: is });
    },
  );

  type IpRow = { value: string; current_count: number; sample: string };
  mergeJoin<IpRow>(
    older.db.prepare(IPS_SQL).iterate() as Iterable<IpRow>,
    newer.db.prepare(IPS_SQL).iterate() as Iterable<IpRow>,
    (r) => r.value,
    (ip, before, after) => {
      if (after && !before)
        out({
          change: 'ip_gained_domains',
          ip,
          current_count: after.current_count,
          sample: JSON.parse(after.sample) as string[],
        });
      else if (before && !after)
        out({
          change: 'ip_lost_domains',
          ip,
          old_count: before.current_count,
          old_sample: JSON.parse(before.sample) as string[],
        });
    },
  );
  return summary;
}
