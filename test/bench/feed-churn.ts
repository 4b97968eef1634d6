/**
 * Daily churn of the real feed files of ../shared/data for bench-build's simulated days
 * (bench-days.ts): each day's snapshot of the mapping, two cloud lists, the Tor exit list and the
 * AS names, made from the day before's by the rates of CHURN (seeded, deterministic).
 *
 * The rates, and why (measured on the snapshots of ../shared/data, see PROVENANCE.md there):
 * - Mapping rows (ip-location-db): 0.13 % of rows a day get another AS or split in two. Of the 1,425
 *   routed rows of iptoasn's 2019 v4 subset, 47 (3.3 %) appear unchanged (same first, last, AS) in
 *   ip-location-db's 2026-06-17 table: survival 0.033 over about 2,670 days is 1 − 0.033^(1/2670) =
 *   0.13 % of rows changing a day. Two publishers that cut rows differently overstate the change,
 *   so this is an upper bound, which is what a size bench wants.
 * - Cloud ranges (AWS, Google Cloud): 0.05 % of prefixes a day dropped and as many added. Of the
 *   4,340 IPv4 prefixes GitHub's meta.json (2025-07-25) lists for Actions (Azure ranges), 3,881
 *   (89.4 %) are still in Azure's service tags of 2026-04-30: 1 − 0.894^(1/280) = 0.04 % a day
 *   dropped; the lists grow, so as many added as dropped is also conservative.
 * - Tor exits: 5 % of the exit addresses leave a day and as many join, and every listed address
 *   gets a new ExitAddress time each day (TorDNSEL re-tests every exit: in the 2013 exit-addresses
 *   file every one of the 624 addresses was seen in the 24 hours before the download, 0 % earlier).
 *   In that file 4.6 % of the 636 relays had not published a descriptor for more than 24 hours (the
 *   ones about to leave); the builder's own gate allows 30 % a day (TOR_EXIT_CHURN).
 * - AS names (asn2org): 0.05 % of names a day, as the cloud ranges (no dated pair to measure).
 * - DNS answers: the generated rounds (generate-observations.ts, observation-generator/owners.ts):
 *   per name and day 3 % new addresses (a third of them on another provider), 3.5 % the same
 *   addresses in another order, 0.15 % NXDOMAIN, 0.3 % an AAAA record appearing or going, 10 % of
 *   the names changed the day before returning to their earlier answer, 1 % transient failures.
 */
import fs from 'node:fs';
import zlib from 'node:zlib';
import { formatValue, parseCidr, parseIp } from '../../shared/ip.js';
import type { Mulberry32 } from './observation-generator/prng.js';

export const CHURN = {
  mappingRows: 0.0013,
  cloudPrefixes: 0.0005,
  torExits: 0.05,
  asNames: 0.0005,
} as const;

export function readText(file: string): string {
  const bytes = fs.readFileSync(file);
  return (file.endsWith('.gz') ? zlib.gunzipSync(bytes) : bytes).toString('utf8');
}

/** How many of `n` items change at `rate` (at least one when there are items). */
function changes(n: number, rate: number, rng: Mulberry32): number {
  const exact = n * rate;
  return n === 0 ? 0 : Math.max(1, Math.floor(exact) + (rng.next() < exact % 1 ? 1 : 0));
}

/** An ip-location-db table (lines `first,last,asn,name`) churned in place: AS changes and splits. */
export function churnMapping(lines: string[], rng: Mulberry32): void {
  const n = changes(lines.length, CHURN.mappingRows, rng);
  for (let k = 0; k < n; k++) {
    const i = rng.int(lines.length);
    const line = lines[i]!;
    const c1 = line.indexOf(',');
    const c2 = line.indexOf(',', c1 + 1);
    const c3 = line.indexOf(',', c2 + 1);
    const other = lines[rng.int(lines.length)]!;
    const o2 = other.indexOf(',', other.indexOf(',') + 1);
    const otherAs = other.slice(o2 + 1); // `asn,name` of another row
    if (rng.next() < 0.5) {
      lines[i] = `${line.slice(0, c2)},${otherAs}`;
      continue;
    }
    const first = parseIp(line.slice(0, c1));
    const last = parseIp(line.slice(c1 + 1, c2));
    if (!first || !last || last.value - first.value < 2n) continue;
    const mid = first.value + (last.value - first.value) / 2n;
    const v = first.version;
    lines.splice(
      i,
      1,
      `${line.slice(0, c1)},${formatValue(v, mid)},${line.slice(c2 + 1, c3)},${line.slice(c3 + 1)}`,
      `${formatValue(v, mid + 1n)},${line.slice(c1 + 1, c2)},${otherAs}`,
    );
  }
}

/** A list of prefix entries (AWS `prefixes`, Google's `prefixes`): some dropped, as many added beside others. */
function churnPrefixes(entries: Array<Record<string, string>>, keys: string[], rng: Mulberry32): void {
  const n = changes(entries.length, CHURN.cloudPrefixes, rng);
  for (let k = 0; k < n; k++) entries.splice(rng.int(entries.length), 1);
  for (let k = 0; k < n; k++) {
    const base = entries[rng.int(entries.length)]!;
    const key = keys.find((x) => base[x] !== undefined)!;
    const cidr = parseCidr(base[key]!);
    if (!cidr) continue;
    const size = 1n << BigInt((cidr.version === 4 ? 32 : 128) - cidr.prefixLength);
    const next = cidr.first + size * BigInt(1 + rng.int(8));
    entries.push({ ...base, [key]: `${formatValue(cidr.version, next)}/${cidr.prefixLength}` });
  }
}

const isoSecond = (epoch: number) => new Date(epoch * 1000).toISOString().slice(0, 19);

/** AWS ip-ranges.json churned, published at `at`. */
export function churnAws(doc: Record<string, unknown>, at: number, rng: Mulberry32): string {
  churnPrefixes(doc.prefixes as Array<Record<string, string>>, ['ip_prefix'], rng);
  churnPrefixes(doc.ipv6_prefixes as Array<Record<string, string>>, ['ipv6_prefix'], rng);
  doc.syncToken = String(at);
  doc.createDate = isoSecond(at).replace('T', '-').replaceAll(':', '-');
  return JSON.stringify(doc);
}

/** Google Cloud cloud.json churned, created at `at`. */
export function churnGoogleCloud(doc: Record<string, unknown>, at: number, rng: Mulberry32): string {
  churnPrefixes(doc.prefixes as Array<Record<string, string>>, ['ipv4Prefix', 'ipv6Prefix'], rng);
  doc.syncToken = String(at * 1000);
  doc.creationTime = `${isoSecond(at)}.000000`;
  return JSON.stringify(doc);
}

/** The Tor exits of a day: the set churned, each address seen within the day before `at`. */
export class TorExits {
  private listed: string[];
  private readonly pool: string[];
  private next = 0;

  constructor(exitAddresses: string, bulk: string) {
    this.listed = [...new Set([...exitAddresses.matchAll(/^ExitAddress (\S+)/gm)].map((m) => m[1]!))];
    const listed = new Set(this.listed);
    this.pool = bulk
      .split('\n')
      .map((l) => l.trim())
      .filter((a) => a && !listed.has(a));
  }

  private fresh(): string {
    const a = this.pool[this.next++];
    if (a !== undefined) return a;
    const n = this.next;
    return `185.${100 + ((n >> 16) & 63)}.${(n >> 8) & 255}.${n & 255}`;
  }

  /** The day's exit-addresses file, downloaded at `at`. */
  day(at: number, rng: Mulberry32): string {
    const n = changes(this.listed.length, CHURN.torExits, rng);
    for (let k = 0; k < n; k++) this.listed.splice(rng.int(this.listed.length), 1);
    for (let k = 0; k < n; k++) this.listed.push(this.fresh());
    const fmt = (t: number) => isoSecond(t).replace('T', ' ');
    const lines = ['@type tordnsel 1.0', `Downloaded ${fmt(at)}`];
    this.listed.forEach((address, i) => {
      const seen = at - 300 - rng.int(86_000);
      lines.push(
        `ExitNode ${i.toString(16).toUpperCase().padStart(40, '0')}`,
        `Published ${fmt(seen - 3600)}`,
        `LastStatus ${fmt(seen - 60)}`,
        `ExitAddress ${address} ${fmt(seen)}`,
      );
    });
    return `${lines.join('\n')}\n`;
  }
}

/** asn2org's lines (header first) with some names taken from other rows. */
export function churnAsNames(lines: string[], rng: Mulberry32): void {
  const n = changes(lines.length - 1, CHURN.asNames, rng);
  for (let k = 0; k < n; k++) {
    const i = 1 + rng.int(lines.length - 1);
    const j = 1 + rng.int(lines.length - 1);
    const a = lines[i]!;
    const b = lines[j]!;
    lines[i] = `${a.slice(0, a.indexOf(','))}${b.slice(b.indexOf(','))}`;
  }
}
