/**
 * Accounts: workspaces, projects and API keys. The server and the CLI import from here only.
 */
export { openAccountsStore, BUSY_TIMEOUT_MS } from './sqlite-store.js';
export {
  AccountsError,
  DEFAULT_PLAN,
  MAX_ACTIVE_KEYS_PER_WORKSPACE,
  effectivePlan,
  usageMonth,
  keyStatus,
  type AccountsErrorCode,
  type AccountsStore,
} from './store.js';
export {
  MEMBER_ROLES,
  type CreateKeyInput,
  type CreateProjectInput,
  type CreateWorkspaceInput,
  type CreatedKey,
  type KeyPrincipal,
  type KeyRecord,
  type KeyStatus,
  type Member,
  type MemberRole,
  type Plan,
  type UsageDelta,
  type UsageRow,
  type UsageScope,
  type Project,
  type Workspace,
} from './records.js';
export type { ConsoleSession, ConsoleStore, ConsoleUser, DailyUsage, Membership } from './console-types.js';
export { KEY_LENGTH, KEY_PREFIX, displayKey, generateKey, hashKey, looksLikeKey } from './api-key.js';
export { ACCOUNTS_SCHEMA_VERSION } from './schema.js';
export { backupAccountsStore, restoreAccountsStore } from './backup.js';
export { registerAccountCommands, type CliIo } from './cli.js';
