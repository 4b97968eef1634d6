/**
 * The accounts store, written once: every query is built with kysely for the database's dialect
 * and run by the embedded SQLite file (sqlite-store.ts) or the shared PostgreSQL database
 * (pg-store.ts); the few places where the two differ are named in dialect.ts. The operations are
 * in one file per concern (store-keys.ts, store-workspaces.ts, store-usage.ts, store-members.ts),
 * over the core here.
 *
 * Writers that check something before they write (createProject, createKey, addMember) run as one
 * transaction that no other writer can interleave with: SQLite's begin with the file's write lock
 * (BEGIN IMMEDIATE), PostgreSQL's lock the workspace row (SELECT … FOR UPDATE), so concurrent
 * creations from any process or replica cannot pass the 25-key limit together.
 */
import { sql, type Compilable, type Kysely, type SelectQueryBuilder } from 'kysely';
import { firstOf, type AccountsDatabase, type Steps } from './database.js';
import type { AccountsDialect } from './dialect.js';
import type { Tables } from './schema.js';
import { consoleOperations } from './store-console.js';
import { keyOperations } from './store-keys.js';
import { memberOperations } from './store-members.js';
import { usageOperations } from './store-usage.js';
import { workspaceOperations } from './store-workspaces.js';
import type { AccountsStore } from './store.js';

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

export function sqlAccountsStore(database: AccountsDatabase): AccountsStore {
  const core = new StoreCore(database);
  return {
    ...keyOperations(core),
    ...workspaceOperations(core),
    ...usageOperations(core),
    ...memberOperations(core),
    ...consoleOperations(core),
    async ping() {
      await core.all(core.q.selectNoFrom((eb) => eb.lit(1).as('one')));
    },
    close: () => core.close(),
  };
}
