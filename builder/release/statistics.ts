/**
 * The release's planner statistics (sqlite_stat1, sqlite_stat4).
 *
 * ANALYZE reads every row of a table. For the tables whose every index is a unique key of one
 * column (read by key only: no statistic changes how a lookup by a unique key is planned) the
 * sqlite_stat1 rows ANALYZE would write are written from the row counts instead: `N 1` per
 * index, `N` for a table without one, nothing for an empty table (test/builder/release-content.test.ts
 * compares them with ANALYZE's). On the full-scale bench ANALYZE took 2.4 s on domain_page alone.
 * The other tables (dns_interval's index of addresses, the ranges) are analyzed as before.
 */
import type Database from 'better-sqlite3';
import type { ReleaseTable } from '../../shared/release-schema.js';

/** Tables whose statistics are written from their row counts. */
export const KEYED_TABLES: readonly ReleaseTable[] = [
  'domain',
  'domain_page',
  'ip_summary',
  'domain_hosting',
  'ptr',
];

/** ANALYZE of the tables given that are not KEYED_TABLES. */
export function analyzeTables(db: Database.Database, tables: readonly ReleaseTable[]): void {
  for (const table of tables) if (!KEYED_TABLES.includes(table)) db.exec(`ANALYZE main.${table}`);
}

/**
 * The sqlite_stat1 rows of KEYED_TABLES from their row counts (sqlite_stat1 must exist: call after
 * analyzeTables). Throws for an index that is not a unique key of one column.
 */
export function writeKeyedStatistics(db: Database.Database, counts: Record<string, number>): void {
  const insert = db.prepare(`INSERT INTO main.sqlite_stat1 (tbl, idx, stat) VALUES (?, ?, ?)`);
  for (const table of KEYED_TABLES) {
    const count = counts[table];
    if (count === undefined) throw new Error(`no row count for ${table}`);
    if (count === 0) continue; // ANALYZE writes no row for an empty table
    const indexes = db
      .prepare(`SELECT name, "unique", origin FROM pragma_index_list(?)`)
      .all(table) as Array<{ name: string; unique: number; origin: string }>;
    const withoutRowid =
      db.prepare(`SELECT wr FROM pragma_table_list WHERE schema = 'main' AND name = ?`).pluck().get(table) ===
      1;
    if (indexes.length === 0) insert.run(table, null, String(count));
    for (const index of indexes) {
      const columns = db
        .prepare(`SELECT count(*) FROM pragma_index_info(?)`)
        .pluck()
        .get(index.name) as number;
      if (index.unique !== 1 || columns !== 1)
        throw new Error(`${table}: index ${index.name} is not a unique key of one column; analyze it`);
      // A WITHOUT ROWID table's key is recorded under the table's name, as ANALYZE does.
      insert.run(table, index.origin === 'pk' && withoutRowid ? table : index.name, `${count} 1`);
    }
  }
}
