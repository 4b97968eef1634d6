/**
 * The symbolic times of a release's versioned tables (docs/decisions/0033-as-of.md), written by
 * the builder (builder/release/history.ts) and read back by the as-of queries: one module, so the
 * two sides cannot disagree.
 *
 * A time that moves with every feed snapshot or every DNS round would make an unchanged row a new
 * version at each release. Such a time is stored as a symbol that names it relative to its epoch:
 *
 * - SOURCE_DATE (-2): provider_range_hist.last_seen equal to its source's snapshot date in the
 *   epoch (epoch.source_dates[source]). Read back exactly.
 * - ROUND (-1): a DNS time inside the window of the epoch's last DNS round
 *   (round_from ≤ t ≤ round_to), read back as round_to: at most the round's duration later than the
 *   time the release of that epoch held. Stored for the times that advance with each round:
 *   ptr_hist.checked_at and last_confirmed, ip_summary_hist.last_confirmed of an address with
 *   current answers (current_count > 0), the last_observed, last_confirmed and last_positive of
 *   each domain_hist.states entry, and the last_confirmed of each current run (ended_at null) of
 *   domain_hosting_hist.runs. Times that no longer move (first_observed, ended_at, the
 *   last_confirmed of what has ended) are stored as they are: a symbol there would only make a
 *   new version once the window moves on, and lose the exact time. The decoders put ROUND back
 *   wherever they find it all the same.
 *
 * Real times are epoch seconds (≥ 0), so the negative symbols cannot be taken for one.
 */
import type { EncodedRun } from './hosting-run-codec.js';

/** A DNS time inside the epoch's last round: read as the epoch's round_to. */
export const ROUND = -1;
/** A provider range's last_seen equal to its source's snapshot date in the epoch. */
export const SOURCE_DATE = -2;

/** What an epoch gives its symbols: the last round's window and the feeds' snapshot dates. */
export interface EpochTimes {
  /** min and max observation time of the epoch's last DNS round; null: no round (no ROUND). */
  roundFrom: number | null;
  roundTo: number | null;
  /** Snapshot date (epoch seconds) of each provider-range source. */
  sourceDates: Record<string, number>;
}

/** A row of a release's `epoch` table, as stored. */
export interface EpochRow {
  epoch: number;
  release_id: string;
  built_at: number;
  dns_cut: number | null;
  round_from: number | null;
  round_to: number | null;
  coverage: string;
  attribution: string;
  source_dates: string;
}

/** An epoch row read: its JSON parsed. */
export interface Epoch extends EpochTimes {
  epoch: number;
  releaseId: string;
  builtAt: number;
  /** Newest observation time applied to the DNS state by then (null: none). */
  dnsCut: number | null;
  coverage: Record<string, unknown>;
  attribution: unknown[];
}

export function readEpoch(row: EpochRow): Epoch {
  return {
    epoch: row.epoch,
    releaseId: row.release_id,
    builtAt: row.built_at,
    dnsCut: row.dns_cut,
    roundFrom: row.round_from,
    roundTo: row.round_to,
    coverage: JSON.parse(row.coverage) as Record<string, unknown>,
    attribution: JSON.parse(row.attribution) as unknown[],
    sourceDates: JSON.parse(row.source_dates) as Record<string, number>,
  };
}

/** A version is valid at epoch e when e_from ≤ e and (e_to is null or e_to > e). */
export function validAt(row: { e_from: number; e_to: number | null }, epoch: number): boolean {
  return row.e_from <= epoch && (row.e_to === null || row.e_to > epoch);
}

/** The SQL condition of validAt on columns e_from / e_to (with an optional table alias). */
export function validAtSql(epochParam: string, alias = ''): string {
  const a = alias ? `${alias}.` : '';
  return `${a}e_from <= ${epochParam} AND (${a}e_to IS NULL OR ${a}e_to > ${epochParam})`;
}

// --- DNS round times ----------------------------------------------------------------------------

export function encodeRoundTime<T extends number | null>(t: T, epoch: EpochTimes): T | typeof ROUND {
  if (t === null || epoch.roundFrom === null || epoch.roundTo === null) return t;
  return t >= epoch.roundFrom && t <= epoch.roundTo ? ROUND : t;
}

export function decodeRoundTime<T extends number | null>(t: T, epoch: EpochTimes): T | number {
  if (t !== ROUND) return t;
  if (epoch.roundTo === null) throw new Error('a ROUND time in an epoch without a DNS round');
  return epoch.roundTo;
}

/**
 * encodeRoundTime as an SQL expression over the column (or expression) `column`, with the window
 * given as the SQL parameters (or literals) `from` and `to` (nothing is encoded when they are null).
 */
export function roundTimeSql(column: string, from: string, to: string): string {
  return `CASE WHEN ${column} BETWEEN ${from} AND ${to} THEN ${ROUND} ELSE ${column} END`;
}

// --- provider range last_seen -------------------------------------------------------------------

export function encodeLastSeen(lastSeen: number, source: string, epoch: EpochTimes): number {
  return epoch.sourceDates[source] === lastSeen ? SOURCE_DATE : lastSeen;
}

export function decodeLastSeen(lastSeen: number, source: string, epoch: EpochTimes): number {
  if (lastSeen !== SOURCE_DATE) return lastSeen;
  const date = epoch.sourceDates[source];
  if (date === undefined)
    throw new Error(`a SOURCE_DATE last_seen of ${source}, which the epoch has no date of`);
  return date;
}

// --- domain_page states (domain_hist.states) ----------------------------------------------------

/** A state entry: [rtype, outcome, vals, cnames, last_observed, last_confirmed, last_positive]. */
export type StateEntry = [string, string, string[], string[], number, number | null, number | null];

/** Positions of the round times in a state entry. */
const STATE_TIMES = [4, 5, 6] as const;

function mapStates(states: string, fn: (t: number | null) => number | null): string {
  const entries = JSON.parse(states) as StateEntry[];
  for (const entry of entries) for (const i of STATE_TIMES) entry[i] = fn(entry[i]) as number;
  return JSON.stringify(entries);
}

/** domain_page.states as domain_hist stores it. */
export function encodeStates(states: string, epoch: EpochTimes): string {
  if (epoch.roundFrom === null) return states;
  return mapStates(states, (t) => encodeRoundTime(t, epoch));
}

/** domain_hist.states read as the entries of domain_page.states of that epoch (decodeStates, parsed once). */
export function decodeStateEntries(states: string, epoch: EpochTimes): StateEntry[] {
  const entries = JSON.parse(states) as StateEntry[];
  if (!states.includes(String(ROUND))) return entries;
  for (const entry of entries)
    for (const i of STATE_TIMES) entry[i] = decodeRoundTime(entry[i], epoch) as number;
  return entries;
}

/** domain_hist.states as the domain_page.states of that epoch (JSON text, the same form). */
export function decodeStates(states: string, epoch: EpochTimes): string {
  if (!states.includes(String(ROUND))) return states;
  return mapStates(states, (t) => decodeRoundTime(t, epoch));
}

// --- domain_hosting runs (domain_hosting_hist.runs) ---------------------------------------------

/** Positions of last_confirmed and ended_at in an EncodedRun (shared/hosting-run-codec.ts). */
const RUN_LAST_CONFIRMED = 7;
const RUN_ENDED_AT = 8;

function mapRuns(runs: string, fn: (t: number) => number, currentOnly: boolean): string {
  const list = JSON.parse(runs) as EncodedRun[];
  for (const run of list) {
    if (!currentOnly || run[RUN_ENDED_AT] === null) run[RUN_LAST_CONFIRMED] = fn(run[RUN_LAST_CONFIRMED]);
  }
  return JSON.stringify(list);
}

/** domain_hosting.runs as domain_hosting_hist stores it (a current run's last_confirmed ROUND). */
export function encodeRuns(runs: string, epoch: EpochTimes): string {
  if (epoch.roundFrom === null) return runs;
  return mapRuns(runs, (t) => encodeRoundTime(t, epoch), true);
}

/** domain_hosting_hist.runs as the domain_hosting.runs of that epoch (JSON text, the same form). */
export function decodeRuns(runs: string, epoch: EpochTimes): string {
  if (!runs.includes(String(ROUND))) return runs;
  return mapRuns(runs, (t) => decodeRoundTime(t, epoch), false);
}

// --- whole rows ---------------------------------------------------------------------------------
// The encoders are what builder/release/history.ts does in SQL (the tests hold the two together).

/** A ptr row as ptr_hist stores it. */
export function encodePtr<R extends { checked_at: number; last_confirmed: number | null }>(
  row: R,
  epoch: EpochTimes,
): R {
  return {
    ...row,
    checked_at: encodeRoundTime(row.checked_at, epoch),
    last_confirmed: encodeRoundTime(row.last_confirmed, epoch),
  };
}

/** An ip_summary row as ip_summary_hist stores it. */
export function encodeIpSummary<R extends { current_count: number; last_confirmed: number }>(
  row: R,
  epoch: EpochTimes,
): R {
  return row.current_count > 0 ? { ...row, last_confirmed: encodeRoundTime(row.last_confirmed, epoch) } : row;
}

/** A provider_range row as provider_range_hist stores it. */
export function encodeProviderRange<R extends { last_seen: number; source: string }>(
  row: R,
  epoch: EpochTimes,
): R {
  return { ...row, last_seen: encodeLastSeen(row.last_seen, row.source, epoch) };
}

/** The SQL of encodeIpSummary's last_confirmed (columns current_count, last_confirmed). */
export function ipSummaryLastConfirmedSql(from: string, to: string): string {
  return `CASE WHEN current_count > 0 THEN ${roundTimeSql('last_confirmed', from, to)} ELSE last_confirmed END`;
}

/** A ptr_hist row's columns as the ptr row of that epoch. */
export function decodePtr<R extends { checked_at: number; last_confirmed: number | null }>(
  row: R,
  epoch: EpochTimes,
): R {
  return {
    ...row,
    checked_at: decodeRoundTime(row.checked_at, epoch),
    last_confirmed: decodeRoundTime(row.last_confirmed, epoch),
  };
}

/** An ip_summary_hist row's columns as the ip_summary row of that epoch. */
export function decodeIpSummary<R extends { first_observed: number; last_confirmed: number }>(
  row: R,
  epoch: EpochTimes,
): R {
  return {
    ...row,
    first_observed: decodeRoundTime(row.first_observed, epoch),
    last_confirmed: decodeRoundTime(row.last_confirmed, epoch),
  };
}

/** A provider_range_hist row's columns as the provider_range row of that epoch. */
export function decodeProviderRange<R extends { last_seen: number; source: string }>(
  row: R,
  epoch: EpochTimes,
): R {
  return { ...row, last_seen: decodeLastSeen(row.last_seen, row.source, epoch) };
}
