/**
 * A release with history written by hand (docs/decisions/0033-as-of.md): a private copy of the demo
 * release whose history tables (the builder's one epoch) are replaced by the exact rows a test
 * writes, so each as-of query is checked against rows chosen for it; the property test
 * (test/builder/as-of-property.test.ts) checks the builder's own history.
 */
import Database from 'better-sqlite3';
import { HISTORY_INDEXES, HISTORY_TABLES } from '../../shared/release-schema.js';

/** The contract's tables, as the builder declares them. */
export const HISTORY_DDL = [...Object.values(HISTORY_TABLES), ...HISTORY_INDEXES];

/** Rows to write: table -> rows (column -> value). */
export type HistoryRows = Record<string, Array<Record<string, unknown>>>;

/** Creates the history tables in the release file `file` and writes `rows` (and any SQL after). */
export function writeHistory(file: string, rows: HistoryRows, sql: string[] = []): void {
  const db = new Database(file);
  try {
    for (const table of Object.keys(HISTORY_TABLES)) db.exec(`DROP TABLE IF EXISTS ${table}`);
    for (const ddl of HISTORY_DDL) db.exec(ddl);
    for (const [table, list] of Object.entries(rows)) {
      for (const row of list) {
        const columns = Object.keys(row);
        db.prepare(
          `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
        ).run(...columns.map((c) => row[c]));
      }
    }
    for (const s of sql) db.exec(s);
  } finally {
    db.close();
  }
}
