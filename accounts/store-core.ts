/**
 * What the operations of the accounts store (store-*.ts, put together in sql-store.ts) share: the
 * query builder, the dialect, and how a query or a transaction runs on the database.
 */
import { sql, type Compilable, type Kysely, type SelectQueryBuilder } from 'kysely';
import type { AccountsDatabase } from './database.js';
import type { AccountsDialect } from './dialect.js';
import type { Tables } from './schema.js';
import { firstOf, type Steps } from './steps.js';

/** What the operations share: the query builder, the dialect, and how a query runs. */
export class StoreCore {
  private closed = false;
  readonly q: Kysely<Tables>;
  readonly dialect: AccountsDialect;

  constructor(private readonly database: AccountsDatabase) {
    this.q = database.builder;
    this.dialect = database.dialect;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the accounts store is not open: it was closed');
  }

  /** The rows of one query. */
  async all<R>(query: Compilable<R>): Promise<R[]> {
    this.assertOpen();
    return (await this.database.rows(query.compile())) as R[];
  }

  /** The first row of one query: at once from SQLite (no promise to wait for), later from PostgreSQL. */
  first<R>(query: Compilable<R>): R | undefined | Promise<R | undefined> {
    this.assertOpen();
    return this.database.first(query.compile()) as R | undefined | Promise<R | undefined>;
  }

  async transaction<T>(steps: () => Steps<T>): Promise<T> {
    this.assertOpen();
    return this.database.transaction(steps);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.database.close();
  }

  /** Orders rows by creation time; rows of one millisecond in the dialect's tiebreak order. */
  oldestFirst(alias = '') {
    const tiebreak = this.dialect.tiebreak;
    return <DB, TB extends keyof DB, O>(query: SelectQueryBuilder<DB, TB, O>) =>
      query.orderBy(sql.ref(`${alias}created_at`)).orderBy(sql.ref(`${alias}${tiebreak}`));
  }

  /** In a transaction: the workspace's id if it exists, its row locked where the dialect has row locks. */
  *lockWorkspace(workspaceId: string): Steps<{ id: string } | undefined> {
    return yield* firstOf(
      this.q
        .selectFrom('workspace')
        .select('id')
        .where('id', '=', workspaceId)
        .$if(this.dialect.rowLocks, (query) => query.forUpdate()),
    );
  }
}
