/**
 * `builder export mmdb`: a release as a MaxMind DB file. The address space is cut at every edge of
 * the release's range tables (asn_segment, the route prefixes of each mapped row, provider_segment)
 * and of the bogon blocks, so each piece has one GET /v1/ip answer network part (shared/queries
 * ipNetwork); adjacent pieces with the same record are joined and written as the fewest CIDR blocks.
 * Bogons and pieces with nothing known get no record. Layout of a record: docs/bulk-and-export.md
 * ("MMDB export") and mmdbRecord below.
 */
import fs from 'node:fs';
import { findIpBogon, ipBogonIntervals } from '../../shared/bogons.js';
import type { Ip } from '../../shared/ip.js';
import { parseCidr } from '../../shared/ip.js';
import { ipNetwork, warmLookupIp, type IpNetwork, type Release } from '../../shared/queries/index.js';
import { META_KEYS } from '../../shared/release-schema.js';
import { MmdbWriter, type MmdbMap } from './mmdb-writer.js';

/** The database_type: the "-ASN" suffix lets readers that choose by suffix read the ASN fields. */
export const MMDB_DATABASE_TYPE = 'ipscope-ASN';

/**
 * The MMDB record of an address's network part, or null when nothing is known. Absent keys mean
 * null (unknown); is_datacenter, is_cdn and tor_exit are true or absent, never false.
 */
export function mmdbRecord(n: IpNetwork): MmdbMap | null {
  const r: MmdbMap = {};
  const a = n.asn;
  if (a !== null) {
    // GeoLite2-ASN's field names, so ASN readers (Elastic, Logstash) find them.
    if (a.asn !== null) r.autonomous_system_number = a.asn;
    if (a.asn !== null && a.descr !== null) r.autonomous_system_organization = a.descr;
    const as: MmdbMap = {};
    if (a.asn !== null) as.number = a.asn;
    if (a.route !== null) as.route = a.route;
    if (a.descr !== null) as.name = a.descr;
    if (a.country !== null) as.country = a.country;
    if (a.category !== null) as.category = a.category;
    if (a.network_role !== null) as.network_role = a.network_role;
    r.asn = as;
  }
  if (n.provider !== null) r.provider = n.provider;
  if (n.prefix !== null) r.prefix = n.prefix;
  if (n.is_datacenter === true) r.is_datacenter = true;
  if (n.is_cdn === true) r.is_cdn = true;
  if (n.provider_ranges.some((p) => p.category === 'tor_exit')) r.tor_exit = true;
  const relay = n.provider_ranges.find((p) => p.category === 'relay');
  if (relay) r.relay = relay.provider;
  const crawler = n.provider_ranges.find((p) => p.category === 'crawler');
  if (crawler) {
    const c: MmdbMap = {};
    if (crawler.metadata.operator !== undefined) c.operator = crawler.metadata.operator;
    if (crawler.metadata.bot !== undefined) c.bot = crawler.metadata.bot;
    r.crawler = c;
  }
  return Object.keys(r).length > 0 ? r : null;
}

/** Release keys hold IPv4 as ::ffff:a.b.c.d (shared/ip.ts ipKey). */
const MAPPED_FIRST = 0xffff00000000n;
const MAPPED_END = 0x1000000000000n;
const IPV4_SPACE_END = 1n << 32n;
const SPACE_END = 1n << 128n;

function keyValue(key: Buffer): bigint {
  return (key.readBigUInt64BE(0) << 64n) | key.readBigUInt64BE(8);
}

/** Every address where some field of the answer may change, in key space, sorted. */
function edges(release: Release): bigint[] {
  // An array sorted and deduplicated at the end, not a Set: V8 hashes a BigInt by its lowest
  // 64 bits, which are 0 for most IPv6 edges (all in one bucket: quadratic).
  const all: bigint[] = [0n, IPV4_SPACE_END, MAPPED_FIRST, MAPPED_END, SPACE_END];
  const add = (first: bigint, last: bigint) => {
    all.push(first, last + 1n);
  };
  for (const table of ['asn_segment', 'provider_segment']) {
    const rows = release.db.prepare(`SELECT first, last FROM ${table}`).raw().iterate() as Iterable<
      [Buffer, Buffer]
    >;
    for (const [first, last] of rows) add(keyValue(first), keyValue(last));
  }
  const prefixes = release.db.prepare(`SELECT prefixes FROM asn_range`).pluck().iterate() as Iterable<string>;
  for (const list of prefixes) {
    for (const text of JSON.parse(list) as string[]) {
      const cidr = parseCidr(text);
      if (!cidr) continue;
      const base = cidr.version === 4 ? MAPPED_FIRST : 0n;
      add(base + cidr.first, base + cidr.last);
    }
  }
  for (const [first, last] of ipBogonIntervals(4)) add(MAPPED_FIRST + first, MAPPED_FIRST + last);
  for (const [first, last] of ipBogonIntervals(6)) add(first, last);
  all.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return all.filter((v, i) => i === 0 || v !== all[i - 1]);
}

function words(value: bigint): number[] {
  return [
    Number((value >> 96n) & 0xffffffffn),
    Number((value >> 64n) & 0xffffffffn),
    Number((value >> 32n) & 0xffffffffn),
    Number(value & 0xffffffffn),
  ];
}

/** Inserts first..last (tree positions) as the fewest CIDR blocks. */
function insertRange(writer: MmdbWriter, first: bigint, last: bigint, record: MmdbMap): void {
  let cursor = first;
  while (cursor <= last) {
    let size = (last - cursor + 1n).toString(2).length - 1;
    if (cursor !== 0n) size = Math.min(size, (cursor & -cursor).toString(2).length - 1);
    writer.insert(words(cursor), 128 - size, record);
    cursor += 1n << BigInt(size);
  }
}

export interface MmdbExportSummary {
  networks: number;
  bytes: number;
  seconds: number;
  pieces: number;
}

/** Builds the MMDB bytes of a release. */
export async function buildMmdb(
  release: Release,
): Promise<{ bytes: Buffer; networks: number; pieces: number }> {
  await warmLookupIp(release);
  const cuts = edges(release);
  const writer = new MmdbWriter();
  // The run of joined pieces being collected: tree positions runFirst..runLast and its record.
  let runFirst = 0n;
  let runLast = -1n;
  let runJson = '';
  let runRecord: MmdbMap | null = null;
  const flush = () => {
    if (runRecord !== null) insertRange(writer, runFirst, runLast, runRecord);
    runRecord = null;
  };
  let pieces = 0;
  for (let i = 0; i + 1 < cuts.length; i++) {
    const start = cuts[i]!;
    const end = cuts[i + 1]! - 1n;
    // IPv4 is written at ::/96 (its tree position); IPv6 in ::/96 has no record (it is IPv4's place).
    if (start < IPV4_SPACE_END) continue;
    const mapped = start >= MAPPED_FIRST && start < MAPPED_END;
    const ip: Ip = mapped ? { version: 4, value: start - MAPPED_FIRST } : { version: 6, value: start };
    const record = findIpBogon(ip) === null ? mmdbRecord(ipNetwork(release, ip)) : null;
    pieces++;
    if (record === null) {
      flush();
      continue;
    }
    const json = JSON.stringify(record);
    const first = mapped ? start - MAPPED_FIRST : start;
    const last = mapped ? end - MAPPED_FIRST : end;
    if (runRecord !== null && runJson === json && runLast + 1n === first) runLast = last;
    else {
      flush();
      [runFirst, runLast, runJson, runRecord] = [first, last, json, record];
    }
  }
  flush();
  writer.aliasIpv4Mapped();
  const sources = JSON.parse(
    (release.db.prepare(`SELECT value FROM meta WHERE key = ?`).pluck().get(META_KEYS.sources) as string) ??
      '[]',
  ) as Array<{ source: string }>;
  const names = sources.map((s) => s.source);
  const bytes = writer.build({
    databaseType: MMDB_DATABASE_TYPE,
    languages: ['en'],
    description: {
      en: `ipscope release ${release.id} (built ${release.builtAt}): routing AS, cloud/hosting/CDN provider ranges, Tor exits, relays and crawlers. Sources: ${names.join(', ')}`,
    },
    buildEpoch: release.builtAtEpoch,
    extra: { ipscope_release_id: release.id, ipscope_built_at: release.builtAt, ipscope_sources: names },
  });
  return { bytes, networks: writer.networks, pieces };
}

/** Writes the file atomically (a temporary file renamed over `out`). */
export async function exportMmdb(release: Release, out: string): Promise<MmdbExportSummary> {
  const started = process.hrtime.bigint();
  const { bytes, networks, pieces } = await buildMmdb(release);
  const tmp = `${out}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, out);
  return { networks, pieces, bytes: bytes.length, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}
