/**
 * The builder's mutable state (`<stateDir>/state.sqlite`): source snapshots, provider ranges with
 * first_seen/last_seen, the IP-to-ASN mapping, AS metadata, the seed list and the DNS answer
 * intervals. Releases are compiled from it; the server never reads it.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { HISTORY_TABLES } from '../shared/release-schema.js';

export const STATE_SCHEMA_VERSION = 5;

/**
 * Older versions this builder upgrades in place. Steps that only add tables are applying the
 * schema (CREATE TABLE IF NOT EXISTS in SCHEMA); the others are in upgradeAsnRanges.
 * 2 → 3: the collector's rounds (collect_round, collect_batch).
 * 3 → 4: asn_range keeps every row of a mapping, nested ones included: keyed by (source, seq),
 * the row's position in its snapshot, instead of (source, version, first), which kept one row per
 * start address. Rows an older import dropped come back with the next import of that mapping.
 * 4 → 5: the history of the releases (release_epoch and the *_hist tables, docs/decisions/0033-as-of.md)
 * and the record of DNS rounds (dns_round); the history starts with the next release.
 */
const UPGRADABLE_FROM = new Set([2, 3, 4]);

export type StateDb = Database.Database;

/**
 * The history of the published releases, declared as the release file declares it
 * (shared/release-schema.ts HISTORY_TABLES) so that a release copies it as it is: its epoch table
 * is release_epoch here. Written after each publish (builder/release/history-state.ts).
 */
export const STATE_HISTORY_TABLES: Record<string, string> = Object.fromEntries(
  Object.entries(HISTORY_TABLES).map(([name, ddl]) => {
    const table = stateHistoryTable(name);
    return [table, ddl.replace(`CREATE TABLE ${name} `, `CREATE TABLE IF NOT EXISTS ${table} `)];
  }),
);

/** The state's name of a history table of the release (epoch: release_epoch). */
export function stateHistoryTable(releaseTable: string): string {
  return releaseTable === 'epoch' ? 'release_epoch' : releaseTable;
}

/**
 * dns_state, also created in the scratch files where a big save writes its rows in parallel
 * (dns-state/parallel-save.ts): the copy back (INSERT … SELECT *) is a plain page copy only between
 * tables declared alike.
 */
export const DNS_STATE_TABLE = `-- Latest state per (name, record type). vals/firsts/cnames are JSON arrays; vals sorted, canonical.
-- The open (current) intervals are derived: one per address of vals, with first_observed = the
-- entry of firsts at the same position and last_confirmed = last_positive (ended_at null).
CREATE TABLE IF NOT EXISTS dns_state (
  name_id INTEGER NOT NULL,
  rtype TEXT NOT NULL,
  outcome TEXT NOT NULL,           -- outcome of the latest query
  good_outcome TEXT,               -- outcome of the latest non-transient answer; null = never
  vals TEXT NOT NULL,              -- addresses of the latest good answer
  firsts TEXT NOT NULL,            -- first_observed (epoch seconds) of each address of vals, same order
  cnames TEXT NOT NULL,
  last_observed INTEGER NOT NULL,
  last_confirmed INTEGER,
  last_positive INTEGER,
  PRIMARY KEY (name_id, rtype)
) WITHOUT ROWID;
`;

/** Every row of each IP-to-ASN mapping, in the order of its snapshot's files (seq from 1). */
const ASN_RANGE_TABLE = `CREATE TABLE IF NOT EXISTS asn_range (
  source TEXT NOT NULL,
  seq INTEGER NOT NULL,            -- position of the row in the snapshot (files in import order)
  version INTEGER NOT NULL,
  first TEXT NOT NULL,
  last TEXT NOT NULL,
  asn INTEGER NOT NULL,            -- 0 = not routed
  country TEXT,
  descr TEXT,
  PRIMARY KEY (source, seq)
) WITHOUT ROWID;`;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);

-- One row per source: the snapshot its current rows came from.
CREATE TABLE IF NOT EXISTS source_snapshot (
  source TEXT PRIMARY KEY,
  kind TEXT NOT NULL,
  origin TEXT NOT NULL,            -- 'fetch' or 'import'
  imported_at INTEGER NOT NULL,
  published_at TEXT,
  files TEXT NOT NULL,             -- JSON [{file, sha256, bytes, fetched_at}]
  records INTEGER NOT NULL,
  rejected INTEGER NOT NULL
);

CREATE TABLE IF NOT EXISTS provider_range (
  source TEXT NOT NULL,
  prefix TEXT NOT NULL,
  provider TEXT NOT NULL,
  category TEXT NOT NULL,
  metadata TEXT NOT NULL,          -- canonical JSON (sorted keys)
  first_seen INTEGER NOT NULL,
  last_seen INTEGER NOT NULL,
  active INTEGER NOT NULL,         -- 1 while the source's current snapshot lists it
  PRIMARY KEY (source, prefix, provider, category, metadata)
) WITHOUT ROWID;

${ASN_RANGE_TABLE}

CREATE TABLE IF NOT EXISTS as_meta (
  asn INTEGER NOT NULL,
  field TEXT NOT NULL,             -- 'category' | 'network_role' | 'name'
  source TEXT NOT NULL,
  value TEXT NOT NULL,
  PRIMARY KEY (asn, field, source)
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS seed (
  domain TEXT PRIMARY KEY,
  rank INTEGER NOT NULL
) WITHOUT ROWID;

CREATE TABLE IF NOT EXISTS dns_name (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE);

${DNS_STATE_TABLE}

CREATE TABLE IF NOT EXISTS dns_ended (
  name_id INTEGER NOT NULL,
  rtype TEXT NOT NULL,
  value TEXT NOT NULL,
  first_observed INTEGER NOT NULL,
  last_confirmed INTEGER NOT NULL,
  ended_at INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS dns_ended_by_name ON dns_ended (name_id, rtype);

-- PTR results (filled by the collector).
CREATE TABLE IF NOT EXISTS ptr (
  ip TEXT PRIMARY KEY,
  names TEXT NOT NULL,
  status TEXT NOT NULL,
  checked_at INTEGER NOT NULL,
  last_confirmed INTEGER
) WITHOUT ROWID;

-- Collection rounds (builder collect, builder/collector/). A round not in phase 'done' is resumed
-- by the next collect.
CREATE TABLE IF NOT EXISTS collect_round (
  id INTEGER PRIMARY KEY,
  started_at INTEGER NOT NULL,
  resolver TEXT NOT NULL,
  phase TEXT NOT NULL,             -- 'forward' (A/AAAA queries), 'ptr', 'done'
  names INTEGER NOT NULL,          -- names resolved (seed and www.)
  forward_done_at INTEGER,         -- when the answers were applied to dns_state
  ptr_started_at INTEGER,          -- PTR rows checked at or after this belong to the round
  ptr_target INTEGER,              -- IPs the round checks (share of the observed IPs)
  finished_at INTEGER,
  summary TEXT                     -- JSON: outcome counts, queries, state changes
);

-- Answers of the forward phase of the unfinished round, in batches (JSON arrays of
-- [name, rtype 0 = A / 1 = AAAA, time, outcome, vals, cnames]). They are applied to dns_state and
-- deleted in one transaction when the phase ends; a resumed round applies them and does not ask
-- again.
CREATE TABLE IF NOT EXISTS collect_batch (
  id INTEGER PRIMARY KEY,
  round_id INTEGER NOT NULL,
  answers TEXT NOT NULL
);

-- One row per save of the DNS state that applied observations (builder import observations, the
-- collector's forward phase): when, and the oldest and newest observation time it applied. The
-- last one is the round window of the next release's epoch (docs/decisions/0033-as-of.md).
CREATE TABLE IF NOT EXISTS dns_round (
  id INTEGER PRIMARY KEY,
  applied_at INTEGER NOT NULL,
  min_observed INTEGER NOT NULL,
  max_observed INTEGER NOT NULL
);

${Object.values(STATE_HISTORY_TABLES).join(';\n')};
`;

export function statePath(stateDir: string): string {
  return path.join(stateDir, 'state.sqlite');
}

export function openState(stateDir: string): StateDb {
  fs.mkdirSync(stateDir, { recursive: true });
  const db = new Database(statePath(stateDir));
  try {
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('cache_size = -262144'); // 256 MiB
    db.pragma('temp_store = MEMORY');
    // The version is checked before the schema is applied, so an old state is refused untouched.
    db.exec(`CREATE TABLE IF NOT EXISTS state_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`);
    const row = db.prepare(`SELECT value FROM state_meta WHERE key = 'schema_version'`).get() as
      { value: string } | undefined;
    const upgrade = row !== undefined && UPGRADABLE_FROM.has(Number(row.value));
    if (row && Number(row.value) !== STATE_SCHEMA_VERSION && !upgrade) {
      throw new Error(unreadableState(statePath(stateDir), row.value));
    }
    if (upgrade) db.transaction(() => upgradeAsnRanges(db))();
    db.exec(SCHEMA);
    if (upgrade) {
      db.prepare(`UPDATE state_meta SET value = ? WHERE key = 'schema_version'`).run(
        String(STATE_SCHEMA_VERSION),
      );
    }
    if (!row) {
      db.prepare(`INSERT INTO state_meta (key, value) VALUES ('schema_version', ?)`).run(
        String(STATE_SCHEMA_VERSION),
      );
    }
  } catch (error) {
    db.close();
    throw error;
  }
  return db;
}

/** Why a state of `version` is refused, and what to do. */
function unreadableState(file: string, version: string): string {
  const said = `${file} has state schema version ${version}`;
  if (Number(version) > STATE_SCHEMA_VERSION) {
    return (
      `${said}, newer than this builder understands (${STATE_SCHEMA_VERSION}): run the builder of the ` +
      'ipscope version that wrote it (upgrade this one); the state was left untouched'
    );
  }
  return (
    `${said}; this builder reads ${STATE_SCHEMA_VERSION} and upgrades ${listed([...UPGRADABLE_FROM])} ` +
    "(version 1, of the builder's first two commits, is not): move the file away and rebuild the " +
    'state with "npx builder fetch" and "npx builder import"; the state was left untouched'
  );
}

/** "2, 3 and 4". */
function listed(versions: number[]): string {
  return versions.length < 2
    ? versions.join('')
    : `${versions.slice(0, -1).join(', ')} and ${versions.at(-1)}`;
}

/** 3 → 4: asn_range keyed by (source, seq); the kept rows numbered in (version, first) order. */
function upgradeAsnRanges(db: StateDb): void {
  const columns = db.prepare(`SELECT name FROM pragma_table_info('asn_range')`).pluck().all() as string[];
  if (columns.length === 0 || columns.includes('seq')) return;
  db.exec(`ALTER TABLE asn_range RENAME TO asn_range_v3`);
  db.exec(ASN_RANGE_TABLE);
  db.exec(`
    INSERT INTO asn_range (source, seq, version, first, last, asn, country, descr)
      SELECT source, row_number() OVER (PARTITION BY source ORDER BY version, first), version, first, last, asn,
        country, descr FROM asn_range_v3;
    DROP TABLE asn_range_v3;
  `);
}
