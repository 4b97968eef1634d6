/**
 * Accounts databases for the migration tests, on SQLite and on PostgreSQL alike: one made from a
 * fixture (test/accounts/fixtures/accounts-v<N>.<store>.sql, the DDL of an earlier schema with a
 * few rows) or by the store of today, with what the tests compare: its schema described table by
 * table (columns, constraints, indexes, in each database's own words) and its rows.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Test } from 'tap';
import { openAccountsStore, type AccountsStore } from '../../accounts/index.js';
import { openPgAccountsStore } from '../../accounts/pg-store.js';
import { ROOT } from './demo-release.js';
import { requireSharedStores, uniqueNamespace } from './limits.js';

export type StoreKind = 'sqlite' | 'postgresql';

export interface AccountsDb {
  /** The store of today on this database (migrating it when it is older). */
  open(): AccountsStore;
  /** Tables, columns, constraints and indexes. */
  describe(): Promise<unknown>;
  /** The tables' names, schema_migration included. */
  tables(): Promise<string[]>;
  /** Every row of a table, in the order of its columns. */
  rows(table: string): Promise<Record<string, unknown>[]>;
  /** Runs SQL on it, outside the store. */
  exec(text: string): Promise<void>;
}

export interface AccountsDbMaker {
  /** A database as the DDL of `accounts-v<version>.<kind>.sql` created it, with its rows. */
  fromFixture(version: number): Promise<AccountsDb>;
  /** A database created by the store of today. */
  fresh(): Promise<AccountsDb>;
}

export const fixtureText = (version: number, kind: StoreKind) =>
  fs.readFileSync(path.join(ROOT, 'test/accounts/fixtures', `accounts-v${version}.${kind}.sql`), 'utf8');

/** CHECK expressions without the spelling differences of the two writers (case, quotes, spaces). */
const normalised = (text: string) => text.toLowerCase().replace(/["\s]/g, '');

export function sqliteDbs(t: Test): AccountsDbMaker {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-migrations-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  let made = 0;
  const read = <T>(file: string, body: (db: Database.Database) => T): T => {
    const db = new Database(file, { readonly: true });
    try {
      return body(db);
    } finally {
      db.close();
    }
  };
  const at = (file: string): AccountsDb => ({
    open: () => openAccountsStore(file),
    exec: async (text) => {
      const db = new Database(file);
      try {
        db.exec(text);
      } finally {
        db.close();
      }
    },
    tables: async () =>
      read(file, (db) =>
        db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`).pluck().all(),
      ) as string[],
    rows: async (table) =>
      read(file, (db) => db.prepare(`SELECT * FROM "${table}" ORDER BY 1, 2`).all()) as Record<
        string,
        unknown
      >[],
    describe: async () =>
      read(file, (db) => {
        const tables = db
          .prepare(`SELECT name, sql FROM sqlite_master WHERE type = 'table' ORDER BY name`)
          .all() as { name: string; sql: string }[];
        return tables.map(({ name, sql }) => ({
          name,
          columns: db
            .prepare('SELECT name, lower(type) AS type, "notnull", dflt_value, pk FROM pragma_table_info(?)')
            .all(name),
          withoutRowid: (db.prepare('SELECT wr FROM pragma_table_list(?)').get(name) as { wr: number }).wr,
          foreignKeys: db.prepare('SELECT "table", "from", "to" FROM pragma_foreign_key_list(?)').all(name),
          indexes: (
            db.prepare('SELECT name, "unique", origin FROM pragma_index_list(?) ORDER BY name').all(name) as {
              name: string;
            }[]
          ).map((index) => ({
            ...index,
            columns: db
              .prepare(
                'SELECT name, lower(coll) AS coll FROM pragma_index_xinfo(?) WHERE key = 1 ORDER BY seqno',
              )
              .all(index.name),
          })),
          checks: [...sql.matchAll(/check\s*\(((?:[^()]|\([^()]*\))*)\)/gi)]
            .map((m) => normalised(m[1]!))
            .sort(),
        }));
      }),
  });
  return {
    async fromFixture(version) {
      const file = path.join(dir, `v${version}-${++made}.sqlite`);
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.exec(fixtureText(version, 'sqlite'));
      db.close();
      return at(file);
    },
    async fresh() {
      const file = path.join(dir, `fresh-${++made}.sqlite`);
      await openAccountsStore(file).close();
      return at(file);
    },
  };
}

export function postgresqlDbs(t: Test): AccountsDbMaker {
  const { databaseUrl } = requireSharedStores('database');
  const query = async (schema: string, text: string, values: unknown[] = []) => {
    const client = new pg.Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
    await client.connect();
    try {
      return (await client.query(text, values)).rows as Record<string, unknown>[];
    } finally {
      await client.end();
    }
  };
  const at = (schema: string): AccountsDb => ({
    open: () => openPgAccountsStore({ url: databaseUrl, schema }),
    exec: async (text) => void (await query(schema, text)),
    tables: async () =>
      (
        await query(
          schema,
          `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 ORDER BY 1`,
          [schema],
        )
      ).map((row) => row.table_name as string),
    rows: (table) => query(schema, `SELECT * FROM "${table}" ORDER BY 1, 2`),
    describe: async () => ({
      columns: await query(
        schema,
        `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
          WHERE table_schema = $1 ORDER BY table_name, ordinal_position`,
        [schema],
      ),
      constraints: await query(
        schema,
        `SELECT c.conrelid::regclass::text AS table_name, c.conname, c.contype, pg_get_constraintdef(c.oid) AS definition
           FROM pg_constraint c JOIN pg_namespace n ON n.oid = c.connamespace
          WHERE n.nspname = $1 ORDER BY 1, 2`,
        [schema],
      ),
      indexes: (
        await query(
          schema,
          'SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = $1 ORDER BY 2',
          [schema],
        )
      ).map((row) => ({ ...row, indexdef: (row.indexdef as string).replaceAll(`${schema}.`, '') })),
    }),
  });
  return {
    async fromFixture(version) {
      const { schema } = uniqueNamespace(t, `v${version}`);
      await query('public', `CREATE SCHEMA ${schema}`);
      await query(schema, fixtureText(version, 'postgresql'));
      return at(schema);
    },
    async fresh() {
      const { schema } = uniqueNamespace(t, 'fresh');
      const store = openPgAccountsStore({ url: databaseUrl, schema });
      await store.ping();
      await store.close();
      return at(schema);
    },
  };
}
