/** The accounts store the settings name: PostgreSQL when DATABASE_URL is set, else the SQLite file ACCOUNTS_DB. */
import type { Settings } from '../shared/config.js';
import { openPgAccountsStore } from './pg-store.js';
import { openAccountsStore } from './sqlite-store.js';
import type { AccountsStore } from './store.js';

export function openConfiguredAccountsStore(
  settings: Pick<Settings, 'ACCOUNTS_DB' | 'DATABASE_URL' | 'DATABASE_SCHEMA'>,
): AccountsStore {
  return settings.DATABASE_URL
    ? openPgAccountsStore({ url: settings.DATABASE_URL, schema: settings.DATABASE_SCHEMA })
    : openAccountsStore(settings.ACCOUNTS_DB);
}
