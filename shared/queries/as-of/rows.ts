/**
 * Reading one key's version at an epoch from a versioned table (`*_hist`, keyed by (key, e_from)),
 * for every as-of query: the one place that knows how it is read fast
 * (docs/decisions/0036-history-reads-ascending.md).
 *
 * The versions of a key begun by the epoch are read by one ascending seek of the key, without an
 * ORDER BY, and the one begun last is taken here: `ORDER BY e_from DESC LIMIT 1` asks the same
 * with one row read, and `ORDER BY e_from` in key order, yet in the SQLite that better-sqlite3
 * ships both cost several times as much per call (measured on the bench release's
 * ip_summary_hist: 2.6 µs without, 16.7 µs with ORDER BY e_from, 8.2 µs with DESC LIMIT 1).
 */
import type { HISTORY_TABLES } from '../../release-schema.js';
import { statement } from '../common.js';
import type { Release } from '../release.js';
import type { Epoch } from './common.js';

/** A versioned table (the history tables but `epoch`). */
export type VersionedTable = Exclude<keyof typeof HISTORY_TABLES, 'epoch'>;

/** The SQL of the reads (exported for test/shared/as-of-reads.test.ts, which checks its plan). */
export function versionsSql(table: VersionedTable, key: string, columns: string): string {
  return `SELECT ${columns}, e_from, e_to FROM ${table} WHERE ${key} = ? AND e_from <= ?`;
}

/** The version begun last among those read, unless it had ended by the epoch. */
function validOf<R>(
  rows: R[],
  from: (row: R) => number,
  eTo: (row: R) => number | null,
  epoch: Epoch,
): R | undefined {
  let row = rows[0];
  for (let i = 1; i < rows.length; i++) if (from(rows[i]!) > from(row!)) row = rows[i];
  if (row === undefined) return undefined;
  const end = eTo(row);
  return end !== null && end <= epoch.epoch ? undefined : row;
}

/**
 * The columns (SQL list) of the version of `value` (column `key` of `table`) valid at `epoch`, as a
 * raw row (array, e_from and e_to dropped), or undefined when the key had none then.
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
  const row = validOf(
    rows,
    (r) => r[r.length - 2] as number,
    (r) => r[r.length - 1] as number | null,
    epoch,
  );
  if (row === undefined) return undefined;
  row.length -= 2;
  return row as R;
}

/** versionAt with the row as an object of its columns (e_from and e_to dropped). */
export function versionRowAt<R extends object>(
  release: Release,
  table: VersionedTable,
  key: string,
  columns: string,
  value: string | number,
  epoch: Epoch,
): R | undefined {
  const rows = statement(release, versionsSql(table, key, columns)).all(value, epoch.epoch) as Array<
    R & { e_from: number; e_to: number | null }
  >;
  const row = validOf(
    rows,
    (r) => r.e_from,
    (r) => r.e_to,
    epoch,
  );
  if (row === undefined) return undefined;
  const { e_from: _from, e_to: _to, ...kept } = row;
  return kept as unknown as R;
}
