/**
 * Reading an MMDB export back with readers this project did not write (libmaxminddb's mmdblookup,
 * the npm maxmind reader) and comparing each record with GET /v1/ip of the same release (the query
 * layer). Used by test/builder/mmdb-export.test.ts (demo release) and test/bench/verify-mmdb.ts
 * (any release, e.g. the full-scale one built from ../shared/data).
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import maxmind from 'maxmind';
import { formatValue, parseCidr } from '../../shared/ip.js';
import { lookupIp, type Release } from '../../shared/queries/index.js';

export const MMDBLOOKUP = '/usr/bin/mmdblookup';
export const COUNT = 10_000;
export const BOUNDARY_FEEDS = ['cloudflare', 'aws', 'tor-bulk-exit', 'bingbot', 'digitalocean'];

function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

type Json = Record<string, unknown>;

/** What the MMDB record of an address must be, from its GET /v1/ip answer (record layout: docs/bulk-and-export.md). */
export function expectedRecord(api: Json): Json | null {
  if (api.is_bogon === true) return null;
  const r: Json = {};
  const put = (o: Json, k: string, v: unknown) => {
    if (v !== null && v !== undefined) o[k] = v;
  };
  const asn = api.asn as Json | null;
  if (asn !== null) {
    if (asn.asn !== null) {
      r.autonomous_system_number = asn.asn;
      put(r, 'autonomous_system_organization', asn.descr);
    }
    const as: Json = {};
    put(as, 'number', asn.asn);
    put(as, 'route', asn.route);
    put(as, 'name', asn.descr);
    put(as, 'country', asn.country);
    put(as, 'category', asn.category);
    put(as, 'network_role', asn.network_role);
    r.asn = as;
  }
  put(r, 'provider', api.provider);
  put(r, 'prefix', api.prefix);
  if (api.is_datacenter === true) r.is_datacenter = true;
  if (api.is_cdn === true) r.is_cdn = true;
  const ranges = api.provider_ranges as Array<{ category: string; provider: string; metadata: Json }>;
  if (ranges.some((p) => p.category === 'tor_exit')) r.tor_exit = true;
  const relay = ranges.find((p) => p.category === 'relay');
  if (relay) r.relay = relay.provider;
  const crawler = ranges.find((p) => p.category === 'crawler');
  if (crawler) {
    r.crawler = {};
    put(r.crawler as Json, 'operator', crawler.metadata.operator);
    put(r.crawler as Json, 'bot', crawler.metadata.bot);
  }
  return Object.keys(r).length > 0 ? r : null;
}

/** mmdblookup's printout of one record as a value (null: not found). */
export function parseMmdblookup(text: string): unknown {
  if (text.includes('Could not find an entry')) return null;
  const lines = text
    .split('\n')
    .map((l) => l.trim().replace(/ <[a-z0-9_]+>$/, ''))
    .filter((l) => l !== '')
    // mmdblookup prints strings between quotes without escaping them: re-quote the values.
    .map((l) => (/^"[a-z_]+":$/.test(l) || !/^".*"$/.test(l) ? l : JSON.stringify(l.slice(1, -1))));
  let json = '';
  lines.forEach((line, i) => {
    json += line;
    const next = lines[i + 1];
    const opens = /^"[a-z_]+":$/.test(line) || line === '{' || line === '[';
    if (next !== undefined && !opens && next !== '}' && next !== ']') json += ',';
  });
  return JSON.parse(json);
}

/** Runs mmdblookup once per address, four shells at a time; its printout per address. */
export async function mmdblookupAll(file: string, ips: string[], dir: string): Promise<Map<string, string>> {
  const shards = 4;
  const out = new Map<string, string>();
  await Promise.all(
    Array.from({ length: shards }, (_, k) => {
      const list = path.join(dir, `ips-${k}.txt`);
      fs.writeFileSync(list, `${ips.filter((_ip, i) => i % shards === k).join('\n')}\n`);
      const script = `while read -r ip; do printf '=== %s\\n' "$ip"; ${MMDBLOOKUP} --file "$1" --ip "$ip" 2>&1; done < "$2"`;
      return new Promise<void>((resolve, reject) => {
        const child = spawn('bash', ['-c', script, 'mmdb', file, list], {
          stdio: ['ignore', 'pipe', 'inherit'],
        });
        let text = '';
        child.stdout.on('data', (c: Buffer) => (text += c.toString()));
        child.on('error', reject);
        // 'close', not 'exit': the printout may still be in the pipe when the shell has exited.
        child.on('close', () => {
          for (const block of text.split('=== ').slice(1)) {
            const nl = block.indexOf('\n');
            out.set(block.slice(0, nl), block.slice(nl + 1));
          }
          resolve();
        });
      });
    }),
  );
  return out;
}

const v4 = (n: number) => formatValue(4, BigInt(n >>> 0));

export interface Agreement {
  addresses: number;
  boundaries: number;
  withRecord: number;
  agreeMaxmind: number;
  agreeMmdblookup: number;
  differences: string[];
}

/**
 * `count` addresses: every boundary of BOUNDARY_FEEDS' ranges (first - 1, first, last, last + 1;
 * up to half of them),
 * then in turn inside published ranges, inside mapped routes (a fifth of the IPv4 ones written
 * as IPv4-mapped IPv6), random IPv4 and random IPv6 outside ::/96; each read by both readers.
 */
export async function checkAgreement(
  release: Release,
  file: string,
  dir: string,
  count = COUNT,
): Promise<Agreement> {
  const next = random(2117);
  const ips = new Set<string>();
  // Every boundary of five feeds' ranges: first - 1, first, last, last + 1.
  const ranges = release.db.prepare(`SELECT prefix, source FROM provider_range ORDER BY id`).all() as Array<{
    prefix: string;
    source: string;
  }>;
  for (const r of ranges) {
    const c = parseCidr(r.prefix)!;
    const max = c.version === 4 ? 0xffffffffn : (1n << 128n) - 1n;
    // At most half of the addresses are boundaries (a full-scale AWS list alone has 10,000 ranges).
    if (BOUNDARY_FEEDS.includes(r.source) && ips.size < count / 2) {
      for (const v of [c.first - 1n, c.first, c.last, c.last + 1n])
        if (v >= 0n && v <= max) ips.add(formatValue(c.version, v));
    }
  }
  const boundaries = ips.size;
  const inside = (first: bigint, last: bigint) =>
    first + BigInt(Math.floor(next() * Number(last - first + 1n)));
  const routes = release.db.prepare(`SELECT prefixes FROM asn_range`).pluck().all() as string[];
  const routeCidrs = routes.flatMap((p) => (JSON.parse(p) as string[]).map((text) => parseCidr(text)!));
  const rangeCidrs = ranges.map((r) => parseCidr(r.prefix)!);
  while (ips.size < count) {
    const kind = ips.size % 6;
    if (kind === 0 || kind === 1) {
      const c = rangeCidrs[Math.floor(next() * rangeCidrs.length)]!;
      ips.add(formatValue(c.version, inside(c.first, c.last)));
    } else if (kind === 2 || kind === 3) {
      const c = routeCidrs[Math.floor(next() * routeCidrs.length)]!;
      const value = inside(c.first, c.last);
      // Some IPv4 ones as IPv4-mapped IPv6 (the API looks them up as IPv4; the file aliases ::ffff:0:0/96).
      ips.add(
        c.version === 4 && next() < 0.2 ? `::ffff:${formatValue(4, value)}` : formatValue(c.version, value),
      );
    } else if (kind === 4) {
      ips.add(v4(Math.floor(next() * 2 ** 32)));
    } else {
      // Random IPv6 outside ::/96 (IPv4's place in the tree): global unicast mostly, any otherwise.
      let value = 0n;
      for (let w = 0; w < 8; w++) value = (value << 16n) | BigInt(Math.floor(next() * 65536));
      if (next() < 0.7) value = (value & ((1n << 125n) - 1n)) | (1n << 125n);
      if (value >> 32n !== 0n) ips.add(formatValue(6, value));
    }
  }
  const list = [...ips];

  const reader = await maxmind.open<Json>(file);
  const printed = await mmdblookupAll(file, list, dir);
  let agreeMaxmind = 0;
  let agreeMmdblookup = 0;
  let withRecord = 0;
  const differences: string[] = [];
  for (const ip of list) {
    const api = lookupIp(release, { ip }) as Json;
    const expected = expectedRecord(JSON.parse(JSON.stringify(api)) as Json);
    if (expected !== null) withRecord++;
    const fromMaxmind = reader.get(ip);
    if (isDeepStrictEqual(fromMaxmind ?? null, expected)) agreeMaxmind++;
    else differences.push(`maxmind ${ip}: ${JSON.stringify(fromMaxmind)} != ${JSON.stringify(expected)}`);
    const fromLib = parseMmdblookup(printed.get(ip) ?? 'missing');
    if (isDeepStrictEqual(fromLib, expected)) agreeMmdblookup++;
    else differences.push(`mmdblookup ${ip}: ${JSON.stringify(fromLib)} != ${JSON.stringify(expected)}`);
  }
  return { addresses: list.length, boundaries, withRecord, agreeMaxmind, agreeMmdblookup, differences };
}
