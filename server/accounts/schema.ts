/**
 * Tables of the embedded accounts store and their migrations. Each migration runs once, in order,
 * inside a write transaction, and is recorded in `schema_migration`; a file whose newest migration
 * is unknown to this program is refused rather than guessed at.
 *
 * Times are ISO 8601 UTC text of one fixed shape (`Date.prototype.toISOString`), so comparing them
 * as text orders them in time.
 */
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'workspaces, projects, keys, users and members',
    sql: `
CREATE TABLE workspace (
  id TEXT PRIMARY KEY,                 -- ws_…
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  plan TEXT NOT NULL DEFAULT 'free',
  plan_expires_at TEXT,                -- null: the plan does not lapse; after it: Free plan limits
  created_at TEXT NOT NULL
);
CREATE INDEX workspace_name ON workspace (name);

CREATE TABLE project (
  id TEXT PRIMARY KEY,                 -- prj_…
  workspace_id TEXT NOT NULL REFERENCES workspace (id),
  name TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  monthly_cap INTEGER CHECK (monthly_cap IS NULL OR monthly_cap >= 0),  -- null: no own cap
  created_at TEXT NOT NULL,
  UNIQUE (workspace_id, name)
);

CREATE TABLE api_key (
  id TEXT PRIMARY KEY,                 -- key_…
  project_id TEXT NOT NULL REFERENCES project (id),
  label TEXT NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
  hash TEXT NOT NULL UNIQUE,           -- sha256 hex of the key; the key itself is never stored
  display TEXT NOT NULL,               -- first and last characters, e.g. sk_AbCd…wxYz
  created_at TEXT NOT NULL,
  expires_at TEXT,                     -- null: never expires
  revoked_at TEXT,                     -- null: not revoked; once set, never cleared
  last_used_at TEXT
);
CREATE INDEX api_key_project ON api_key (project_id);

CREATE TABLE user (
  id TEXT PRIMARY KEY,                 -- usr_…
  email TEXT NOT NULL UNIQUE COLLATE NOCASE,
  created_at TEXT NOT NULL
);

CREATE TABLE member (
  workspace_id TEXT NOT NULL REFERENCES workspace (id),
  user_id TEXT NOT NULL REFERENCES user (id),
  role TEXT NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at TEXT NOT NULL,
  PRIMARY KEY (workspace_id, user_id)
);
CREATE INDEX member_user ON member (user_id);
`,
  },
  {
    version: 2,
    name: 'plans and durable monthly usage',
    sql: `
CREATE TABLE plan (
  name TEXT PRIMARY KEY,               -- never 'free': the Free plan's limits are settings
  requests_per_minute INTEGER NOT NULL CHECK (requests_per_minute >= 1),
  monthly_quota INTEGER NOT NULL CHECK (monthly_quota >= 0),
  max_page_size INTEGER NOT NULL CHECK (max_page_size BETWEEN 1 AND 1000),
  updated_at TEXT NOT NULL
);

-- Counted requests per workspace (quota) and per project (cap) and UTC month (YYYY-MM).
CREATE TABLE usage (
  scope TEXT NOT NULL CHECK (scope IN ('workspace', 'project')),
  id TEXT NOT NULL,
  month TEXT NOT NULL,
  used INTEGER NOT NULL CHECK (used >= 0),
  PRIMARY KEY (scope, id, month)
) WITHOUT ROWID;
`,
  },
];

export const ACCOUNTS_SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;

export const MIGRATION_TABLE = `
CREATE TABLE IF NOT EXISTS schema_migration (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL
);
`;
