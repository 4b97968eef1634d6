/**
 * Databases created before the store was written once (issue 14) keep working: the tables the
 * schema now declares once come out the same as the DDL each store used to carry (fixtures/, kept
 * as released), column for column, constraint for constraint and index for index, in SQLite and in
 * PostgreSQL; the store upgrades such a database once (schema 3, the console's tables) to exactly
 * the schema of a fresh one, and works on it.
 */
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { keyStatus, openAccountsStore, type AccountsStore } from '../../accounts/index.js';
import { openPgAccountsStore } from '../../accounts/pg-store.js';
import { requireSharedStores, uniqueNamespace } from '../helpers/limits.js';

const fixture = (name: string) =>
  fs.readFileSync(path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', name), 'utf8');

/** CHECK expressions without the spelling differences of the two writers (case, quotes, spaces). */
const normalised = (text: string) => text.toLowerCase().replace(/["\s]/g, '');

interface Target {
  /** A database as the released DDL created it. */
  released(): Promise<{ open: () => AccountsStore; describe: () => Promise<unknown> }>;
  /** A database created by the store of today. */
  fresh(): Promise<{ open: () => AccountsStore; describe: () => Promise<unknown> }>;
}

function sqliteTarget(t: Test): Target {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-compat-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const describe = (file: string) => async () => {
    const db = new Database(file, { readonly: true });
    try {
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
    } finally {
      db.close();
    }
  };
  return {
    async released() {
      const file = path.join(dir, 'released.sqlite');
      const db = new Database(file);
      db.pragma('journal_mode = WAL');
      db.exec(fixture('accounts-v2.sqlite.sql'));
      db.close();
      return { open: () => openAccountsStore(file), describe: describe(file) };
    },
    async fresh() {
      const file = path.join(dir, 'fresh.sqlite');
      const store = openAccountsStore(file);
      await store.close();
      return { open: () => openAccountsStore(file), describe: describe(file) };
    },
  };
}

function postgresqlTarget(t: Test): Target {
  const { databaseUrl } = requireSharedStores('database');
  const query = async (schema: string, text: string, values: unknown[] = []) => {
    const client = new pg.Client({
      connectionString: databaseUrl,
      options: `-c search_path=${schema}`,
    });
    await client.connect();
    try {
      return (await client.query(text, values)).rows;
    } finally {
      await client.end();
    }
  };
  const describe = (schema: string) => async () => ({
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
  });
  const open = (schema: string) => () => openPgAccountsStore({ url: databaseUrl, schema });
  return {
    async released() {
      const { schema } = uniqueNamespace(t, 'released');
      await query('public', `CREATE SCHEMA ${schema}`);
      await query(schema, fixture('accounts-v2.postgresql.sql'));
      return { open: open(schema), describe: describe(schema) };
    },
    async fresh() {
      const { schema } = uniqueNamespace(t, 'fresh');
      const store = open(schema)();
      await store.ping();
      await store.close();
      return { open: open(schema), describe: describe(schema) };
    },
  };
}

const targets: Array<[string, (t: Test) => Target]> = [
  ['sqlite', sqliteTarget],
  ['postgresql', postgresqlTarget],
];

for (const [name, target] of targets) {
  t.test(name, async (t) => {
    const { released, fresh } = target(t);
    const old = await released();

    t.test('a released database upgraded by the store has exactly the schema of a fresh one', async (t) => {
      const now = await fresh();
      const upgraded = old.open();
      await upgraded.ping();
      await upgraded.close();
      t.same(await old.describe(), await now.describe());
    });

    t.test(
      'the store works on a database the released DDL created (upgraded once, not migrated again)',
      async (t) => {
        const store = old.open();
        await store.ping();
        const before = await old.describe();
        t.teardown(() => store.close());
        const ws = await store.createWorkspace({ name: 'acme', plan: 'pro' });
        const project = await store.createProject({ workspaceId: ws.id, name: 'web', monthlyCap: 10 });
        const { key, record } = await store.createKey({ projectId: project.id, label: 'ci' });
        t.match(await store.verifyKey(key), { keyId: record.id, plan: 'pro', projectMonthlyCap: 10 });
        await store.upsertPlan({ name: 'pro', requestsPerMinute: 5, monthlyQuota: 50, maxPageSize: 100 });
        t.equal((await store.getPlan('pro'))?.monthlyQuota, 50);
        await store.addUsage([
          { scope: 'workspace', id: ws.id, month: '2026-11', count: 2 },
          { scope: 'workspace', id: ws.id, month: '2026-11', count: 3 },
        ]);
        await store.addUsage([{ scope: 'workspace', id: ws.id, month: '2026-11', count: 1 }]);
        t.equal(await store.getUsage('workspace', ws.id, '2026-11'), 6);
        await store.addMember(ws.id, 'Dev@Example.org', 'admin');
        t.same(
          (await store.listMembers(ws.id)).map((m) => [m.email, m.role]),
          [['dev@example.org', 'admin']],
        );
        t.equal(keyStatus(await store.revokeKey(record.id)), 'revoked');
        t.equal(await store.verifyKey(key), null);
        const user = await store.inviteUser('new@example.org');
        t.equal((await store.findUserByEmail('NEW@example.org'))?.id, user.id, 'the console tables work too');
        t.same(await old.describe(), before, 'no table or column was changed');
      },
    );
  });
}
