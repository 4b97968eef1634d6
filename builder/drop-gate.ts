/**
 * The feed quality gate (docs/decisions/0029-quality-gates.md): a new snapshot of a feed (fetched,
 * imported, or fetched by `builder run`) with more than a set share fewer rows, IPv4 addresses or
 * IPv6 addresses than the previous snapshot of that feed is not taken unless the operator accepts
 * it (--accept-drop). A truncated download or a publisher's bad day then costs a day of freshness,
 * not a day of wrong answers.
 */
import { SETTINGS } from '../shared/config.js';
import type { Coverage } from './coverage.js';
import type { SourceDefinition } from './sources/types.js';

/** The largest share of each measure a new snapshot may lose (0.2: a fifth). */
export interface DropLimits {
  rows: number;
  addresses: number;
}

export const DEFAULT_DROP_LIMITS: DropLimits = {
  rows: SETTINGS.FEED_MAX_ROW_DROP.schema.parse(undefined),
  addresses: SETTINGS.FEED_MAX_ADDRESS_DROP.schema.parse(undefined),
};

/** What the gate compares: rows (records the parser kept) and the addresses they cover. */
export interface SnapshotFigures {
  rows: number;
  coverage: Coverage;
}

/** The measures of the gate, as the metrics label them. */
export type FeedMeasure = 'rows' | 'ipv4' | 'ipv6';

/** One measure that fell by more than its limit. */
export interface Drop {
  measure: FeedMeasure;
  before: number | bigint;
  after: number | bigint;
  /** (before - after) / before. */
  share: number;
  /** The share allowed for this feed. */
  limit: number;
}

/** The gate's verdict on one snapshot: the measures over their limits (none: taken). */
export interface DropCheck {
  drops: Drop[];
  /** Each measure over its limit: before, after, share and the setting that decides. */
  summary: string;
  /** The whole sentence for the operator, with how to accept (empty when nothing dropped too far). */
  message: string;
}

const SETTING_OF: Record<FeedMeasure, 'FEED_MAX_ROW_DROP' | 'FEED_MAX_ADDRESS_DROP'> = {
  rows: 'FEED_MAX_ROW_DROP',
  ipv4: 'FEED_MAX_ADDRESS_DROP',
  ipv6: 'FEED_MAX_ADDRESS_DROP',
};

const UNIT: Record<FeedMeasure, string> = { rows: 'rows', ipv4: 'IPv4 addresses', ipv6: 'IPv6 addresses' };

/** A share as a percentage with at most one decimal: 0.2 → "20%", 0.0027 → "0.3%". */
export function percent(share: number): string {
  return `${Number((share * 100).toFixed(1))}%`;
}

/** A count with thousands separators; past 2^53 (IPv6 space) as a power of two: "2^113.83". */
export function count(n: number | bigint): string {
  if (typeof n === 'bigint' && n > BigInt(Number.MAX_SAFE_INTEGER))
    return `2^${Math.log2(Number(n)).toFixed(2)}`;
  return Number(n).toLocaleString('en-US');
}

/** The share of `before` that `after` lost (0 when it did not fall or there was nothing before). */
export function dropShare(before: number | bigint, after: number | bigint): number {
  if (typeof before === 'bigint' || typeof after === 'bigint') {
    const b = BigInt(before);
    const a = BigInt(after);
    return b > 0n && a < b ? Number(b - a) / Number(b) : 0;
  }
  return before > 0 && after < before ? (before - after) / before : 0;
}

/** The limits for one feed: the settings, raised to the feed's own `churn` where it declares one. */
export function limitsFor(source: Pick<SourceDefinition, 'churn'>, limits: DropLimits): DropLimits {
  const churn = source.churn ?? 0;
  return { rows: Math.max(limits.rows, churn), addresses: Math.max(limits.addresses, churn) };
}

/**
 * Compares a new snapshot of `source` with the previous one; the measures that fell by more than
 * the limits allow, with the operator's sentence: which feed, before and after, the share, the
 * setting that decides, and how to accept.
 */
export function checkFeedDrop(
  source: Pick<SourceDefinition, 'name' | 'churn'>,
  before: SnapshotFigures,
  after: SnapshotFigures,
  settings: DropLimits,
): DropCheck {
  const limits = limitsFor(source, settings);
  const measured: Array<[FeedMeasure, number | bigint, number | bigint, number]> = [
    ['rows', before.rows, after.rows, limits.rows],
    ['ipv4', before.coverage.ipv4, after.coverage.ipv4, limits.addresses],
    ['ipv6', before.coverage.ipv6, after.coverage.ipv6, limits.addresses],
  ];
  const drops: Drop[] = [];
  for (const [measure, b, a, limit] of measured) {
    const share = dropShare(b, a);
    if (share > limit) drops.push({ measure, before: b, after: a, share, limit });
  }
  if (drops.length === 0) return { drops, summary: '', message: '' };
  const parts = drops.map((d) => {
    const setting = SETTING_OF[d.measure];
    const base = d.measure === 'rows' ? settings.rows : settings.addresses;
    const allows =
      d.limit === base
        ? `the ${percent(d.limit)} ${setting} allows`
        : `the ${percent(d.limit)} allowed for ${source.name}, a list that churns (${setting} is ${base})`;
    return `${UNIT[d.measure]} fall from ${count(d.before)} to ${count(d.after)} (-${percent(d.share)}, more than ${allows})`;
  });
  const summary = parts.join('; ');
  return {
    drops,
    summary,
    message:
      `the new snapshot drops too much: ${summary}. ` +
      `If the publisher really shrank the feed, take this snapshot with --accept-drop ${source.name}`,
  };
}
