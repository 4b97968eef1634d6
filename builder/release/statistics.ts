/**
 * The release's planner statistics (sqlite_stat1, sqlite_stat4).
 *
 * ANALYZE reads every row of a table. For the tables whose every index is a unique key of one
 * column (read by key only: no statistic changes how a lookup by a unique key is planned) the
 * sqlite_stat1 rows ANALYZE would write are written from the row counts instead: `N 1` per
 * index, `N` for a table without one, nothing for an empty table (test/builder/release-content.test.ts
 * compares them with ANALYZE's). On the full-scale bench ANALYZE took 2.4 s on domain_page alone.
 * The other tables (dns_interval's index of addresses, the ranges) are analyzed as before.
 *
 * The history tables (`*_hist`, `epoch`) keep ANALYZE's sqlite_stat1 rows but no sqlite_stat4
 * samples (docs/decisions/0036-history-reads-ascending.md): with samples of a column, SQLite
 * prepares again, on every run, a statement that binds a value compared with it, and every as-of
 * read binds its key (measured on the bench release's ip_summary_hist: 8.4 µs a read with them,
 * 2.1 µs without). Their reads are by key prefix, planned alike from sqlite_stat1 alone.
 */
import type Database from 'better-sqlite3';
import { HISTORY_TABLES, type ReleaseTable } from '../../shared/release-schema.js';

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
  const history = tables.filter((t) => t in HISTORY_TABLES);
  const hasStat4 =
    db.prepare(`SELECT count(*) FROM main.sqlite_master WHERE name = 'sqlite_stat4'`).pluck().get() === 1;
  if (history.length > 0 && hasStat4)
    db.prepare(`DELETE FROM main.sqlite_stat4 WHERE tbl IN (${history.map(() => '?').join(', ')})`).run(
      ...history,
    );
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
