/**
 * The shared accounts store on PostgreSQL (DATABASE_URL): the same AccountsStore as the embedded
 * SQLite one, for any number of server replicas and admin CLIs at once.
 *
 * - Opening never waits for the database: the first call migrates (under an advisory lock, so
 *   replicas starting together migrate once) and a failed attempt is retried by the next call. A
 *   server pointed at an unreachable database therefore starts, reports `database: error` on
 *   /health and answers lookups 503 until the database is back, then recovers by itself.
 * - createKey locks the workspace row (SELECT … FOR UPDATE) before counting its active keys, so
 *   concurrent creations from any replica cannot pass the 25-key limit together.
 * - `schema` puts every table in one PostgreSQL schema (created when missing), so several
 *   installations or test runs can share one database.
 */
import pg from 'pg';
import { displayKey, generateKey, hashKey, looksLikeKey } from './api-key.js';
import { newId } from './ids.js';
import {
  parseKeyInput,
  parseMemberInput,
  parseMonthlyCap,
  parsePlanInput,
  parseProjectInput,
  parseWorkspaceInput,
  parseWorkspacePlan,
} from './input.js';
import { PG_MIGRATIONS, PG_SCHEMA_VERSION } from './pg-schema.js';
import {
  AccountsError,
  MAX_ACTIVE_KEYS_PER_WORKSPACE,
  effectivePlan,
  type AccountsStore,
  type CreateKeyInput,
  type CreateProjectInput,
  type CreateWorkspaceInput,
  type CreatedKey,
  type KeyPrincipal,
  type KeyRecord,
  type Member,
  type MemberRole,
  type Plan,
  type Project,
  type UsageDelta,
  type UsageRow,
  type UsageScope,
  type Workspace,
} from './store.js';

export interface PgStoreOptions {
  /** postgres://user@host:port/database */
  url: string;
  /** PostgreSQL schema of the tables (created when missing); empty: the connection's default. */
  schema?: string;
  /** Connections of this process at most (default 10). */
  poolSize?: number;
  /** A connection attempt or a query slower than this fails (default 2000 ms). */
  timeoutMs?: number;
}

const INT8_OID = 20;

/** bigint columns as numbers: counts and caps stay far below 2^53. */
const types = {
  getTypeParser: (oid: number, format?: string) =>
    oid === INT8_OID
      ? (value: string) => Number(value)
      : (pg.types.getTypeParser as (oid: number, format?: string) => unknown)(oid, format),
} as unknown as pg.CustomTypesConfig;

const SCHEMA_NAME = /^[a-z_][a-z0-9_]{0,62}$/;

interface WorkspaceRow {
  id: string;
  name: string;
  plan: string;
  plan_expires_at: Date | null;
  created_at: Date;
}

interface ProjectRow {
  id: string;
  workspace_id: string;
  name: string;
  monthly_cap: number | null;
  created_at: Date;
}

interface KeyRow {
  id: string;
  project_id: string;
  workspace_id: string;
  label: string;
  display: string;
  created_at: Date;
  expires_at: Date | null;
  revoked_at: Date | null;
  last_used_at: Date | null;
}

interface PlanRow {
  name: string;
  requests_per_minute: number;
  monthly_quota: number;
  max_page_size: number;
}

const toWorkspace = (r: WorkspaceRow): Workspace => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  planExpiresAt: r.plan_expires_at,
  createdAt: r.created_at,
});

const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  monthlyCap: r.monthly_cap,
  createdAt: r.created_at,
});

const toKey = (r: KeyRow): KeyRecord => ({
  id: r.id,
  projectId: r.project_id,
  workspaceId: r.workspace_id,
  label: r.label,
  display: r.display,
  createdAt: r.created_at,
  expiresAt: r.expires_at,
  revokedAt: r.revoked_at,
  lastUsedAt: r.last_used_at,
});

const toPlan = (r: PlanRow): Plan => ({
  name: r.name,
  requestsPerMinute: r.requests_per_minute,
  monthlyQuota: r.monthly_quota,
  maxPageSize: r.max_page_size,
});

const KEY_COLUMNS = `k.id, k.project_id, p.workspace_id, k.label, k.display, k.created_at, k.expires_at,
  k.revoked_at, k.last_used_at`;

/** Opens the store without connecting: the first call connects and migrates. */
export function openPgAccountsStore(options: PgStoreOptions): PgAccountsStore {
  return new PgAccountsStore(options);
}

export class PgAccountsStore implements AccountsStore {
  private readonly pool: pg.Pool;
  private readonly schema: string;
  private ready: Promise<void> | null = null;
  private closed = false;

  constructor(options: PgStoreOptions) {
    const schema = options.schema ?? '';
    if (schema !== '' && !SCHEMA_NAME.test(schema)) {
      throw new Error(
        `DATABASE_SCHEMA "${schema}": expected lowercase letters, digits and _ (at most 63, not starting with a digit)`,
      );
    }
    this.schema = schema;
    const timeoutMs = options.timeoutMs ?? 2_000;
    this.pool = new pg.Pool({
      connectionString: options.url,
      max: options.poolSize ?? 10,
      connectionTimeoutMillis: timeoutMs,
      query_timeout: timeoutMs * 2,
      idleTimeoutMillis: 30_000,
      types,
      ...(schema ? { options: `-c search_path=${schema}` } : {}),
    });
    // A connection lost while idle (database restarted or unreachable) must not end the process:
    // the pool drops it and the next query opens a new one.
    this.pool.on('error', () => {});
  }

  /** Migrates once; a failure (database unreachable) is retried by the next call. */
  private ensureReady(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the accounts store is closed'));
    this.ready ??= this.migrate().catch((error: unknown) => {
      this.ready = null;
      throw error;
    });
    return this.ready;
  }

  private async migrate(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`ipscope-accounts:${this.schema}`]);
      if (this.schema) await client.query(`CREATE SCHEMA IF NOT EXISTS ${this.schema}`);
      await client.query(`CREATE TABLE IF NOT EXISTS schema_migration (
        version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL)`);
      const { rows } = await client.query<{ v: number | null }>(
        'SELECT max(version) AS v FROM schema_migration',
      );
      const current = rows[0]?.v ?? 0;
      if (current > PG_SCHEMA_VERSION) {
        throw new AccountsError(
          'unsupported_schema',
          `accounts database schema version ${current} is newer than this program understands (${PG_SCHEMA_VERSION}): upgrade ipscope`,
        );
      }
      for (const migration of PG_MIGRATIONS) {
        if (migration.version <= current) continue;
        await client.query(migration.sql);
        await client.query(
          'INSERT INTO schema_migration (version, name, applied_at) VALUES ($1, $2, now())',
          [migration.version, migration.name],
        );
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  private async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    await this.ensureReady();
    return (await this.pool.query<R>(text, values)).rows;
  }

  /** Runs `body` in one transaction on one connection. */
  private async transaction<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.ensureReady();
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await body(client);
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
  }

  async verifyKey(token: string, now: Date = new Date()): Promise<KeyPrincipal | null> {
    if (!looksLikeKey(token)) return null;
    const rows = await this.query<{
      id: string;
      project_id: string;
      workspace_id: string;
      plan: string;
      plan_expires_at: Date | null;
      monthly_cap: number | null;
      expires_at: Date | null;
      revoked_at: Date | null;
    }>(
      `SELECT k.id, k.project_id, p.workspace_id, w.plan, w.plan_expires_at, p.monthly_cap,
              k.expires_at, k.revoked_at
         FROM api_key k JOIN project p ON p.id = k.project_id JOIN workspace w ON w.id = p.workspace_id
        WHERE k.hash = $1`,
      [hashKey(token)],
    );
    const row = rows[0];
    if (!row || row.revoked_at !== null) return null;
    if (row.expires_at !== null && row.expires_at.getTime() <= now.getTime()) return null;
    return {
      keyId: row.id,
      projectId: row.project_id,
      workspaceId: row.workspace_id,
      plan: effectivePlan({ plan: row.plan, planExpiresAt: row.plan_expires_at }, now),
      projectMonthlyCap: row.monthly_cap,
    };
  }

  async ping(): Promise<void> {
    await this.query('SELECT 1');
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  async createWorkspace(input: CreateWorkspaceInput): Promise<Workspace> {
    const ws = parseWorkspaceInput(input);
    const rows = await this.query<WorkspaceRow>(
      `INSERT INTO workspace (id, name, plan, plan_expires_at, created_at) VALUES ($1, $2, $3, $4, now())
       RETURNING *`,
      [newId('workspace'), ws.name, ws.plan, ws.planExpiresAt],
    );
    return toWorkspace(rows[0]!);
  }

  async findWorkspace(idOrName: string): Promise<Workspace | null> {
    const byId = await this.query<WorkspaceRow>('SELECT * FROM workspace WHERE id = $1', [idOrName]);
    if (byId[0]) return toWorkspace(byId[0]);
    const byName = await this.query<WorkspaceRow>(
      'SELECT * FROM workspace WHERE name = $1 ORDER BY created_at, id',
      [idOrName],
    );
    if (byName.length > 1) {
      throw new AccountsError(
        'ambiguous',
        `${byName.length} workspaces are named "${idOrName}" (${byName.map((w) => w.id).join(', ')}): use the workspace id`,
      );
    }
    return byName[0] ? toWorkspace(byName[0]) : null;
  }

  async listWorkspaces(): Promise<Workspace[]> {
    return (await this.query<WorkspaceRow>('SELECT * FROM workspace ORDER BY created_at, id')).map(
      toWorkspace,
    );
  }

  async createProject(input: CreateProjectInput): Promise<Project> {
    const project = parseProjectInput(input);
    return this.transaction(async (client) => {
      const ws = await client.query('SELECT id FROM workspace WHERE id = $1 FOR UPDATE', [
        project.workspaceId,
      ]);
      if (ws.rowCount === 0)
        throw new AccountsError('not_found', `no workspace with id "${project.workspaceId}"`);
      const taken = await client.query('SELECT 1 FROM project WHERE workspace_id = $1 AND name = $2', [
        project.workspaceId,
        project.name,
      ]);
      if (taken.rowCount) {
        throw new AccountsError(
          'already_exists',
          `the workspace already has a project named "${project.name}": choose another name`,
        );
      }
      const { rows } = await client.query<ProjectRow>(
        `INSERT INTO project (id, workspace_id, name, monthly_cap, created_at) VALUES ($1, $2, $3, $4, now())
         RETURNING *`,
        [newId('project'), project.workspaceId, project.name, project.monthlyCap],
      );
      return toProject(rows[0]!);
    });
  }

  async findProject(idOrName: string, workspaceId?: string): Promise<Project | null> {
    const byId = await this.query<ProjectRow>('SELECT * FROM project WHERE id = $1', [idOrName]);
    if (byId[0] && (workspaceId === undefined || byId[0].workspace_id === workspaceId))
      return toProject(byId[0]);
    if (workspaceId !== undefined) {
      const rows = await this.query<ProjectRow>(
        'SELECT * FROM project WHERE workspace_id = $1 AND name = $2',
        [workspaceId, idOrName],
      );
      return rows[0] ? toProject(rows[0]) : null;
    }
    const byName = await this.query<ProjectRow>(
      'SELECT * FROM project WHERE name = $1 ORDER BY created_at, id',
      [idOrName],
    );
    if (byName.length > 1) {
      throw new AccountsError(
        'ambiguous',
        `${byName.length} projects in different workspaces are named "${idOrName}": name the workspace, or use the project id (${byName.map((p) => p.id).join(', ')})`,
      );
    }
    return byName[0] ? toProject(byName[0]) : null;
  }

  async listProjects(filter: { workspaceId?: string } = {}): Promise<Project[]> {
    const rows =
      filter.workspaceId === undefined
        ? await this.query<ProjectRow>('SELECT * FROM project ORDER BY created_at, id')
        : await this.query<ProjectRow>(
            'SELECT * FROM project WHERE workspace_id = $1 ORDER BY created_at, id',
            [filter.workspaceId],
          );
    return rows.map(toProject);
  }

  async createKey(input: CreateKeyInput, now: Date = new Date()): Promise<CreatedKey> {
    const parsed = parseKeyInput(input, now);
    const key = generateKey();
    const id = newId('key');
    const record = await this.transaction(async (client) => {
      const project = await client.query<{ workspace_id: string }>(
        'SELECT workspace_id FROM project WHERE id = $1',
        [parsed.projectId],
      );
      const workspaceId = project.rows[0]?.workspace_id;
      if (!workspaceId) throw new AccountsError('not_found', `no project with id "${parsed.projectId}"`);
      // The workspace row lock serialises key creation per workspace across every replica.
      await client.query('SELECT 1 FROM workspace WHERE id = $1 FOR UPDATE', [workspaceId]);
      const count = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM api_key k JOIN project p ON p.id = k.project_id
          WHERE p.workspace_id = $1 AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > $2)`,
        [workspaceId, now],
      );
      const active = count.rows[0]?.n ?? 0;
      if (active >= MAX_ACTIVE_KEYS_PER_WORKSPACE) {
        throw new AccountsError(
          'key_limit_reached',
          `the workspace already has ${active} active keys, the most allowed (${MAX_ACTIVE_KEYS_PER_WORKSPACE}): revoke a key first`,
        );
      }
      await client.query(
        `INSERT INTO api_key (id, project_id, label, hash, display, created_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7)`,
        [id, parsed.projectId, parsed.label, hashKey(key), displayKey(key), now, parsed.expiresAt],
      );
      const { rows } = await client.query<KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_key k JOIN project p ON p.id = k.project_id WHERE k.id = $1`,
        [id],
      );
      return toKey(rows[0]!);
    });
    return { key, record };
  }

  async listKeys(filter: { workspaceId?: string; projectId?: string } = {}): Promise<KeyRecord[]> {
    const rows = await this.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_key k JOIN project p ON p.id = k.project_id
        WHERE ($1::text IS NULL OR p.workspace_id = $1) AND ($2::text IS NULL OR k.project_id = $2)
        ORDER BY k.created_at, k.id`,
      [filter.workspaceId ?? null, filter.projectId ?? null],
    );
    return rows.map(toKey);
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const rows = await this.query<KeyRow>(
      `SELECT ${KEY_COLUMNS} FROM api_key k JOIN project p ON p.id = k.project_id WHERE k.id = $1`,
      [id],
    );
    return rows[0] ? toKey(rows[0]) : null;
  }

  async revokeKey(id: string, now: Date = new Date()): Promise<KeyRecord> {
    const changed = await this.query(
      'UPDATE api_key SET revoked_at = $1 WHERE id = $2 AND revoked_at IS NULL RETURNING id',
      [now, id],
    );
    const record = await this.getKey(id);
    if (!record) throw new AccountsError('not_found', `no key with id "${id}"`);
    if (changed.length === 0) {
      throw new AccountsError(
        'already_revoked',
        `key ${id} was already revoked at ${record.revokedAt!.toISOString().replace(/\.\d{3}Z$/, 'Z')}`,
      );
    }
    return record;
  }

  async listPlans(): Promise<Plan[]> {
    return (await this.query<PlanRow>('SELECT * FROM plan ORDER BY name')).map(toPlan);
  }

  async getPlan(name: string): Promise<Plan | null> {
    const rows = await this.query<PlanRow>('SELECT * FROM plan WHERE name = $1', [name]);
    return rows[0] ? toPlan(rows[0]) : null;
  }

  async upsertPlan(input: Plan): Promise<Plan> {
    const plan = parsePlanInput(input);
    const rows = await this.query<PlanRow>(
      `INSERT INTO plan (name, requests_per_minute, monthly_quota, max_page_size, updated_at)
       VALUES ($1, $2, $3, $4, now())
       ON CONFLICT (name) DO UPDATE SET requests_per_minute = EXCLUDED.requests_per_minute,
         monthly_quota = EXCLUDED.monthly_quota, max_page_size = EXCLUDED.max_page_size, updated_at = now()
       RETURNING *`,
      [plan.name, plan.requestsPerMinute, plan.monthlyQuota, plan.maxPageSize],
    );
    return toPlan(rows[0]!);
  }

  async setWorkspacePlan(workspaceId: string, plan: string, expiresAt: Date | null): Promise<Workspace> {
    const parsed = parseWorkspacePlan(plan, expiresAt);
    const rows = await this.query<WorkspaceRow>(
      'UPDATE workspace SET plan = $1, plan_expires_at = $2 WHERE id = $3 RETURNING *',
      [parsed.plan, parsed.expiresAt, workspaceId],
    );
    if (!rows[0]) throw new AccountsError('not_found', `no workspace with id "${workspaceId}"`);
    return toWorkspace(rows[0]);
  }

  async setProjectCap(projectId: string, monthlyCap: number | null): Promise<Project> {
    const cap = parseMonthlyCap(monthlyCap);
    const rows = await this.query<ProjectRow>(
      'UPDATE project SET monthly_cap = $1 WHERE id = $2 RETURNING *',
      [cap, projectId],
    );
    if (!rows[0]) throw new AccountsError('not_found', `no project with id "${projectId}"`);
    return toProject(rows[0]);
  }

  async getUsage(scope: UsageScope, id: string, month: string): Promise<number> {
    const rows = await this.query<{ used: number }>(
      'SELECT used FROM usage WHERE scope = $1 AND id = $2 AND month = $3',
      [scope, id, month],
    );
    return rows[0]?.used ?? 0;
  }

  async addUsage(deltas: readonly UsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    // One statement for the whole batch: atomic, and one round trip per flush.
    await this.query(
      `INSERT INTO usage (scope, id, month, used)
       SELECT scope, id, month, greatest(0, sum(n))::bigint
         FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[]) AS d(scope, id, month, n)
        GROUP BY scope, id, month
       ON CONFLICT (scope, id, month) DO UPDATE SET used = greatest(0, usage.used + EXCLUDED.used)`,
      [
        deltas.map((d) => d.scope),
        deltas.map((d) => d.id),
        deltas.map((d) => d.month),
        deltas.map((d) => d.count),
      ],
    );
  }

  async listUsage(month: string, filter: { workspaceId?: string } = {}): Promise<UsageRow[]> {
    return this.query<UsageRow>(
      `SELECT scope, id, month, used FROM usage
        WHERE month = $1 AND ($2::text IS NULL
          OR (scope = 'workspace' AND id = $2)
          OR (scope = 'project' AND id IN (SELECT id FROM project WHERE workspace_id = $2)))
        ORDER BY scope DESC, id`,
      [month, filter.workspaceId ?? null],
    );
  }

  async addMember(workspaceId: string, address: string, role: MemberRole): Promise<Member> {
    const member = parseMemberInput(address, role);
    return this.transaction(async (client) => {
      const ws = await client.query('SELECT 1 FROM workspace WHERE id = $1', [workspaceId]);
      if (ws.rowCount === 0) throw new AccountsError('not_found', `no workspace with id "${workspaceId}"`);
      await client.query(
        'INSERT INTO app_user (id, email, created_at) VALUES ($1, $2, now()) ON CONFLICT (email) DO NOTHING',
        [newId('user'), member.email],
      );
      const { rows } = await client.query<{ user_id: string; role: MemberRole; created_at: Date }>(
        `INSERT INTO member (workspace_id, user_id, role, created_at)
         SELECT $1, id, $3, now() FROM app_user WHERE email = $2
         ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = EXCLUDED.role
         RETURNING user_id, role, created_at`,
        [workspaceId, member.email, member.role],
      );
      const row = rows[0]!;
      return {
        workspaceId,
        userId: row.user_id,
        email: member.email,
        role: row.role,
        createdAt: row.created_at,
      };
    });
  }

  async listMembers(workspaceId: string): Promise<Member[]> {
    const rows = await this.query<{ user_id: string; email: string; role: MemberRole; created_at: Date }>(
      `SELECT m.user_id, u.email, m.role, m.created_at FROM member m JOIN app_user u ON u.id = m.user_id
        WHERE m.workspace_id = $1 ORDER BY m.created_at, u.email`,
      [workspaceId],
    );
    return rows.map((r) => ({
      workspaceId,
      userId: r.user_id,
      email: r.email,
      role: r.role,
      createdAt: r.created_at,
    }));
  }

  async removeMember(workspaceId: string, address: string): Promise<void> {
    const email = address.trim().toLowerCase();
    const rows = await this.query(
      'DELETE FROM member WHERE workspace_id = $1 AND user_id = (SELECT id FROM app_user WHERE email = $2) RETURNING 1',
      [workspaceId, email],
    );
    if (rows.length === 0) {
      throw new AccountsError('not_found', `${email} is not a member of workspace "${workspaceId}"`);
    }
  }
}
