/** Shared collection of provider range records: canonical prefixes, rejects, duplicates. */
import { formatCidr, parseCidr, parseIp, type IpVersion } from '../../../shared/ip.js';
import type { RangeCategory } from '../../../shared/vocabulary.js';
import type { ParseResult, ProviderRangeRecord, Rejected } from '../types.js';
import { quote } from './lines.js';

export type Checked = { ok: true; prefix: string } | { ok: false; reason: string };

const FAMILY_NAME = { 4: 'an IPv4', 6: 'an IPv6' } as const;

/**
 * The canonical text of a CIDR: network address with host bits cleared (a published prefix
 * with host bits set is normalised, not rejected), RFC 5952 for IPv6. `family` restricts it
 * to one address family (for fields such as `ipv4Prefix`); `where` names the column or field.
 */
export function checkPrefix(text: string, where: string, family?: IpVersion): Checked {
  const expected = `expected ${family ? FAMILY_NAME[family] : 'a'} CIDR (address/length) in ${where}`;
  const cidr = parseCidr(text);
  if (!cidr) {
    const bare = !text.includes('/') && parseIp(text) !== null;
    return {
      ok: false,
      reason: `${expected}, got ${bare ? 'an address without /length ' : ''}${quote(text)}`,
    };
  }
  if (family && cidr.version !== family) {
    return { ok: false, reason: `${expected}, got an IPv${cidr.version} CIDR ${quote(text)}` };
  }
  return { ok: true, prefix: formatCidr(cidr) };
}

/** The single-address block (/32 or /128) of an address; for lists of addresses such as Tor's. */
export function checkAddress(text: string, where: string): Checked {
  const ip = parseIp(text);
  if (!ip) return { ok: false, reason: `expected an IPv4 or IPv6 address in ${where}, got ${quote(text)}` };
  return {
    ok: true,
    prefix: formatCidr({ ...ip, first: ip.value, prefixLength: ip.version === 4 ? 32 : 128 }),
  };
}

/**
 * Accumulates the records of one file. An exact repeat of a record already taken (same
 * prefix, category and metadata, e.g. a Tor address listed twice, or two spellings of one
 * prefix) is counted as read but kept once: it is neither a new record nor an error.
 */
export class ProviderRangeCollector {
  private readonly records: ProviderRangeRecord[] = [];
  private readonly rejected: Rejected[] = [];
  /** Record index by prefix, category and metadata. */
  private readonly seen = new Map<string, number>();
  private read = 0;

  constructor(private readonly provider: string) {}

  /**
   * Counts one data item and keeps its record, or its rejection at `line` (a number or a lazy
   * lookup). `seenAt`: the entry's own date (ISO 8601 UTC), where the format dates entries; a
   * repeated entry keeps the latest.
   */
  add(
    checked: Checked,
    category: RangeCategory,
    metadata: Readonly<Record<string, string>>,
    line: number | (() => number),
    seenAt?: string,
  ): void {
    if (!checked.ok) {
      this.reject(line, checked.reason);
      return;
    }
    this.read++;
    const key = `${checked.prefix} ${category} ${JSON.stringify(metadata)}`;
    const at = this.seen.get(key);
    if (at !== undefined) {
      const record = this.records[at]!;
      // ISO 8601 UTC texts of one form compare as their times do.
      if (seenAt !== undefined && (record.seenAt === undefined || seenAt > record.seenAt))
        record.seenAt = seenAt;
      return;
    }
    this.seen.set(key, this.records.length);
    // A copy per record: callers share one metadata object across a whole list.
    const record: ProviderRangeRecord = {
      prefix: checked.prefix,
      provider: this.provider,
      category,
      metadata: { ...metadata },
    };
    if (seenAt !== undefined) record.seenAt = seenAt;
    this.records.push(record);
  }

  /** Counts one data item that is read and deliberately not kept (it only repeats others). */
  skip(): void {
    this.read++;
  }

  /** Counts one data item that is rejected (bad prefix, wrong number of columns, …). */
  reject(line: number | (() => number), reason: string): void {
    this.read++;
    this.rejected.push({ line: typeof line === 'number' ? line : line(), reason });
  }

  result(publishedAt?: string): ParseResult<ProviderRangeRecord> {
    const result: ParseResult<ProviderRangeRecord> = {
      records: this.records,
      rejected: this.rejected,
      read: this.read,
    };
    if (publishedAt !== undefined) result.publishedAt = publishedAt;
    return result;
  }
}
