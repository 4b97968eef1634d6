/**
 * Reading one key's version at an epoch from a versioned table (`*_hist`, keyed by (key, e_from)),
 * for every as-of query: the one place that knows how it is read fast
 * (docs/decisions/0036-history-reads-ascending.md).
 *
 * The versions of a key begun by the epoch are read in key order (ascending e_from) and the last
 * is taken: one seek, then the key's few versions. `ORDER BY e_from DESC LIMIT 1` asks the same
 * with one row read, yet costs four times as much per call in the SQLite that better-sqlite3 ships
 * (measured on the bench release's ip_summary_hist: 8.2 µs against 2.0 µs).
 */
import type { HISTORY_TABLES } from '../../release-schema.js';
import { statement } from '../common.js';
import type { Release } from '../release.js';
import type { Epoch } from './common.js';

/** A versioned table (the history tables but `epoch`). */
export type VersionedTable = Exclude<keyof typeof HISTORY_TABLES, 'epoch'>;

/** The SQL of the reads (exported for test/shared/as-of-reads.test.ts, which checks its plan). */
export function versionsSql(table: VersionedTable, key: string, columns: string): string {
  return `SELECT ${columns}, e_to FROM ${table} WHERE ${key} = ? AND e_from <= ? ORDER BY e_from`;
}

/** The last of the versions read, unless it had ended by the epoch. */
function validOf<R>(rows: R[], eTo: (row: R) => number | null, epoch: Epoch): R | undefined {
  const row = rows[rows.length - 1];
  if (row === undefined) return undefined;
  const end = eTo(row);
  return end !== null && end <= epoch.epoch ? undefined : row;
}

/**
 * The columns (SQL list) of the version of `value` (column `key` of `table`) valid at `epoch`, as a
 * raw row (array, e_to dropped), or undefined when the key had none then.
 */
export function versionAt<R extends unknown[]>(
  release: Release,
  table: VersionedTable,
  key: string,
  columns: string,
  value: string | number,
  epoch: Epoch,
): R | undefined {
  const rows = statement(release, versionsSql(table, key, columns), true).all(
    value,
    epoch.epoch,
  ) as unknown[][];
  const row = validOf(rows, (r) => r[r.length - 1] as number | null, epoch);
  if (row === undefined) return undefined;
  row.pop();
  return row as R;
}

/** versionAt with the row as an object of its columns (e_to dropped). */
export function versionRowAt<R extends object>(
  release: Release,
  table: VersionedTable,
  key: string,
  columns: string,
  value: string | number,
  epoch: Epoch,
): R | undefined {
  const rows = statement(release, versionsSql(table, key, columns)).all(value, epoch.epoch) as Array<
    R & { e_to: number | null }
  >;
  const row = validOf(rows, (r) => r.e_to, epoch);
  if (row === undefined) return undefined;
  const { e_to: _to, ...kept } = row;
  return kept as unknown as R;
}
