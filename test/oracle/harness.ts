/**
 * The harness around the oracle, shared by oracle.test.ts (excerpts) and verify-shared.ts (all
 * of ../shared/data): which addresses to ask (a seeded draw), asking the service, and comparing
 * each answer with the oracle's, field group by field group.
 */
import { request } from 'undici';
import { MAX, formatValue, type Family } from './ip.js';
import type { MappingRow } from './parsers.js';
import { metadataKey } from './range-feeds.js';
import type { Expected, ExpectedRange, Oracle } from './oracle.js';

// ------------------------------------------------------------------ seeded draw

/** mulberry32: a small seeded PRNG, so that a run asks the same addresses again. */
export function prng(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface DrawOptions {
  seed: number;
  /** Ranges sampled per feed (each gives an inside address and its four boundaries). */
  rangesPerFeed: number;
  /** Mapping rows sampled per source and family. */
  rowsPerSource: number;
  /** Rows lying inside another row of their source, sampled per source. */
  nestedRows: number;
  randomV4: number;
  randomV6: number;
  /** Addresses re-spelled (IPv4-mapped, IPv4-compatible, expanded, upper case, dotted tail). */
  respelled: number;
  /** Exactly this many queries: more random addresses are added, or a seeded sample is kept. */
  total?: number;
}

/** The query texts to ask, without repeats, in a stable order. */
export function drawQueries(oracle: Oracle, options: DrawOptions): string[] {
  const random = prng(options.seed);
  const out = new Set<string>();
  const values: { family: Family; value: bigint }[] = [];
  const below = (n: number) => Math.floor(random() * n);
  const bigBelow = (n: bigint) => {
    let r = 0n;
    for (let i = 0; i < 5; i += 1) r = (r << 32n) | BigInt(Math.floor(random() * 4294967296));
    return r % n;
  };
  const add = (family: Family, value: bigint) => {
    if (value < 0n || value > MAX[family]) return;
    values.push({ family, value });
    out.add(formatValue(family, value));
  };
  const span = (family: Family, first: bigint, last: bigint) => {
    add(family, first + bigBelow(last - first + 1n));
    add(family, first);
    add(family, last);
    add(family, first - 1n);
    add(family, last + 1n);
  };
  const sample = <T>(items: T[], n: number): T[] => {
    if (items.length <= n) return items;
    const picked = new Set<number>();
    while (picked.size < n) picked.add(below(items.length));
    return [...picked].sort((a, b) => a - b).map((i) => items[i]!);
  };

  // Every feed, stale Tor entries included (they must not be served).
  const feeds = [...new Set(oracle.parsedRanges.map((r) => r.feed))].sort();
  for (const feed of feeds) {
    const ranges = oracle.parsedRanges.filter((r) => r.feed === feed);
    for (const range of sample(ranges, options.rangesPerFeed))
      span(range.cidr.family, range.cidr.first, range.cidr.last);
  }
  for (const source of oracle.sourceRank) {
    for (const family of [4, 6] as Family[]) {
      const rows = oracle.rows.filter((r) => r.source === source && r.family === family);
      for (const row of sample(rows, options.rowsPerSource)) span(family, row.first, row.last);
      for (const row of sample(nestedRows(rows), options.nestedRows)) span(family, row.first, row.last);
    }
  }
  for (const entry of oracle.bogons) span(entry.cidr.family, entry.cidr.first, entry.cidr.last);
  for (let i = 0; i < options.randomV4; i += 1) add(4, bigBelow(1n << 32n));
  const globalUnicast = 1n << 125n;
  for (let i = 0; i < options.randomV6; i += 1) {
    add(6, i % 2 === 0 ? globalUnicast + bigBelow(globalUnicast) : bigBelow(1n << 128n));
  }
  for (const spelling of FIXED_QUERIES) out.add(spelling);
  for (const { family, value } of sample(values, options.respelled)) {
    for (const spelling of respell(family, value)) out.add(spelling);
  }
  const total = options.total;
  if (total === undefined) return [...out];
  for (let i = 0; out.size < total; i += 1) {
    if (i % 2 === 0) add(4, bigBelow(1n << 32n));
    else add(6, globalUnicast + bigBelow(globalUnicast));
  }
  const fixed = new Set(FIXED_QUERIES);
  const drawn = [...out].filter((q) => !fixed.has(q));
  return [...FIXED_QUERIES, ...sample(drawn, total - FIXED_QUERIES.length)];
}

/** Rows lying inside an earlier-starting (or equal-starting, larger) row of the same list. */
export function nestedRows(rows: MappingRow[]): MappingRow[] {
  const sorted = [...rows].sort((a, b) =>
    a.first < b.first
      ? -1
      : a.first > b.first
        ? 1
        : a.last > b.last
          ? -1
          : a.last < b.last
            ? 1
            : a.order - b.order,
  );
  const out: MappingRow[] = [];
  let maxLast = -1n;
  for (const row of sorted) {
    if (row.last <= maxLast) out.push(row);
    if (row.last > maxLast) maxLast = row.last;
  }
  return out;
}

function hex16(value: bigint, shift: number): string {
  return ((value >> BigInt(shift)) & 0xffffn).toString(16);
}

function dotted(value32: bigint): string {
  return [24, 16, 8, 0].map((s) => Number((value32 >> BigInt(s)) & 0xffn)).join('.');
}

/** Other spellings of one address that the rules accept (and what each must be looked up as). */
export function respell(family: Family, value: bigint): string[] {
  if (family === 4) {
    const v4 = dotted(value);
    return [
      `::ffff:${v4}`,
      `::FFFF:${v4}`,
      `0:0:0:0:0:ffff:${v4}`,
      `::ffff:${hex16(value, 16)}:${hex16(value, 0)}`,
      `0000:0000:0000:0000:0000:FFFF:${hex16(value, 16).padStart(4, '0')}:${hex16(value, 0).padStart(4, '0')}`,
      `::${v4}`,
    ];
  }
  const groups = Array.from({ length: 8 }, (_, i) => hex16(value, 112 - 16 * i));
  return [
    groups.map((g) => g.padStart(4, '0')).join(':'),
    groups.join(':').toUpperCase(),
    `${groups.slice(0, 6).join(':')}:${dotted(value & 0xffffffffn)}`,
  ];
}

/** Spellings the rules name, and texts that are not one address (422 invalid_ip). */
export const FIXED_QUERIES = [
  '::ffff:1.1.1.1',
  '::ffff:101:101',
  '::1.1.1.1',
  '::101:101',
  '64:ff9b::1.1.1.1',
  '64:ff9b::8.8.8.8',
  '2606:4700::104.16.0.1',
  '::ffff:104.16.0.1',
  '::ffff:10.0.0.1',
  '::ffff:0:0',
  '1:2:3:4:5:6:7::',
  '::2:3:4:5:6:7:8',
  '2a02:26f7:b542:4000::1',
  '2804:490:8c00::1',
  '0.0.0.0',
  '255.255.255.255',
  '::',
  '::1',
  'ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff',
  '192.0.0.9',
  '192.0.0.8',
  '192.88.99.1',
  '2001:1::1',
  '2001:1::4',
  '2001:db8::1',
  '2002::1',
  '2001::1',
  '3fff::1',
  '5f00::1',
  'fec0::1',
  // Not one address in the accepted forms.
  '01.1.1.1',
  '1.1.1.01',
  '1.1.1',
  '1.1.1.1.1',
  '256.1.1.1',
  '1.1.1.1/32',
  '2001:db8::/32',
  'fe80::1%eth0',
  '1::2::3',
  '12345::',
  ':::',
  '1:2:3:4:5:6:7:8:9',
  '1:2:3:4:5:6:7::8',
  '::ffff:01.1.1.1',
  '::ffff:1.1.1',
  '0x1.1.1.1',
  'g::1',
  ' 1.1.1.1',
];

// ------------------------------------------------------------------ asking the service

export interface ServiceAnswer {
  status: number;
  body: Record<string, unknown> | null;
}

function pathOf(query: string): string {
  return /^[0-9A-Za-z:.]+$/.test(query) ? query : encodeURIComponent(query);
}

/** GET /v1/ip/{query} for every query, a few at a time. */
export async function askService(
  baseUrl: string,
  key: string,
  queries: string[],
  concurrency = 8,
  onProgress?: (done: number) => void,
): Promise<Map<string, ServiceAnswer>> {
  const out = new Map<string, ServiceAnswer>();
  let next = 0;
  const worker = async () => {
    while (next < queries.length) {
      const query = queries[next++]!;
      const response = await request(`${baseUrl}/v1/ip/${pathOf(query)}`, {
        headers: { authorization: `Bearer ${key}` },
      });
      const text = await response.body.text();
      let body: Record<string, unknown> | null = null;
      try {
        body = JSON.parse(text) as Record<string, unknown>;
      } catch {
        body = { unparsed: text };
      }
      out.set(query, { status: response.statusCode, body });
      if (onProgress && out.size % 5000 === 0) onProgress(out.size);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return out;
}

// ------------------------------------------------------------------ comparing

export interface Difference {
  query: string;
  field: string;
  service: unknown;
  oracle: unknown;
}

export interface ImportWindow {
  start: string;
  end: string;
}

function rangeText(r: { prefix: unknown; provider: unknown; category: unknown; metadata: unknown }): string {
  const metadata =
    typeof r.metadata === 'object' && r.metadata !== null
      ? metadataKey(r.metadata as Record<string, string>)
      : JSON.stringify(r.metadata);
  return `${String(r.prefix)} ${String(r.provider)} ${String(r.category)} ${metadata}`;
}

function dateOk(expected: ExpectedRange, served: Record<string, unknown>, window: ImportWindow): boolean {
  const first = served.first_seen;
  const last = served.last_seen;
  if (typeof first !== 'string' || first !== last) return false;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(first)) return false;
  if (expected.date !== null) return first === expected.date;
  return window.start <= first && first <= window.end;
}

function expectedDate(expected: ExpectedRange, window: ImportWindow): string {
  return expected.date ?? `import time ${window.start}..${window.end}`;
}

/** The items of a that b does not match one for one (repeats count). */
function multisetMinus(a: string[], b: string[]): string[] {
  const left = new Map<string, number>();
  for (const item of b) left.set(item, (left.get(item) ?? 0) + 1);
  return a.filter((item) => {
    const n = left.get(item) ?? 0;
    if (n > 0) left.set(item, n - 1);
    return n === 0;
  });
}

/** The differences between one service answer and the oracle's, by field group. */
export function compare(expected: Expected, answer: ServiceAnswer, window: ImportWindow): Difference[] {
  const diffs: Difference[] = [];
  const query = expected.query;
  const diff = (field: string, service: unknown, oracle: unknown) =>
    diffs.push({ query, field, service, oracle });
  const body = answer.body ?? {};

  if (!expected.valid) {
    if (answer.status !== 422 || body.error !== 'invalid_ip') {
      diff('status', `${answer.status} ${JSON.stringify(body.error ?? null)}`, '422 "invalid_ip"');
    }
    return diffs;
  }
  if (answer.status !== 200) {
    diff('status', `${answer.status} ${JSON.stringify(body.error ?? body.detail ?? null)}`, 200);
    return diffs;
  }

  const bogon = body.bogon as Record<string, unknown> | null | undefined;
  if (body.is_bogon !== expected.is_bogon) diff('is_bogon', body.is_bogon, expected.is_bogon);
  const servedBogonPrefix = bogon && typeof bogon === 'object' ? bogon.prefix : null;
  if (expected.is_bogon || body.is_bogon === true) {
    if (servedBogonPrefix !== expected.bogon_prefix)
      diff('bogon.prefix', servedBogonPrefix, expected.bogon_prefix);
  }
  if (expected.is_bogon) {
    const extra = Object.keys(body).filter((k) => k !== 'is_bogon' && k !== 'bogon');
    if (extra.length > 0) diff('bogon.only_fields', extra.join(','), 'is_bogon,bogon');
    return diffs;
  }
  if (body.is_bogon === true) return diffs;

  if (body.ip !== expected.ip) diff('ip', body.ip, expected.ip);

  const asn = body.asn as Record<string, unknown> | null | undefined;
  if (expected.asn === null || !asn) {
    if ((expected.asn === null) !== !asn) {
      diff(
        'asn',
        asn ? `${String(asn.source)} AS${String(asn.asn)} ${String(asn.route)}` : (asn ?? 'absent'),
        expected.asn ? `${expected.asn.source} AS${expected.asn.asn} ${expected.asn.route}` : null,
      );
    }
  } else {
    for (const field of ['asn', 'route', 'source'] as const) {
      if (asn[field] !== expected.asn[field]) diff(`asn.${field}`, asn[field], expected.asn[field]);
    }
    if (expected.asn.descr !== undefined && asn.descr !== expected.asn.descr) {
      diff('asn.descr', asn.descr, expected.asn.descr);
    }
    if (expected.asn.country !== undefined && asn.country !== expected.asn.country) {
      diff('asn.country', asn.country, expected.asn.country);
    }
  }

  for (const field of ['provider', 'prefix', 'is_datacenter', 'is_cdn'] as const) {
    if (body[field] !== expected[field]) diff(field, body[field], expected[field]);
  }

  const served = Array.isArray(body.provider_ranges)
    ? (body.provider_ranges as Record<string, unknown>[])
    : null;
  if (!served) {
    diff('provider_ranges', body.provider_ranges, expected.provider_ranges.map(rangeText));
    return diffs;
  }
  const servedTexts = served.map((r) =>
    rangeText(r as { prefix: unknown; provider: unknown; category: unknown; metadata: unknown }),
  );
  const expectedTexts = expected.provider_ranges.map(rangeText);
  if (servedTexts.join('\n') !== expectedTexts.join('\n')) {
    const missing = multisetMinus(expectedTexts, servedTexts);
    const extra = multisetMinus(servedTexts, expectedTexts);
    const field =
      missing.length === 0 && extra.length === 0
        ? 'provider_ranges.order'
        : missing.length > 0 && extra.length > 0
          ? 'provider_ranges.different'
          : missing.length > 0
            ? 'provider_ranges.missing'
            : 'provider_ranges.extra';
    diff(
      field,
      field === 'provider_ranges.order' ? servedTexts : extra,
      field === 'provider_ranges.order' ? expectedTexts : missing,
    );
  } else {
    expected.provider_ranges.forEach((range, i) => {
      const r = served[i]!;
      if (!dateOk(range, r, window)) {
        diff(
          'provider_ranges.dates',
          `${String(r.prefix)} ${String(r.provider)} first_seen ${String(r.first_seen)} last_seen ${String(r.last_seen)}`,
          `${range.prefix} ${range.provider} ${expectedDate(range, window)}`,
        );
      }
    });
  }
  return diffs;
}

/** One line per difference: address, field, service value, oracle value. */
export function formatDifference(d: Difference): string {
  const show = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));
  return `${d.query}  ${d.field}\n    service: ${show(d.service)}\n    oracle:  ${show(d.oracle)}`;
}

/** Differences grouped by field, in a stable order. */
export function byField(diffs: Difference[]): Map<string, Difference[]> {
  const out = new Map<string, Difference[]>();
  for (const d of diffs) out.set(d.field, [...(out.get(d.field) ?? []), d]);
  return new Map([...out].sort((a, b) => (a[0] < b[0] ? -1 : 1)));
}

export const FIELD_GROUPS = [
  'status',
  'is_bogon',
  'bogon.prefix',
  'bogon.only_fields',
  'ip',
  'asn',
  'asn.asn',
  'asn.route',
  'asn.source',
  'asn.descr',
  'asn.country',
  'provider',
  'prefix',
  'is_datacenter',
  'is_cdn',
  'provider_ranges.missing',
  'provider_ranges.extra',
  'provider_ranges.different',
  'provider_ranges.order',
  'provider_ranges.dates',
];
