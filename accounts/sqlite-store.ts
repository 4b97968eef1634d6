/**
 * The embedded accounts store: one SQLite file (ACCOUNTS_DB) in WAL mode, shared safely by the
 * server and the admin CLI, also from several processes at once. Its transactions take the write
 * lock when they begin (BEGIN IMMEDIATE), so a check and the write after it are one atomic step
 * across connections; busy_timeout makes the others wait instead of failing.
 *
 * Opening is synchronous: the file is created, switched to WAL and migrated before this returns,
 * so a file that is not an accounts store (or is from a newer program) is refused at once.
 */
import Database from 'better-sqlite3';
import {
  DummyDriver,
  Kysely,
  SqliteAdapter,
  SqliteIntrospector,
  SqliteQueryCompiler,
  type CompiledQuery,
} from 'kysely';
import fs from 'node:fs';
import path from 'node:path';
import type { AccountsDatabase } from './database.js';
import { runSteps, type Steps } from './steps.js';
import { SQLITE } from './dialect.js';
import { migrationQueries, type Tables } from './schema.js';
import { sqlAccountsStore } from './sql-store.js';
import { AccountsError, type AccountsStore } from './store.js';

/** How long a connection waits for another one's write lock before giving up, in milliseconds. */
export const BUSY_TIMEOUT_MS = 5_000;

/** Most prepared statements kept; the store has far fewer queries (when full the cache starts over). */
const MAX_PREPARED = 200;

/** kysely builds and compiles the queries; better-sqlite3 runs them, synchronously (database.ts says why). */
const builder = new Kysely<Tables>({
  dialect: {
    createAdapter: () => new SqliteAdapter(),
    createDriver: () => new DummyDriver(),
    createIntrospector: (db) => new SqliteIntrospector(db),
    createQueryCompiler: () => new SqliteQueryCompiler(),
  },
});

interface SqliteDatabase extends AccountsDatabase {
  /** A transaction run before this returns (opening the file migrates it so). */
  transactionNow<T>(steps: () => Steps<T>): T;
}

/** The file as the store uses it: each query runs synchronously, each distinct SQL text is prepared once. */
function sqliteDatabase(db: Database.Database): SqliteDatabase {
  const statements = new Map<string, Database.Statement>();
  const prepared = (sql: string): Database.Statement => {
    let statement = statements.get(sql);
    if (!statement) {
      if (statements.size >= MAX_PREPARED) statements.clear();
      statement = db.prepare(sql);
      statements.set(sql, statement);
    }
    return statement;
  };
  const run = (query: CompiledQuery): unknown[] => {
    const statement = prepared(query.sql);
    const parameters = query.parameters as unknown[];
    if (statement.reader) return statement.all(parameters);
    statement.run(parameters);
    return [];
  };
  // BEGIN IMMEDIATE: the write lock is taken before the first read, so no other connection or
  // process can write between a transaction's check and its write.
  const transactionNow = <T>(steps: () => Steps<T>): T =>
    db.transaction(() => runSteps(steps(), run)).immediate();
  return {
    dialect: SQLITE,
    builder,
    rows: run,
    first: (query) => {
      const statement = prepared(query.sql);
      return statement.reader ? statement.get(query.parameters as unknown[]) : run(query)[0];
    },
    transaction: async (steps) => transactionNow(steps),
    transactionNow,
    close: async () => {
      if (db.open) db.close();
    },
  };
}

/**
 * Opens (creating the file and its directory when missing) and migrates the accounts store.
 * Throws with the file's name when it cannot be opened or is not an accounts store.
 */
export function openAccountsStore(file: string): AccountsStore {
  let db: Database.Database;
  try {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Database(file);
  } catch (error) {
    throw new Error(`cannot open accounts store ${file}: ${(error as Error).message}`, { cause: error });
  }
  const database = sqliteDatabase(db);
  try {
    // busy_timeout first: switching a new file to WAL and migrating it take locks another process may hold.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`cannot switch to WAL mode (journal_mode is ${String(mode)})`);
    db.pragma('foreign_keys = ON');
    // Applies the migrations this file lacks, in one write transaction; refuses a newer file.
    database.transactionNow(() => migrationQueries(builder, SQLITE, file));
  } catch (error) {
    db.close();
    if (error instanceof AccountsError) throw error;
    throw new Error(`cannot open accounts store ${file}: ${(error as Error).message}`, { cause: error });
  }
  return sqlAccountsStore(database);
}
