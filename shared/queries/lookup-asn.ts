/** GET /v1/asn/{asn} (SPEC.md AsnLookup): the AS's metadata and its mapped ranges, IPv4 first, paged. */
import { ApiError } from '../errors.js';
import { findAsnBogon } from '../bogons.js';
import { blocks, requireRelease, statement } from './common.js';
import { decodeCursor, encodeCursor } from './paging.js';
import type { Release } from './release.js';

export interface LookupAsnParams {
  asn: string;
  limit: number;
  cursor?: string | undefined;
}

const MAX_ASN = 4294967295;

interface AsnRow {
  name: string | null;
  country: string | null;
  source: string | null;
  category: string | null;
  category_source: string | null;
  network_role: string | null;
  routes_v4: number;
  routes_v6: number;
  ipv4_addresses: number;
  providers: string;
  observed_ips: number | null;
  observed_domains: number | null;
}

/** `64500` or `AS64500` (any case), 1 to 4294967295; else invalid_asn. */
export function parseAsnParam(text: string): number {
  const m = /^(?:as)?(\d{1,10})$/i.exec(text);
  const asn = m ? Number(m[1]) : NaN;
  if (!Number.isInteger(asn) || asn < 1 || asn > MAX_ASN) {
    throw new ApiError(
      'invalid_asn',
      `${JSON.stringify(text.slice(0, 100))} is not an AS number from 1 to 4294967295: send 64500 or AS64500`,
    );
  }
  return asn;
}

export function lookupAsn(releaseOrNull: Release | null, params: LookupAsnParams) {
  const asn = parseAsnParam(params.asn);
  const release = requireRelease(releaseOrNull);
  const query = `lookup_asn\0${asn}`;
  const after = decodeCursor(release, query, params.cursor, ['number', 'string']) ?? [0, ''];
  const bogon = findAsnBogon(asn);
  const row = bogon
    ? undefined
    : (statement(
        release,
        `SELECT name, country, source, category, category_source, network_role, routes_v4, routes_v6,
           ipv4_addresses, providers, observed_ips, observed_domains FROM asn WHERE asn = ?`,
      ).get(asn) as AsnRow | undefined);
  let ranges: Array<{
    version: number;
    first: Buffer;
    first_text: string;
    last_text: string;
    prefixes: string;
  }> = [];
  let more = false;
  if (!bogon) {
    ranges = statement(
      release,
      `SELECT version, first, first_text, last_text, prefixes FROM asn_range INDEXED BY asn_range_by_asn
         WHERE asn = ? AND (version, first) > (?, ?) ORDER BY version, first LIMIT ?`,
    ).all(asn, after[0], Buffer.from(after[1] as string, 'hex'), params.limit + 1) as typeof ranges;
    more = ranges.length > params.limit;
    if (more) ranges.pop();
  }
  const last = ranges[ranges.length - 1];
  return {
    asn,
    is_bogon: bogon !== null,
    bogon: bogon ? { ...bogon } : null,
    name: row?.name ?? null,
    country: row?.country ?? null,
    source: row?.source ?? null,
    category: row?.category ?? null,
    category_source: row?.category_source ?? null,
    network_role: row?.network_role ?? null,
    routes: { ipv4: row?.routes_v4 ?? 0, ipv6: row?.routes_v6 ?? 0 },
    ipv4_addresses: row?.ipv4_addresses ?? 0,
    providers: row
      ? (JSON.parse(row.providers) as Array<{ provider: string; category: string; ranges: number }>)
      : [],
    observed:
      row && row.observed_ips !== null && row.observed_domains !== null
        ? { ips: row.observed_ips, domains: row.observed_domains }
        : null,
    ranges: ranges.map((r) => ({
      first: r.first_text,
      last: r.last_text,
      prefixes: JSON.parse(r.prefixes) as string[],
    })),
    next_cursor:
      more && last ? encodeCursor(release, query, [last.version, last.first.toString('hex')]) : null,
    ...blocks(release),
  };
}
