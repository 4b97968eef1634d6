/**
 * The oracle's parsers of the published-range feeds (cloud, hosting, CDN, Tor, relay and crawler
 * lists), written like parsers.ts from docs/feeds.md and the files themselves: one per feed format,
 * FEEDS naming each feed's provider and parser, parseFeed giving one range per distinct prefix,
 * category and metadata.
 */
import { hostCidr, type Cidr } from './ip.js';
import { lines, needAddress, needCidr } from './parsers.js';

export type Category = 'cloud' | 'hosting' | 'cdn' | 'tor_exit' | 'relay' | 'crawler';

export interface FeedRange {
  /** The import kind (feed name): the order's second key. */
  feed: string;
  provider: string;
  category: Category;
  metadata: Record<string, string>;
  cidr: Cidr;
  /** first_seen = last_seen; null = the import time (the feed carries no date). */
  date: string | null;
}

export interface FeedFile {
  name: string;
  text: string;
}

/** "2026-08-21T01:05:42.583377" or "2025-07-24 10:00:06.525037" (UTC) → "2026-08-21T01:05:42Z". */
export function utcSeconds(text: string, where: string): string {
  const m = /^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(\.\d+)?Z?$/.exec(text.trim());
  if (!m) throw new Error(`${where}: unreadable timestamp ${JSON.stringify(text)}`);
  return `${m[1]}T${m[2]}Z`;
}

function json(file: FeedFile): unknown {
  return JSON.parse(file.text) as unknown;
}

type Json = Record<string, unknown>;

function obj(value: unknown, where: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    throw new Error(`${where}: not an object`);
  return value as Json;
}

function arr(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${where}: not an array`);
  return value;
}

function str(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new Error(`${where}: not a string`);
  return value;
}

interface Draft {
  cidr: Cidr;
  category: Category;
  metadata: Record<string, string>;
  date: string | null;
}

function aws(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    const m = /^(\d{4}-\d{2}-\d{2})-(\d{2})-(\d{2})-(\d{2})$/.exec(
      str(doc.createDate, `${file.name} createDate`),
    );
    if (!m) throw new Error(`${file.name}: unreadable createDate`);
    const date = `${m[1]}T${m[2]}:${m[3]}:${m[4]}Z`;
    const records: Draft[] = [];
    for (const [list, key] of [
      ['prefixes', 'ip_prefix'],
      ['ipv6_prefixes', 'ipv6_prefix'],
    ] as const) {
      arr(doc[list] ?? [], `${file.name} ${list}`).forEach((item, index) => {
        const where = `${file.name} ${list}[${index}]`;
        const entry = obj(item, where);
        const service = str(entry.service, where);
        records.push({
          cidr: needCidr(str(entry[key], where), where),
          category: service === 'CLOUDFRONT' || service === 'CLOUDFRONT_ORIGIN_FACING' ? 'cdn' : 'cloud',
          metadata: {
            region: str(entry.region, where),
            service,
            network_border_group: str(entry.network_border_group, where),
          },
          date,
        });
      });
    }
    // AMAZON repeats every other service's prefixes: its record is dropped where another service
    // lists the same prefix in the same file.
    const specific = new Set(records.filter((r) => r.metadata.service !== 'AMAZON').map((r) => r.cidr.text));
    out.push(...records.filter((r) => r.metadata.service !== 'AMAZON' || !specific.has(r.cidr.text)));
  }
  return out;
}

function googleShape(
  files: FeedFile[],
  make: (entry: Json, where: string) => Omit<Draft, 'cidr' | 'date'>,
): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    const date = utcSeconds(str(doc.creationTime, `${file.name} creationTime`), file.name);
    arr(doc.prefixes, `${file.name} prefixes`).forEach((item, index) => {
      const where = `${file.name} prefixes[${index}]`;
      const entry = obj(item, where);
      const prefix = entry.ipv4Prefix ?? entry.ipv6Prefix;
      out.push({ cidr: needCidr(str(prefix, where), where), date, ...make(entry, where) });
    });
  }
  return out;
}

function googleCloud(files: FeedFile[]): Draft[] {
  return googleShape(files, (entry, where) => {
    const metadata: Record<string, string> = {};
    if (entry.scope !== undefined) metadata.region = str(entry.scope, where);
    if (entry.service !== undefined) metadata.service = str(entry.service, where);
    return { category: 'cloud', metadata };
  });
}

function crawler(operator: string, bot: string) {
  return (files: FeedFile[]): Draft[] => {
    const metadata = { operator, bot };
    const jsonFiles = files.filter((f) => f.text.trimStart().startsWith('{'));
    const listFiles = files.filter((f) => !f.text.trimStart().startsWith('{'));
    return [
      ...googleShape(jsonFiles, () => ({ category: 'crawler', metadata })),
      ...cidrList(listFiles, 'crawler', metadata),
    ];
  };
}

function azure(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    arr(doc.values, `${file.name} values`).forEach((item, index) => {
      const where = `${file.name} values[${index}]`;
      const value = obj(item, where);
      const name = str(value.name, `${where}.name`);
      const properties = obj(value.properties, `${where}.properties`);
      const region = properties.region === undefined ? '' : str(properties.region, `${where}.region`);
      const cdn =
        name === 'AzureFrontDoor' ||
        name.startsWith('AzureFrontDoor.') ||
        name === 'AzureCDN' ||
        name.startsWith('AzureCDN.');
      const metadata: Record<string, string> = region === '' ? { service: name } : { service: name, region };
      arr(properties.addressPrefixes, `${where}.addressPrefixes`).forEach((prefix, i) => {
        out.push({
          cidr: needCidr(str(prefix, `${where}.addressPrefixes[${i}]`), where),
          category: cdn ? 'cdn' : 'cloud',
          metadata,
          date: null,
        });
      });
    });
  }
  return out;
}

function oracleCloud(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    const date = utcSeconds(
      str(doc.last_updated_timestamp, `${file.name} last_updated_timestamp`),
      file.name,
    );
    arr(doc.regions, `${file.name} regions`).forEach((item, index) => {
      const where = `${file.name} regions[${index}]`;
      const region = obj(item, where);
      const regionName = str(region.region, `${where}.region`);
      arr(region.cidrs, `${where}.cidrs`).forEach((c, i) => {
        const cw = `${where}.cidrs[${i}]`;
        const entry = obj(c, cw);
        const tags = arr(entry.tags ?? [], `${cw}.tags`).map((t) => str(t, `${cw}.tags`));
        const metadata: Record<string, string> = { region: regionName };
        if (tags.length > 0) metadata.service = tags.join(',');
        out.push({ cidr: needCidr(str(entry.cidr, cw), cw), category: 'cloud', metadata, date });
      });
    });
  }
  return out;
}

/** One CIDR per line (or the first column of a CSV line); `#` lines and blank lines skipped. */
function cidrList(files: FeedFile[], category: Category, metadata: Record<string, string> = {}): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    lines(file.text).forEach((line, index) => {
      if (line.trim() === '' || line.startsWith('#')) return;
      const where = `${file.name}:${index + 1}`;
      out.push({ cidr: needCidr(line.split(',')[0]!, where), category, metadata, date: null });
    });
  }
  return out;
}

function linode(files: FeedFile[]): Draft[] {
  return files.flatMap((file) => {
    const m = /^# Last modified: (.+)$/m.exec(file.text);
    const date = m ? utcSeconds(m[1]!, file.name) : null;
    return cidrList([file], 'hosting').map((d) => ({ ...d, date }));
  });
}

function jsonPair(files: FeedFile[], v4: string, v6: string, category: Category): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const doc = obj(json(file), file.name);
    for (const key of [v4, v6]) {
      arr(doc[key] ?? [], `${file.name} ${key}`).forEach((prefix, index) => {
        const where = `${file.name} ${key}[${index}]`;
        out.push({ cidr: needCidr(str(prefix, where), where), category, metadata: {}, date: null });
      });
    }
  }
  return out;
}

const TOR_METADATA = { kind: 'exit_observed' };

function torExitAddresses(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    const downloaded = /^Downloaded (.+)$/m.exec(file.text);
    lines(file.text).forEach((line, index) => {
      if (!line.startsWith('ExitAddress ')) return;
      const where = `${file.name}:${index + 1}`;
      const [, address, ...when] = line.trim().split(/\s+/);
      const stamp = when.join(' ');
      const date = stamp ? utcSeconds(stamp, where) : downloaded ? utcSeconds(downloaded[1]!, where) : null;
      out.push({
        cidr: hostCidr(needAddress(address ?? '', where)),
        category: 'tor_exit',
        metadata: TOR_METADATA,
        date,
      });
    });
  }
  return out;
}

function torBulk(files: FeedFile[]): Draft[] {
  const out: Draft[] = [];
  for (const file of files) {
    lines(file.text).forEach((line, index) => {
      if (line.trim() === '' || line.startsWith('#')) return;
      const where = `${file.name}:${index + 1}`;
      out.push({
        cidr: hostCidr(needAddress(line, where)),
        category: 'tor_exit',
        metadata: TOR_METADATA,
        date: null,
      });
    });
  }
  return out;
}

interface FeedSpec {
  provider: string;
  parse: (files: FeedFile[]) => Draft[];
}

/** Every provider-range feed: import kind → provider name and parser (docs/feeds.md). */
export const FEEDS: Record<string, FeedSpec> = {
  aws: { provider: 'AWS', parse: aws },
  'google-cloud': { provider: 'Google Cloud', parse: googleCloud },
  azure: { provider: 'Microsoft Azure', parse: azure },
  oracle: { provider: 'Oracle Cloud', parse: oracleCloud },
  cloudflare: { provider: 'Cloudflare', parse: (f) => cidrList(f, 'cdn') },
  fastly: { provider: 'Fastly', parse: (f) => jsonPair(f, 'addresses', 'ipv6_addresses', 'cdn') },
  digitalocean: { provider: 'DigitalOcean', parse: (f) => cidrList(f, 'hosting') },
  linode: { provider: 'Linode', parse: linode },
  hetzner: { provider: 'Hetzner', parse: (f) => jsonPair(f, 'IPv4Prefixes', 'IPv6Prefixes', 'hosting') },
  ovh: { provider: 'OVHcloud', parse: (f) => jsonPair(f, 'IPv4Prefixes', 'IPv6Prefixes', 'hosting') },
  'tor-exit-addresses': { provider: 'Tor Project', parse: torExitAddresses },
  'tor-bulk-exit': { provider: 'Tor Project', parse: torBulk },
  'apple-private-relay': { provider: 'Apple iCloud Private Relay', parse: (f) => cidrList(f, 'relay') },
  googlebot: { provider: 'Google', parse: crawler('Google', 'Googlebot') },
  'google-special-crawlers': { provider: 'Google', parse: crawler('Google', 'Google special-case crawler') },
  'google-user-triggered-fetchers': {
    provider: 'Google',
    parse: crawler('Google', 'Google user-triggered fetcher'),
  },
  bingbot: { provider: 'Microsoft', parse: crawler('Microsoft', 'Bingbot') },
};

/** Metadata as JSON with its keys sorted (the order's last key and the identity of a range). */
export function metadataKey(metadata: Record<string, string>): string {
  const sorted: Record<string, string> = {};
  for (const key of Object.keys(metadata).sort()) sorted[key] = metadata[key]!;
  return JSON.stringify(sorted);
}

/**
 * The ranges of one feed: one per distinct (prefix, category, metadata); a repeat keeps the
 * latest date (only the Tor exit list has repeats with different dates).
 */
export function parseFeed(kind: string, files: FeedFile[]): FeedRange[] {
  const spec = FEEDS[kind];
  if (!spec) throw new Error(`no feed named ${kind}`);
  const byKey = new Map<string, FeedRange>();
  for (const draft of spec.parse(files)) {
    const key = `${draft.cidr.text} ${draft.category} ${metadataKey(draft.metadata)}`;
    const seen = byKey.get(key);
    if (!seen) {
      byKey.set(key, { feed: kind, provider: spec.provider, ...draft });
    } else if (draft.date !== null && (seen.date === null || draft.date > seen.date)) {
      seen.date = draft.date;
    }
  }
  return [...byKey.values()];
}
