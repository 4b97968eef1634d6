/**
 * What the accounts store (sql-store.ts) needs of a database: kysely to build and compile its
 * queries for the dialect, and something to run the compiled queries. SQLite runs them
 * synchronously through better-sqlite3 (sqlite-store.ts), PostgreSQL asynchronously through
 * kysely's pool driver (pg-store.ts). A transaction is written once as steps (steps.ts).
 */
import type { Compilable, CompiledQuery, Kysely } from 'kysely';
import type { AccountsDialect } from './dialect.js';
import type { Tables } from './schema.js';
import type { Steps } from './steps.js';

export interface AccountsDatabase {
  dialect: AccountsDialect;
  /** Builds and compiles queries for this dialect. */
  builder: Kysely<Tables>;
  /** The rows of one query, run on its own (SQLite answers at once, without a promise). */
  rows(query: CompiledQuery): unknown[] | Promise<unknown[]>;
  /** Its first row (SQLite stops reading there). */
  first(query: CompiledQuery): unknown | Promise<unknown>;
  /** Runs the queries of `steps` in one write transaction, rolled back when a step throws. */
  transaction<T>(steps: () => Steps<T>): Promise<T>;
  /** Releases the connections; called once. */
  close(): Promise<void>;
}

/**
 * A query compiled once and run with other string values: kysely turns every value into a
 * parameter, so the query compiled with stand-ins gives the same SQL for any values, and only the
 * parameters change. Saves building and compiling the query on every call (about 13 µs for the key
 * check's three-table join, more than running it).
 */
export function compiledOnce<R, A extends string[]>(
  build: (...values: A) => Compilable<R>,
  arity: A['length'],
): (...values: A) => Compilable<R> {
  const standIns = Array.from({ length: arity }, (_, i) => `\u0000value ${i}\u0000`);
  const compiled = build(...(standIns as A)).compile();
  const positions = compiled.parameters.map((p) => standIns.indexOf(p as string));
  if (standIns.some((_, i) => !positions.includes(i))) {
    throw new Error(`compiledOnce: a value does not become a parameter of ${compiled.sql}`);
  }
  return (...values) => ({
    compile: () => ({
      ...compiled,
      parameters: positions.map((position, i) => (position < 0 ? compiled.parameters[i] : values[position])),
    }),
  });
}
