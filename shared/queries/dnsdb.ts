/**
 * The passive-DNS lookups of the DNSDB API v2 form (docs/api.md#dnsdb-api): rrsets by owner name
 * and rdata by address or prefix, over the same answer intervals as GET /v1/domain/{d}/history and
 * GET /v1/ip/{ip}/domains. One record per answer interval: `rdata` its address, `time_first` its
 * first_observed, `time_last` its last_confirmed (epoch seconds); no `count` (queries are not
 * counted) and no `bailiwick` (not recorded). A CNAME record is the first hop of the chain of a
 * name's latest answer: only that chain is kept, so both its times are when it was last confirmed.
 */
import { ApiError } from '../errors.js';
import { formatIp, parseIp, unmapIpv4, type Ip } from '../ip.js';
import { parseDomainParam, parseIpParam, requireRelease, statement } from './common.js';
import type { Release } from './release.js';
import { fenceCondition, withinFence, type TimeFence } from './time-fence.js';

/** A record of the DNSDB form (`obj` of a streaming line). */
export interface DnsdbRecord {
  rrname: string;
  rrtype: 'A' | 'AAAA' | 'CNAME';
  rdata: string[] | string;
  time_first: number;
  time_last: number;
}

export interface DnsdbAnswer {
  records: DnsdbRecord[];
  /** More records follow the `limit` served (the stream ends `limited`, not `succeeded`). */
  limited: boolean;
}

export const DNSDB_RRTYPES = ['ANY', 'A', 'AAAA', 'CNAME'] as const;
export type DnsdbRrtype = (typeof DNSDB_RRTYPES)[number];

/** Records skipped at most (`offset`), as DNSDB's own ceiling on it. */
export const DNSDB_MAX_OFFSET = 1_000_000;

const fqdn = (name: string) => (name.endsWith('.') ? name : `${name}.`);

type IntervalRow = [rtype: 'A' | 'AAAA', value: string, first: number, last: number];
/** rtype, outcome, vals, cnames, last_observed, last_confirmed, last_positive (domain_page.states) */
type StateRow = [string, string, string[], string[], number, number | null, number | null];

export interface RrsetParams {
  name: string;
  rrtype: DnsdbRrtype;
  fence: TimeFence | null;
  limit: number;
  offset: number;
}

/** The records of a name: its answer intervals (and with CNAME or ANY the first hop of its chain). */
export function rrsetLookup(releaseOrNull: Release | null, params: RrsetParams): DnsdbAnswer {
  const name = parseDomainParam(params.name);
  const release = requireRelease(releaseOrNull);
  const row = statement(
    release,
    `SELECT states, interval_lo, interval_hi FROM domain_page WHERE name = ?`,
    true,
  ).get(name) as [string, number | null, number | null] | undefined;
  if (!row) return { records: [], limited: false };
  const [statesJson, lo, hi] = row;
  const wanted = params.rrtype;
  const end = params.offset + params.limit + 1; // one more says whether more follow
  const records: DnsdbRecord[] = [];
  if (wanted !== 'CNAME' && lo !== null && hi !== null) {
    const fence = params.fence === null ? null : fenceCondition(params.fence);
    const rows = statement(
      release,
      `SELECT rtype, value, first_observed, last_confirmed FROM dns_interval WHERE id BETWEEN ? AND ?${
        wanted === 'ANY' ? '' : ' AND rtype = ?'
      }${fence === null ? '' : ` AND ${fence.sql}`} ORDER BY id LIMIT ?`,
      true,
    ).all(lo, hi, ...(wanted === 'ANY' ? [] : [wanted]), ...(fence?.values ?? []), end) as IntervalRow[];
    for (const [rtype, value, first, last] of rows) {
      records.push({ rrname: fqdn(name), rrtype: rtype, rdata: [value], time_first: first, time_last: last });
    }
  }
  if ((wanted === 'CNAME' || wanted === 'ANY') && records.length < end) {
    const hops = new Set<string>();
    for (const [, , , cnames, , lastConfirmed] of JSON.parse(statesJson) as StateRow[]) {
      const hop = cnames[0];
      if (hop === undefined || lastConfirmed === null || hops.has(hop)) continue;
      if (params.fence !== null && !withinFence(params.fence, lastConfirmed, lastConfirmed)) continue;
      hops.add(hop);
      records.push({
        rrname: fqdn(name),
        rrtype: 'CNAME',
        rdata: [fqdn(hop)],
        time_first: lastConfirmed,
        time_last: lastConfirmed,
      });
    }
  }
  return page(records, params.offset, params.limit);
}

function page(records: DnsdbRecord[], offset: number, limit: number): DnsdbAnswer {
  const served = records.slice(offset, offset + limit);
  return { records: served, limited: records.length > offset + limit };
}

export interface RdataIpParams {
  /** One address, or a prefix `address,length` (DNSDB's form). */
  ip: string;
  fence: TimeFence | null;
  limit: number;
  offset: number;
}

/** The shortest prefixes looked up, per family: a wider one would read a large part of the release. */
const SHORTEST = { 4: 8, 6: 16 } as const;

interface Row {
  name: string;
  first_observed: number;
  last_confirmed: number;
}

/** The records whose rdata is an address, or an address of a prefix. */
export function rdataIpLookup(releaseOrNull: Release | null, params: RdataIpParams): DnsdbAnswer {
  const comma = params.ip.indexOf(',');
  const prefix = comma === -1 ? null : parsePrefix(params.ip.slice(0, comma), params.ip.slice(comma + 1));
  const single = prefix === null ? parseIpParam(params.ip).text : null;
  const release = requireRelease(releaseOrNull);
  const fence = params.fence === null ? null : fenceCondition(params.fence);
  const byValue = statement(
    release,
    `SELECT d.name AS name, i.first_observed AS first_observed, i.last_confirmed AS last_confirmed
       FROM dns_interval i INDEXED BY dns_interval_by_value JOIN domain d ON d.id = i.domain_id
       WHERE i.value = ?${fence === null ? '' : ` AND ${fence.sql.replace(/(first_observed|last_confirmed)/g, 'i.$1')}`}
       ORDER BY i.first_observed, i.domain_id LIMIT ?`,
  );
  const end = params.offset + params.limit + 1;
  const records: DnsdbRecord[] = [];
  const add = (value: string) => {
    const rtype = value.includes(':') ? 'AAAA' : 'A';
    for (const r of byValue.all(value, ...(fence?.values ?? []), end - records.length) as Row[]) {
      records.push({
        rrname: fqdn(r.name),
        rrtype: rtype,
        rdata: value,
        time_first: r.first_observed,
        time_last: r.last_confirmed,
      });
    }
  };
  if (single !== null) add(single);
  else {
    for (const value of valuesIn(release, prefix!)) {
      add(value);
      if (records.length >= end) break;
    }
  }
  return page(records, params.offset, params.limit);
}

interface Prefix {
  ip: Ip;
  length: number;
  first: bigint;
  last: bigint;
}

function parsePrefix(addressText: string, lengthText: string): Prefix {
  const parsed = parseIp(addressText);
  if (parsed === null || !/^\d{1,3}$/.test(lengthText)) {
    throw new ApiError(
      'invalid_ip',
      `"${addressText},${lengthText}" is not a prefix: send ADDRESS,LENGTH, e.g. 192.0.2.0,24`,
    );
  }
  const ip = unmapIpv4(parsed);
  const bits = ip.version === 4 ? 32 : 128;
  const length = Number(lengthText);
  if (length > bits || length < SHORTEST[ip.version]) {
    throw new ApiError(
      'invalid_ip',
      `a prefix of length ${length} is not looked up: IPv4 prefixes from /${SHORTEST[4]} to /32, IPv6 from /${SHORTEST[6]} to /128`,
    );
  }
  const host = (1n << BigInt(bits - length)) - 1n;
  const first = ip.value & ~host;
  return { ip, length, first, last: first | host };
}

/**
 * The observed addresses of a prefix, in the order of their text: the addresses of the release whose
 * text starts like the prefix's (the first octets of an IPv4 prefix, the first group of an IPv6 one),
 * kept when they lie inside it.
 */
function valuesIn(release: Release, prefix: Prefix): string[] {
  const text = formatIp({ version: prefix.ip.version, value: prefix.first });
  const start =
    prefix.ip.version === 4
      ? `${text
          .split('.')
          .slice(0, Math.floor(prefix.length / 8))
          .join('.')}.`
      : `${text.split(':')[0]}:`;
  // The texts from `start` up to the next one after every text starting with it (`.`+1 is `/`, `:`+1 is `;`).
  const stop = start.slice(0, -1) + String.fromCharCode(start.charCodeAt(start.length - 1) + 1);
  const rows = statement(
    release,
    `SELECT value FROM ip_summary WHERE value >= ? AND value < ? ORDER BY value`,
  ).pluck();
  // Read whole before the intervals of each are (the connection runs one statement at a time).
  return (rows.all(start, stop) as string[]).filter((value) => {
    const ip = parseIp(value);
    return (
      ip !== null && ip.version === prefix.ip.version && ip.value >= prefix.first && ip.value <= prefix.last
    );
  });
}
