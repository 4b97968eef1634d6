/**
 * A release with history written by hand (docs/decisions/0033-as-of.md): a private copy of the demo
 * release given the contract's tables (the DDL of HISTORY_TABLES on asof-builder, copied until it
 * is merged) and the exact rows a test writes, so the as-of queries can be checked before the
 * builder writes them.
 */
import Database from 'better-sqlite3';

export const HISTORY_DDL = [
  `CREATE TABLE epoch ( epoch INTEGER PRIMARY KEY, release_id TEXT NOT NULL, built_at INTEGER NOT NULL, dns_cut INTEGER, round_from INTEGER, round_to INTEGER, coverage TEXT NOT NULL, attribution TEXT NOT NULL, source_dates TEXT NOT NULL)`,
  `CREATE TABLE provider_range_hist ( hid INTEGER PRIMARY KEY, prefix TEXT NOT NULL, version INTEGER NOT NULL, first BLOB NOT NULL, last BLOB NOT NULL, prefix_length INTEGER NOT NULL, provider TEXT NOT NULL, category TEXT NOT NULL, metadata TEXT NOT NULL, first_seen INTEGER NOT NULL, last_seen INTEGER NOT NULL, source TEXT NOT NULL, e_from INTEGER NOT NULL, e_to INTEGER)`,
  `CREATE TABLE provider_segment_hist ( first BLOB NOT NULL, e_from INTEGER NOT NULL, last BLOB NOT NULL, range_hids TEXT NOT NULL, hosting_range_hid INTEGER, e_to INTEGER, PRIMARY KEY (first, e_from)) WITHOUT ROWID`,
  `CREATE TABLE asn_range_hist ( hid INTEGER PRIMARY KEY, first BLOB NOT NULL, last BLOB NOT NULL, version INTEGER NOT NULL, first_text TEXT NOT NULL, last_text TEXT NOT NULL, asn INTEGER, country TEXT, descr TEXT, prefixes TEXT NOT NULL, source TEXT NOT NULL, ord INTEGER NOT NULL, e_from INTEGER NOT NULL, e_to INTEGER)`,
  `CREATE TABLE asn_segment_hist ( first BLOB NOT NULL, e_from INTEGER NOT NULL, last BLOB NOT NULL, range_hid INTEGER NOT NULL, e_to INTEGER, PRIMARY KEY (first, e_from)) WITHOUT ROWID`,
  `CREATE TABLE asn_hist ( asn INTEGER NOT NULL, e_from INTEGER NOT NULL, name TEXT, country TEXT, source TEXT, category TEXT, category_source TEXT, network_role TEXT, routes_v4 INTEGER NOT NULL, routes_v6 INTEGER NOT NULL, ipv4_addresses INTEGER NOT NULL, providers TEXT NOT NULL, observed_ips INTEGER, observed_domains INTEGER, e_to INTEGER, PRIMARY KEY (asn, e_from)) WITHOUT ROWID`,
  `CREATE TABLE ptr_hist ( value TEXT NOT NULL, e_from INTEGER NOT NULL, names TEXT NOT NULL, status TEXT NOT NULL, checked_at INTEGER NOT NULL, last_confirmed INTEGER, e_to INTEGER, PRIMARY KEY (value, e_from)) WITHOUT ROWID`,
  `CREATE TABLE ip_summary_hist ( value TEXT NOT NULL, e_from INTEGER NOT NULL, current_count INTEGER NOT NULL, sample TEXT NOT NULL, first_observed INTEGER NOT NULL, last_confirmed INTEGER NOT NULL, e_to INTEGER, PRIMARY KEY (value, e_from)) WITHOUT ROWID`,
  `CREATE TABLE domain_hist ( name TEXT NOT NULL, e_from INTEGER NOT NULL, rank INTEGER, in_seed INTEGER NOT NULL, states TEXT, e_to INTEGER, PRIMARY KEY (name, e_from)) WITHOUT ROWID`,
  `CREATE TABLE domain_hosting_hist ( name TEXT NOT NULL, e_from INTEGER NOT NULL, runs TEXT NOT NULL, truncated INTEGER NOT NULL, e_to INTEGER, PRIMARY KEY (name, e_from)) WITHOUT ROWID`,
  `CREATE INDEX asn_range_hist_by_asn ON asn_range_hist (asn, version, first, last DESC, ord, e_from, e_to)`,
];

/** Rows to write: table -> rows (column -> value). */
export type HistoryRows = Record<string, Array<Record<string, unknown>>>;

/** Creates the history tables in the release file `file` and writes `rows` (and any SQL after). */
export function writeHistory(file: string, rows: HistoryRows, sql: string[] = []): void {
  const db = new Database(file);
  try {
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
