/**
 * The shared accounts store on PostgreSQL (DATABASE_URL): the same store as the embedded SQLite
 * one (sql-store.ts), for any number of server replicas and admin CLIs at once.
 *
 * - Opening never waits for the database: the first call migrates (under an advisory lock, so
 *   replicas starting together migrate once) and a failed attempt is retried by the next call. A
 *   server pointed at an unreachable database therefore starts, reports `database: error` on
 *   /health and answers lookups 503 until the database is back, then recovers by itself.
 * - `schema` puts every table in one PostgreSQL schema (created when missing), so several
 *   installations or test runs can share one database.
 */
import { Kysely, PostgresDialect, sql } from 'kysely';
import pg from 'pg';
import type { AccountsDatabase } from './database.js';
import { runStepsAsync, type Steps } from './steps.js';
import { POSTGRESQL } from './dialect.js';
import { migrationQueries, type Tables } from './schema.js';
import { sqlAccountsStore } from './sql-store.js';
import type { AccountsStore } from './store.js';

export interface PgStoreOptions {
  /** postgres://user@host:port/database */
  url: string;
  /** PostgreSQL schema of the tables (created when missing); empty: the connection's default. */
  schema?: string;
  /** Connections of this process at most (default 10). */
  poolSize?: number;
  /** A connection attempt or a query slower than this fails (default 2000 ms). */
  timeoutMs?: number;
}

const INT8_OID = 20;

/** bigint columns as numbers: counts and caps stay far below 2^53. */
const types = {
  getTypeParser: (oid: number, format?: string) =>
    oid === INT8_OID
      ? (value: string) => Number(value)
      : (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format),
} as unknown as pg.CustomTypesConfig;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

/** Opens the store without connecting: the first call connects and migrates. */
export function openPgAccountsStore(options: PgStoreOptions): AccountsStore {
  const schema = options.schema ?? '';
  if (schema !== '' && !SCHEMA_NAME.test(schema)) {
    throw new Error(
      `DATABASE_SCHEMA "${schema}": expected lowercase letters, digits and _ (at most 63, not starting with a digit)`,
    );
  }
  const timeoutMs = options.timeoutMs ?? 2_000;
  const pool = new pg.Pool({
    connectionString: options.url,
    max: options.poolSize ?? 10,
    connectionTimeoutMillis: timeoutMs,
    query_timeout: timeoutMs * 2,
    idleTimeoutMillis: 30_000,
    types,
    ...(schema ? { options: `-c search_path=${schema}` } : {}),
  });
  // A connection lost while idle (database restarted or unreachable) must not end the process:
  // the pool drops it and the next query opens a new one.
  pool.on('error', () => {});
  // A connection lost while in use fails the query waiting on it; the error each connection also
  // emits must not end the process either (kysely's driver listens to none), and the pool
  // discards the broken connection when it is given back.
  pool.on('connect', (client) => client.on('error', () => {}));
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });

  /** Runs steps in one transaction on one connection of the pool. */
  const inTransaction = <T>(steps: () => Steps<T>): Promise<T> =>
    db
      .transaction()
      .execute((trx) => runStepsAsync(steps(), async (query) => (await trx.executeQuery(query)).rows));
  const migrate = () =>
    inTransaction(function* () {
      yield sql`select pg_advisory_xact_lock(hashtext(${`ipscope-accounts:${schema}`}))`.compile(db);
      if (schema) yield sql`create schema if not exists ${sql.id(schema)}`.compile(db);
      yield* migrationQueries(db, POSTGRESQL, `accounts database${schema ? ` (schema ${schema})` : ''}`);
    });
  // Migrates once; a failure (database unreachable) is retried by the next call.
  let migrated: Promise<void> | null = null;
  const ready = () =>
    (migrated ??= migrate().catch((error: unknown) => {
      migrated = null;
      throw error;
    }));

  const database: AccountsDatabase = {
    dialect: POSTGRESQL,
    builder: db,
    async rows(query) {
      await ready();
      return (await db.executeQuery(query)).rows;
    },
    async first(query) {
      return (await this.rows(query))[0];
    },
    async transaction(steps) {
      await ready();
      return inTransaction(steps);
    },
    close: () => pool.end(),
  };
  return sqlAccountsStore(database);
}
