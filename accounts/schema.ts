/**
 * The tables of the accounts store, declared once for SQLite and PostgreSQL: their row types (what
 * the queries in sql-store.ts are checked against) and the migrations that create them. The two
 * databases differ only where dialect.ts says (column types, the users table's name, two SQLite
 * table options).
 *
 * Each migration runs once, in order, inside one write transaction, and is recorded in
 * `schema_migration`; a database whose newest migration is unknown to this program is refused
 * rather than guessed at. A migration never changes once released: databases created by it exist.
 * The one time one did (LATE_COLUMNS) the column it gained is added to the databases it had
 * created. test/accounts/migrations.test.ts opens a store of every earlier schema (fixtures/).
 */
import { sql, type ColumnType, type Compilable, type Kysely, type SchemaModule } from 'kysely';
import { firstOf, rowsOf, type Steps } from './steps.js';
import type { AccountsDialect } from './dialect.js';
import type { MemberRole, UsageScope } from './records.js';
import {
  watchMigration,
  type WatchEntryTable,
  type WatchEventTable,
  type WatchRunTable,
  type WebhookAttemptTable,
  type WebhookDeliveryTable,
  type WebhookEndpointTable,
} from './schema-watch.js';
import { AccountsError, DEFAULT_PLAN } from './store.js';

/** A point in time: written as ISO 8601 UTC text, read as text (SQLite) or a Date (PostgreSQL). */
type Time = ColumnType<string | Date, string, string>;
type OptionalTime = ColumnType<string | Date | null, string | null | undefined, string | null>;

export interface WorkspaceTable {
  id: string;
  name: string;
  plan: string;
  plan_expires_at: OptionalTime;
  created_at: Time;
}

export interface ProjectTable {
  id: string;
  workspace_id: string;
  name: string;
  monthly_cap: number | null;
  created_at: Time;
}

export interface ApiKeyTable {
  id: string;
  project_id: string;
  label: string;
  /** sha256 hex of the key; the key itself is never stored. */
  hash: string;
  /** First and last characters, e.g. sk_AbCd…wxYz. */
  display: string;
  created_at: Time;
  expires_at: OptionalTime;
  /** Once set, never cleared. */
  revoked_at: OptionalTime;
  last_used_at: OptionalTime;
  /** The user who created it in the console (null: the admin CLI, or before migration 4). */
  created_by: ColumnType<string | null, string | null | undefined, string | null>;
}

export interface UserTable {
  id: string;
  email: string;
  created_at: Time;
  /** Base32 TOTP secret (two-factor sign-in); set while enrolling, in use once totp_enabled_at is set. */
  totp_secret: ColumnType<string | null, string | null | undefined, string | null>;
  totp_enabled_at: OptionalTime;
  /** The last TOTP time step accepted: a code of that step or an earlier one is refused (replay). */
  totp_last_step: ColumnType<number | null, number | null | undefined, number | null>;
}

/** A console session: the row's id is the sha256 of the cookie's token (the token is never stored). */
export interface ConsoleSessionTable {
  id: string;
  user_id: string;
  created_at: Time;
  /** Last sign-in or step-up: key creation needs it to be recent. */
  authenticated_at: Time;
  last_seen_at: Time;
  /** Absolute end, whatever the activity. */
  expires_at: Time;
  /** sha256 of the e-mailed step-up code, its end and the wrong tries so far. */
  step_code_hash: string | null;
  step_code_expires_at: OptionalTime;
  step_code_tries: ColumnType<number, number | undefined, number>;
  /**
   * Set while a sign-in by link waits for its authenticator or recovery code (two-factor sign-in):
   * such a session opens no page but the code's; null once it is a full session.
   */
  second_factor_pending_since: OptionalTime;
}

/** An e-mailed sign-in link: sha256 of its token, single use, short-lived. */
export interface SignInLinkTable {
  hash: string;
  user_id: string;
  created_at: Time;
  expires_at: Time;
  used_at: OptionalTime;
}

export interface RecoveryCodeTable {
  user_id: string;
  /** sha256 of the code. */
  hash: string;
  used_at: OptionalTime;
}

/** Counted requests per key and UTC day (YYYY-MM-DD), with the key's project and workspace. */
export interface UsageDayTable {
  key_id: string;
  project_id: string;
  workspace_id: string;
  day: string;
  used: number;
}

export interface MemberTable {
  workspace_id: string;
  user_id: string;
  role: MemberRole;
  created_at: Time;
}

export interface PlanTable {
  name: string;
  requests_per_minute: number;
  monthly_quota: number;
  max_page_size: number;
  /** Watch entries per project (migration 5; null: the Free plan's, FREE_MAX_WATCH_ENTRIES). */
  max_watch_entries?: ColumnType<number | null, number | null | undefined, number | null>;
  updated_at: Time;
}

export interface UsageTable {
  scope: UsageScope;
  id: string;
  /** UTC month, `YYYY-MM`. */
  month: string;
  used: number;
}

export interface SchemaMigrationTable {
  version: number;
  name: string;
  applied_at: Time;
}

/** The accounts database as the query builder sees it; the users table has its dialect's name. */
export interface Tables {
  workspace: WorkspaceTable;
  project: ProjectTable;
  api_key: ApiKeyTable;
  user: UserTable;
  app_user: UserTable;
  member: MemberTable;
  plan: PlanTable;
  usage: UsageTable;
  schema_migration: SchemaMigrationTable;
  console_session: ConsoleSessionTable;
  sign_in_link: SignInLinkTable;
  recovery_code: RecoveryCodeTable;
  usage_day: UsageDayTable;
  watch_entry: WatchEntryTable;
  webhook_endpoint: WebhookEndpointTable;
  watch_run: WatchRunTable;
  watch_event: WatchEventTable;
  webhook_delivery: WebhookDeliveryTable;
  webhook_attempt: WebhookAttemptTable;
}

export interface Migration {
  version: number;
  name: string;
  statements(schema: SchemaModule, dialect: AccountsDialect): Compilable[];
}

/** Names and labels: 1 to 100 characters. */
const lengthCheck = (column: string) => sql`length(${sql.ref(column)}) between 1 and 100`;

/** The last TOTP step accepted (migration 3, and LATE_COLUMNS for the stores made before it had it). */
const addTotpLastStep = (schema: SchemaModule, d: AccountsDialect) =>
  schema.alterTable(d.users).addColumn('totp_last_step', d.count);

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'workspaces, projects, keys, users and members',
    statements: (schema, d) => [
      schema
        .createTable('workspace')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('name', 'text', (c) => c.notNull().check(lengthCheck('name')))
        .addColumn('plan', 'text', (c) => c.notNull().defaultTo(DEFAULT_PLAN))
        // null: the plan does not lapse; after it: the Free plan's limits
        .addColumn('plan_expires_at', d.time)
        .addColumn('created_at', d.time, (c) => c.notNull()),
      schema.createIndex('workspace_name').on('workspace').column('name'),
      schema
        .createTable('project')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspace.id'))
        .addColumn('name', 'text', (c) => c.notNull().check(lengthCheck('name')))
        // null: no cap of its own
        .addColumn('monthly_cap', d.count, (c) => c.check(sql`monthly_cap is null or monthly_cap >= 0`))
        .addColumn('created_at', d.time, (c) => c.notNull())
        .addUniqueConstraint('project_workspace_id_name_key', ['workspace_id', 'name']),
      schema
        .createTable('api_key')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('project_id', 'text', (c) => c.notNull().references('project.id'))
        .addColumn('label', 'text', (c) => c.notNull().check(lengthCheck('label')))
        .addColumn('hash', 'text', (c) => c.notNull().unique())
        .addColumn('display', 'text', (c) => c.notNull())
        .addColumn('created_at', d.time, (c) => c.notNull())
        .addColumn('expires_at', d.time)
        .addColumn('revoked_at', d.time)
        .addColumn('last_used_at', d.time),
      schema.createIndex('api_key_project').on('api_key').column('project_id'),
      schema
        .createTable(d.users)
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('email', 'text', (c) => {
          const column = c.notNull().unique();
          return d.emailCollation ? column.modifyEnd(d.emailCollation) : column;
        })
        .addColumn('created_at', d.time, (c) => c.notNull()),
      schema
        .createTable('member')
        .addColumn('workspace_id', 'text', (c) => c.notNull().references('workspace.id'))
        .addColumn('user_id', 'text', (c) => c.notNull().references(`${d.users}.id`))
        .addColumn('role', 'text', (c) => c.notNull().check(sql`role in ('owner', 'admin', 'member')`))
        .addColumn('created_at', d.time, (c) => c.notNull())
        .addPrimaryKeyConstraint('member_pkey', ['workspace_id', 'user_id']),
      schema.createIndex('member_user').on('member').column('user_id'),
    ],
  },
  {
    version: 2,
    name: 'plans and durable monthly usage',
    statements: (schema, d) => [
      schema
        .createTable('plan')
        // never 'free': the Free plan's limits are settings
        .addColumn('name', 'text', (c) => c.primaryKey())
        .addColumn('requests_per_minute', d.count, (c) => c.notNull().check(sql`requests_per_minute >= 1`))
        .addColumn('monthly_quota', d.count, (c) => c.notNull().check(sql`monthly_quota >= 0`))
        .addColumn('max_page_size', 'integer', (c) =>
          c.notNull().check(sql`max_page_size between 1 and 1000`),
        )
        .addColumn('updated_at', d.time, (c) => c.notNull()),
      // Counted requests per workspace (quota) and per project (cap) and UTC month (YYYY-MM).
      schema
        .createTable('usage')
        .addColumn('scope', 'text', (c) => c.notNull().check(sql`scope in ('workspace', 'project')`))
        .addColumn('id', 'text', (c) => c.notNull())
        .addColumn('month', 'text', (c) => c.notNull())
        .addColumn('used', d.count, (c) => c.notNull().check(sql`used >= 0`))
        .addPrimaryKeyConstraint('usage_pkey', ['scope', 'id', 'month'])
        .$call((table) => (d.keyedTableEnd ? table.modifyEnd(d.keyedTableEnd) : table)),
    ],
  },
  {
    version: 3,
    name: 'console: sessions, sign-in links, two-factor sign-in, daily usage per key',
    statements: (schema, d) => [
      schema.alterTable(d.users).addColumn('totp_secret', 'text'),
      schema.alterTable(d.users).addColumn('totp_enabled_at', d.time),
      addTotpLastStep(schema, d),
      schema
        .createTable('console_session')
        .addColumn('id', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references(`${d.users}.id`))
        .addColumn('created_at', d.time, (c) => c.notNull())
        .addColumn('authenticated_at', d.time, (c) => c.notNull())
        .addColumn('last_seen_at', d.time, (c) => c.notNull())
        .addColumn('expires_at', d.time, (c) => c.notNull())
        .addColumn('step_code_hash', 'text')
        .addColumn('step_code_expires_at', d.time)
        .addColumn('step_code_tries', 'integer', (c) => c.notNull().defaultTo(0)),
      schema.createIndex('console_session_user').on('console_session').column('user_id'),
      schema
        .createTable('sign_in_link')
        .addColumn('hash', 'text', (c) => c.primaryKey())
        .addColumn('user_id', 'text', (c) => c.notNull().references(`${d.users}.id`))
        .addColumn('created_at', d.time, (c) => c.notNull())
        .addColumn('expires_at', d.time, (c) => c.notNull())
        .addColumn('used_at', d.time),
      schema
        .createTable('recovery_code')
        .addColumn('user_id', 'text', (c) => c.notNull().references(`${d.users}.id`))
        .addColumn('hash', 'text', (c) => c.notNull())
        .addColumn('used_at', d.time)
        .addPrimaryKeyConstraint('recovery_code_pkey', ['user_id', 'hash']),
      schema
        .createTable('usage_day')
        .addColumn('key_id', 'text', (c) => c.notNull())
        .addColumn('project_id', 'text', (c) => c.notNull())
        .addColumn('workspace_id', 'text', (c) => c.notNull())
        .addColumn('day', 'text', (c) => c.notNull())
        .addColumn('used', d.count, (c) => c.notNull().check(sql`used >= 0`))
        .addPrimaryKeyConstraint('usage_day_pkey', ['key_id', 'day'])
        .$call((table) => (d.keyedTableEnd ? table.modifyEnd(d.keyedTableEnd) : table)),
      schema.createIndex('usage_day_workspace').on('usage_day').columns(['workspace_id', 'day']),
    ],
  },
  {
    version: 4,
    name: 'console: second factor at sign-in, who created a key',
    statements: (schema, d) => [
      schema.alterTable('console_session').addColumn('second_factor_pending_since', d.time),
      schema.alterTable('api_key').addColumn('created_by', 'text', (c) => c.references(`${d.users}.id`)),
    ],
  },
  {
    version: 5,
    name: 'watchlists, events, webhook endpoints and their outbox',
    statements: (schema, d) => [...watchMigration(schema, d)],
  },
];

export const ACCOUNTS_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

/** A column a migration gained after it had been released: the databases it created lack it. */
export interface LateColumn {
  /** The migration that has declared the column since. */
  version: number;
  table(dialect: AccountsDialect): keyof Tables;
  column: string;
  add(schema: SchemaModule, dialect: AccountsDialect): Compilable;
}

/**
 * Migration 3 first went out without `totp_last_step` (the TOTP replay check came a few commits
 * later and was added to migration 3 itself): stores created then say schema 3 but lack the column,
 * and every sign-in query needs it. It is added, in the migration's transaction, to any store of
 * schema 3 or later that lacks it. A new column belongs in a new migration, never here.
 */
export const LATE_COLUMNS: readonly LateColumn[] = [
  { version: 3, table: (d) => d.users, column: 'totp_last_step', add: addTotpLastStep },
];

/**
 * Brings a database to ACCOUNTS_SCHEMA_VERSION: yields the queries to run, in order and inside one
 * write transaction, and is handed back each query's rows. The SQLite store runs it synchronously
 * when it opens the file, the PostgreSQL store on first use. `where` names the database in errors.
 */
export function* migrationQueries(db: Kysely<Tables>, dialect: AccountsDialect, where: string): Steps<void> {
  yield db.schema
    .createTable('schema_migration')
    .ifNotExists()
    .addColumn('version', 'integer', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('applied_at', dialect.time, (c) => c.notNull())
    .compile();
  const newest = yield* firstOf(
    db.selectFrom('schema_migration').select((eb) => eb.fn.max('version').as('version')),
  );
  const current = newest?.version ?? 0;
  if (current > ACCOUNTS_SCHEMA_VERSION) {
    throw new AccountsError(
      'unsupported_schema',
      `${where}: accounts schema version ${current} is newer than this program understands (${ACCOUNTS_SCHEMA_VERSION}): upgrade ipscope`,
    );
  }
  for (const late of LATE_COLUMNS) {
    if (late.version > current) continue; // its migration adds it below
    const columns = (yield dialect.columnsOf(late.table(dialect)).compile(db)) as { name: string }[];
    if (!columns.some((c) => c.name === late.column)) yield late.add(db.schema, dialect).compile();
  }
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    for (const statement of migration.statements(db.schema, dialect)) yield statement.compile();
    yield* rowsOf(
      db
        .insertInto('schema_migration')
        .values({ version: migration.version, name: migration.name, applied_at: new Date().toISOString() }),
    );
  }
}
