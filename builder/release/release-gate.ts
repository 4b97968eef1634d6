/**
 * The release quality gate (docs/decisions/0029-quality-gates.md): a built release whose IP-to-ASN
 * mapping covers more than RELEASE_MAX_ROUTED_DROP less routed IPv4 or IPv6 space, or which has
 * more than RELEASE_MAX_ANSWER_DROP fewer current DNS answers, than the release CURRENT names is
 * not published unless forced; CURRENT stays where it is.
 */
import Database from 'better-sqlite3';
import path from 'node:path';
import { count, dropShare, percent } from '../drop-gate.js';

/** What the gate compares between two releases. */
export interface ReleaseFigures {
  /** Addresses of asn_segment pieces answered by a routed row (asn > 0), IPv4 and IPv6. */
  routedIpv4: number;
  routedIpv6: bigint;
  /** Current (name, address) answers: the sum of ip_summary.current_count. */
  currentAnswers: number;
}

/** The measures of the gate, as the metrics label them. */
export type ReleaseMeasure = 'routed_ipv4' | 'routed_ipv6' | 'current_answers';

/** The largest share of each measure a new release may lose against the current one. */
export interface ReleaseLimits {
  routed: number;
  answers: number;
}

export interface ReleaseDrop {
  measure: ReleaseMeasure;
  before: number | bigint;
  after: number | bigint;
  share: number;
  limit: number;
}

/** A release the gate refused; the message says what fell, what decides, and how to force it. */
export class ReleaseRefusedError extends Error {
  constructor(
    message: string,
    readonly drops: ReleaseDrop[],
  ) {
    super(message);
  }
}

const LABEL: Record<ReleaseMeasure, string> = {
  routed_ipv4: 'routed IPv4 addresses',
  routed_ipv6: 'routed IPv6 addresses',
  current_answers: 'current DNS answers',
};

const SETTING: Record<ReleaseMeasure, string> = {
  routed_ipv4: 'RELEASE_MAX_ROUTED_DROP',
  routed_ipv6: 'RELEASE_MAX_ROUTED_DROP',
  current_answers: 'RELEASE_MAX_ANSWER_DROP',
};

/** The first 12 bytes of an IPv4 address's 16-byte key (::ffff:a.b.c.d, shared/ip.ts ipKey). */
const V4_PREFIX = Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff]);

/** Reads the gate's figures of a release file (a few hundred thousand segments: well under a second). */
export function releaseFigures(file: string): ReleaseFigures {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const segments = db
      .prepare(
        `SELECT s.first, s.last FROM asn_segment s JOIN asn_range r ON r.id = s.range_id WHERE r.asn > 0`,
      )
      .raw()
      .iterate() as IterableIterator<[Buffer, Buffer]>;
    let routedIpv4 = 0;
    let routedIpv6 = 0n;
    for (const [first, last] of segments) {
      if (first.subarray(0, 12).equals(V4_PREFIX)) {
        routedIpv4 += last.readUInt32BE(12) - first.readUInt32BE(12) + 1;
      } else {
        const a = (first.readBigUInt64BE(0) << 64n) | first.readBigUInt64BE(8);
        const b = (last.readBigUInt64BE(0) << 64n) | last.readBigUInt64BE(8);
        routedIpv6 += b - a + 1n;
      }
    }
    const currentAnswers = db.prepare(`SELECT total(current_count) FROM ip_summary`).pluck().get() as number;
    return { routedIpv4, routedIpv6, currentAnswers };
  } finally {
    db.close();
  }
}

export interface ReleaseCheck {
  /** The measures over their limits (none: the release may be published). */
  drops: ReleaseDrop[];
  /** The figures before and after, for the log. */
  line: string;
  /** Each drop: before, after, share and the setting that decides. */
  summary: string;
  /** Why the release is not published, with how to force it (empty without drops). */
  message: string;
}

/** The figures of two releases compared. */
export interface ReleaseComparison {
  /** The measures over their limits. */
  drops: ReleaseDrop[];
  /** Per drop: before, after, share and the setting that decides. */
  parts: string[];
  /** Per measure: before -> after. */
  figures: string[];
}

/** Compares the figures of a new release with the current one's. */
export function checkReleaseDrop(
  before: ReleaseFigures,
  after: ReleaseFigures,
  limits: ReleaseLimits,
): ReleaseComparison {
  const measured: Array<[ReleaseMeasure, number | bigint, number | bigint, number]> = [
    ['routed_ipv4', before.routedIpv4, after.routedIpv4, limits.routed],
    ['routed_ipv6', before.routedIpv6, after.routedIpv6, limits.routed],
    ['current_answers', before.currentAnswers, after.currentAnswers, limits.answers],
  ];
  const drops: ReleaseDrop[] = [];
  const figures: string[] = [];
  for (const [measure, b, a, limit] of measured) {
    const share = dropShare(b, a);
    figures.push(`${LABEL[measure]} ${count(b)} -> ${count(a)}${share > 0 ? ` (-${percent(share)})` : ''}`);
    if (share > limit) drops.push({ measure, before: b, after: a, share, limit });
  }
  const parts = drops.map(
    (d) =>
      `${LABEL[d.measure]} fall from ${count(d.before)} to ${count(d.after)} ` +
      `(-${percent(d.share)}, more than the ${percent(d.limit)} ${SETTING[d.measure]} allows)`,
  );
  return { drops, parts, figures };
}

/**
 * The gate for the release `id` built at `file`, against the release CURRENT names (`currentFile`;
 * none: nothing to compare, every release passes). A current release that cannot be read is logged
 * and the new one passes: it replaces a file that is broken anyway.
 */
export function gateRelease(
  id: string,
  file: string,
  currentFile: string | null,
  limits: ReleaseLimits,
  log: (line: string) => void,
): ReleaseCheck {
  if (!currentFile) return { drops: [], line: '', summary: '', message: '' };
  const current = path.basename(currentFile, '.sqlite');
  let before: ReleaseFigures;
  try {
    before = releaseFigures(currentFile);
  } catch (error) {
    log(
      `  quality gate: the current release ${current} cannot be read (${(error as Error).message}); not compared`,
    );
    return { drops: [], line: '', summary: '', message: '' };
  }
  const { drops, parts, figures } = checkReleaseDrop(before, releaseFigures(file), limits);
  const line = `  quality gate against ${current}: ${figures.join(', ')}`;
  const summary = parts.join('; ');
  const message =
    drops.length === 0
      ? ''
      : `release ${id} not published: against the current release ${current}, ${summary}. ` +
        `CURRENT still names ${current}. Check the feeds and the last collect round; if the fall is real, ` +
        `publish with "builder release --force" (or "builder run --force-release")`;
  return { drops, line, summary, message };
}
