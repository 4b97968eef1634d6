/**
 * Tables of the PostgreSQL accounts store (DATABASE_URL), the same model as the embedded store's
 * (schema.ts) with PostgreSQL types. Migrations run once, in order, in one transaction under an
 * advisory lock, so replicas starting together migrate exactly once; a database whose newest
 * migration is unknown to this program is refused.
 */
import type { Migration } from './schema.js';

export const PG_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'workspaces, projects, keys, users and members',
    sql: `
CREATE TABLE workspace (
  id text PRIMARY KEY,
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  plan text NOT NULL DEFAULT 'free',
  plan_expires_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX workspace_name ON workspace (name);

CREATE TABLE project (
  id text PRIMARY KEY,
  workspace_id text NOT NULL REFERENCES workspace (id),
  name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
  monthly_cap bigint CHECK (monthly_cap IS NULL OR monthly_cap >= 0),
  created_at timestamptz NOT NULL,
  UNIQUE (workspace_id, name)
);

CREATE TABLE api_key (
  id text PRIMARY KEY,
  project_id text NOT NULL REFERENCES project (id),
  label text NOT NULL CHECK (length(label) BETWEEN 1 AND 100),
  hash text NOT NULL UNIQUE,
  display text NOT NULL,
  created_at timestamptz NOT NULL,
  expires_at timestamptz,
  revoked_at timestamptz,
  last_used_at timestamptz
);
CREATE INDEX api_key_project ON api_key (project_id);

CREATE TABLE app_user (
  id text PRIMARY KEY,
  email text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL
);

CREATE TABLE member (
  workspace_id text NOT NULL REFERENCES workspace (id),
  user_id text NOT NULL REFERENCES app_user (id),
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
  created_at timestamptz NOT NULL,
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
  name text PRIMARY KEY,
  requests_per_minute bigint NOT NULL CHECK (requests_per_minute >= 1),
  monthly_quota bigint NOT NULL CHECK (monthly_quota >= 0),
  max_page_size integer NOT NULL CHECK (max_page_size BETWEEN 1 AND 1000),
  updated_at timestamptz NOT NULL
);

CREATE TABLE usage (
  scope text NOT NULL CHECK (scope IN ('workspace', 'project')),
  id text NOT NULL,
  month text NOT NULL,
  used bigint NOT NULL CHECK (used >= 0),
  PRIMARY KEY (scope, id, month)
);
`,
  },
];

export const PG_SCHEMA_VERSION = PG_MIGRATIONS[PG_MIGRATIONS.length - 1]!.version;
