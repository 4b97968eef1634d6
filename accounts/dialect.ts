/**
 * Where the two databases behind the accounts store differ, and nothing else: the schema
 * (schema.ts) and the queries (sql-store.ts) are written once and read these few settings.
 */
import { sql, type RawBuilder } from 'kysely';

export interface AccountsDialect {
  name: 'sqlite' | 'postgresql';
  /**
   * Column type of points in time. SQLite keeps them as ISO 8601 UTC text of one fixed shape
   * (`Date.prototype.toISOString`), so comparing them as text orders them in time.
   */
  time: 'text' | 'timestamptz';
  /** Column type of counts, caps and quotas. */
  count: 'integer' | 'bigint';
  /** The users table: PostgreSQL reserves `user`, so there it was named `app_user` from the start. */
  users: 'user' | 'app_user';
  /** Collation of e-mail addresses (SQLite: case-insensitive; elsewhere they are stored lowercased). */
  emailCollation: RawBuilder<unknown> | null;
  /** Ending of tables whose primary key is the whole row's identity (SQLite: no separate rowid). */
  keyedTableEnd: RawBuilder<unknown> | null;
  /** Order of rows created in the same millisecond: insertion order in SQLite, the id elsewhere. */
  tiebreak: 'rowid' | 'id';
  /**
   * Whether a transaction locks the rows it reads with SELECT … FOR UPDATE. SQLite has no row locks:
   * its write transactions take the database's write lock when they begin (BEGIN IMMEDIATE).
   */
  rowLocks: boolean;
  /**
   * Whether a batch of rows goes to the database as one array per column (unnest): four parameters
   * for any number of rows, parsed and planned faster than a VALUES list of one parameter per value
   * (PostgreSQL: 1.5 to 2 times the speed from 100 rows up). SQLite has no arrays.
   */
  columnArrays: boolean;
  /** The names of a table's columns, one row each (in the connection's schema). */
  columnsOf(table: string): RawBuilder<{ name: string }>;
}

export const SQLITE: AccountsDialect = {
  name: 'sqlite',
  time: 'text',
  count: 'integer',
  users: 'user',
  emailCollation: sql`collate nocase`,
  keyedTableEnd: sql`without rowid`,
  tiebreak: 'rowid',
  rowLocks: false,
  columnArrays: false,
  columnsOf: (table) => sql<{ name: string }>`select name from pragma_table_info(${table})`,
};

export const POSTGRESQL: AccountsDialect = {
  name: 'postgresql',
  time: 'timestamptz',
  count: 'bigint',
  users: 'app_user',
  emailCollation: null,
  keyedTableEnd: null,
  tiebreak: 'id',
  rowLocks: true,
  columnArrays: true,
  columnsOf: (table) =>
    sql<{ name: string }>`select column_name as name from information_schema.columns
      where table_schema = current_schema() and table_name = ${table}`,
};
