/**
 * The accounts store, written once: every query is built with kysely for the database's dialect
 * and run by the embedded SQLite file (sqlite-store.ts) or the shared PostgreSQL database
 * (pg-store.ts); the few places where the two differ are named in dialect.ts. The operations are
 * in one file per concern (store-keys.ts, store-workspaces.ts, store-usage.ts, store-members.ts,
 * store-console.ts), over the core they share (store-core.ts).
 *
 * Writers that check something before they write (createProject, createKey, addMember) run as one
 * transaction that no other writer can interleave with: SQLite's begin with the file's write lock
 * (BEGIN IMMEDIATE), PostgreSQL's lock the workspace row (SELECT … FOR UPDATE), so concurrent
 * creations from any process or replica cannot pass the 25-key limit together.
 */
import type { AccountsDatabase } from './database.js';
import { StoreCore } from './store-core.js';
import { consoleOperations } from './store-console.js';
import { keyOperations } from './store-keys.js';
import { memberOperations } from './store-members.js';
import { usageOperations } from './store-usage.js';
import { watchOperations } from './store-watch.js';
import { outboxOperations } from './store-outbox.js';
import { workspaceOperations } from './store-workspaces.js';
import type { AccountsStore } from './store.js';

export function sqlAccountsStore(database: AccountsDatabase): AccountsStore {
  const core = new StoreCore(database);
  return {
    ...keyOperations(core),
    ...workspaceOperations(core),
    ...usageOperations(core),
    ...memberOperations(core),
    ...consoleOperations(core),
    ...watchOperations(core),
    ...outboxOperations(core),
    async ping() {
      await core.all(core.q.selectNoFrom((eb) => eb.lit(1).as('one')));
    },
    close: () => core.close(),
  };
}
