/**
 * The embedded accounts store: one SQLite file (ACCOUNTS_DB) in WAL mode, shared safely by the
 * server and the admin CLI, also from several processes at once. Writers that must check a limit
 * (createKey) take the write lock first (BEGIN IMMEDIATE), so the check and the insert are one
 * atomic step across connections; busy_timeout makes the others wait instead of failing.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
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
import { ACCOUNTS_SCHEMA_VERSION, MIGRATIONS, MIGRATION_TABLE } from './schema.js';
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

/** How long a connection waits for another one's write lock before giving up, in milliseconds. */
export const BUSY_TIMEOUT_MS = 5_000;

interface WorkspaceRow {
  id: string;
  name: string;
  plan: string;
  plan_expires_at: string | null;
  created_at: string;
}

interface ProjectRow {
  id: string;
  workspace_id: string;
  name: string;
  monthly_cap: number | null;
  created_at: string;
}

interface KeyRow {
  id: string;
  project_id: string;
  workspace_id: string;
  label: string;
  display: string;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

interface PrincipalRow {
  id: string;
  project_id: string;
  workspace_id: string;
  plan: string;
  plan_expires_at: string | null;
  monthly_cap: number | null;
  expires_at: string | null;
  revoked_at: string | null;
}

interface PlanRow {
  name: string;
  requests_per_minute: number;
  monthly_quota: number;
  max_page_size: number;
}

interface MemberRow {
  workspace_id: string;
  user_id: string;
  email: string;
  role: MemberRole;
  created_at: string;
}

const toPlan = (r: PlanRow): Plan => ({
  name: r.name,
  requestsPerMinute: r.requests_per_minute,
  monthlyQuota: r.monthly_quota,
  maxPageSize: r.max_page_size,
});

const toMember = (r: MemberRow): Member => ({
  workspaceId: r.workspace_id,
  userId: r.user_id,
  email: r.email,
  role: r.role,
  createdAt: new Date(r.created_at),
});

const iso = (d: Date) => d.toISOString();
const dateOrNull = (text: string | null) => (text === null ? null : new Date(text));

const toWorkspace = (r: WorkspaceRow): Workspace => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  planExpiresAt: dateOrNull(r.plan_expires_at),
  createdAt: new Date(r.created_at),
});

const toProject = (r: ProjectRow): Project => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  monthlyCap: r.monthly_cap,
  createdAt: new Date(r.created_at),
});

const toKey = (r: KeyRow): KeyRecord => ({
  id: r.id,
  projectId: r.project_id,
  workspaceId: r.workspace_id,
  label: r.label,
  display: r.display,
  createdAt: new Date(r.created_at),
  expiresAt: dateOrNull(r.expires_at),
  revokedAt: dateOrNull(r.revoked_at),
  lastUsedAt: dateOrNull(r.last_used_at),
});

const KEY_COLUMNS = `k.id, k.project_id, p.workspace_id, k.label, k.display, k.created_at, k.expires_at,
  k.revoked_at, k.last_used_at`;

/** Applies the migrations this file lacks, in one write transaction; refuses a newer file. */
function migrate(db: Database.Database, file: string): void {
  db.transaction(() => {
    db.exec(MIGRATION_TABLE);
    const applied = db.prepare('SELECT max(version) FROM schema_migration').pluck().get() as number | null;
    const current = applied ?? 0;
    if (current > ACCOUNTS_SCHEMA_VERSION) {
      throw new AccountsError(
        'unsupported_schema',
        `${file}: accounts schema version ${current} is newer than this program understands (${ACCOUNTS_SCHEMA_VERSION}): upgrade ipscope`,
      );
    }
    const record = db.prepare('INSERT INTO schema_migration (version, name, applied_at) VALUES (?, ?, ?)');
    for (const migration of MIGRATIONS) {
      if (migration.version <= current) continue;
      db.exec(migration.sql);
      record.run(migration.version, migration.name, iso(new Date()));
    }
  }).immediate();
}

/**
 * Opens (creating the file and its directory when missing) and migrates the accounts store.
 * Throws with the file's name when it cannot be opened or is not an accounts store.
 */
export function openAccountsStore(file: string): AccountsStore {
  let db: Database.Database;
  try {
    fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
    db = new Database(file);
  } catch (error) {
    throw new Error(`cannot open accounts store ${file}: ${(error as Error).message}`, { cause: error });
  }
  try {
    // busy_timeout first: switching a new file to WAL and migrating it take locks another process may hold.
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    const mode = db.pragma('journal_mode = WAL', { simple: true });
    if (mode !== 'wal') throw new Error(`cannot switch to WAL mode (journal_mode is ${String(mode)})`);
    db.pragma('foreign_keys = ON');
    migrate(db, file);
  } catch (error) {
    db.close();
    if (error instanceof AccountsError) throw error;
    throw new Error(`cannot open accounts store ${file}: ${(error as Error).message}`, { cause: error });
  }
  return new SqliteAccountsStore(db);
}

class SqliteAccountsStore implements AccountsStore {
  private readonly statements;

  constructor(private readonly db: Database.Database) {
    this.statements = {
      principal: db.prepare<[string], PrincipalRow>(
        `SELECT k.id, k.project_id, p.workspace_id, w.plan, w.plan_expires_at, p.monthly_cap,
                k.expires_at, k.revoked_at
           FROM api_key k JOIN project p ON p.id = k.project_id JOIN workspace w ON w.id = p.workspace_id
          WHERE k.hash = ?`,
      ),
      ping: db.prepare('SELECT max(version) FROM schema_migration').pluck(),
      workspaceById: db.prepare<[string], WorkspaceRow>('SELECT * FROM workspace WHERE id = ?'),
      workspacesByName: db.prepare<[string], WorkspaceRow>(
        'SELECT * FROM workspace WHERE name = ? ORDER BY created_at, rowid',
      ),
      workspaces: db.prepare<[], WorkspaceRow>('SELECT * FROM workspace ORDER BY created_at, rowid'),
      insertWorkspace: db.prepare(
        'INSERT INTO workspace (id, name, plan, plan_expires_at, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      projectById: db.prepare<[string], ProjectRow>('SELECT * FROM project WHERE id = ?'),
      projectsByName: db.prepare<[string], ProjectRow>(
        'SELECT * FROM project WHERE name = ? ORDER BY created_at, rowid',
      ),
      projectByWorkspaceAndName: db.prepare<[string, string], ProjectRow>(
        'SELECT * FROM project WHERE workspace_id = ? AND name = ?',
      ),
      projects: db.prepare<[], ProjectRow>('SELECT * FROM project ORDER BY created_at, rowid'),
      projectsOfWorkspace: db.prepare<[string], ProjectRow>(
        'SELECT * FROM project WHERE workspace_id = ? ORDER BY created_at, rowid',
      ),
      insertProject: db.prepare(
        'INSERT INTO project (id, workspace_id, name, monthly_cap, created_at) VALUES (?, ?, ?, ?, ?)',
      ),
      activeKeysOfWorkspace: db
        .prepare<[string, string], number>(
          `SELECT count(*) FROM api_key k JOIN project p ON p.id = k.project_id
            WHERE p.workspace_id = ? AND k.revoked_at IS NULL AND (k.expires_at IS NULL OR k.expires_at > ?)`,
        )
        .pluck(),
      insertKey: db.prepare(
        `INSERT INTO api_key (id, project_id, label, hash, display, created_at, expires_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)`,
      ),
      keyById: db.prepare<[string], KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_key k JOIN project p ON p.id = k.project_id WHERE k.id = ?`,
      ),
      keys: db.prepare<[{ workspaceId: string | null; projectId: string | null }], KeyRow>(
        `SELECT ${KEY_COLUMNS} FROM api_key k JOIN project p ON p.id = k.project_id
          WHERE (@workspaceId IS NULL OR p.workspace_id = @workspaceId)
            AND (@projectId IS NULL OR k.project_id = @projectId)
          ORDER BY k.created_at, k.rowid`,
      ),
      revokeKey: db.prepare('UPDATE api_key SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL'),
      plans: db.prepare<[], PlanRow>('SELECT * FROM plan ORDER BY name'),
      plan: db.prepare<[string], PlanRow>('SELECT * FROM plan WHERE name = ?'),
      upsertPlan: db.prepare(
        `INSERT INTO plan (name, requests_per_minute, monthly_quota, max_page_size, updated_at)
         VALUES (@name, @requestsPerMinute, @monthlyQuota, @maxPageSize, @updatedAt)
         ON CONFLICT (name) DO UPDATE SET requests_per_minute = excluded.requests_per_minute,
           monthly_quota = excluded.monthly_quota, max_page_size = excluded.max_page_size,
           updated_at = excluded.updated_at`,
      ),
      setWorkspacePlan: db.prepare('UPDATE workspace SET plan = ?, plan_expires_at = ? WHERE id = ?'),
      setProjectCap: db.prepare('UPDATE project SET monthly_cap = ? WHERE id = ?'),
      usage: db
        .prepare<[UsageScope, string, string], number>(
          'SELECT used FROM usage WHERE scope = ? AND id = ? AND month = ?',
        )
        .pluck(),
      addUsage: db.prepare(
        `INSERT INTO usage (scope, id, month, used) VALUES (?, ?, ?, ?)
         ON CONFLICT (scope, id, month) DO UPDATE SET used = max(0, used + excluded.used)`,
      ),
      usageOfMonth: db.prepare<[{ month: string; workspaceId: string | null }], UsageRow>(
        `SELECT scope, id, month, used FROM usage u
          WHERE month = @month AND (@workspaceId IS NULL
            OR (scope = 'workspace' AND id = @workspaceId)
            OR (scope = 'project' AND id IN (SELECT id FROM project WHERE workspace_id = @workspaceId)))
          ORDER BY scope DESC, id`,
      ),
      userByEmail: db.prepare<[string], { id: string }>('SELECT id FROM user WHERE email = ?'),
      insertUser: db.prepare('INSERT INTO user (id, email, created_at) VALUES (?, ?, ?)'),
      upsertMember: db.prepare(
        `INSERT INTO member (workspace_id, user_id, role, created_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (workspace_id, user_id) DO UPDATE SET role = excluded.role`,
      ),
      members: db.prepare<[string], MemberRow>(
        `SELECT m.workspace_id, m.user_id, u.email, m.role, m.created_at
           FROM member m JOIN user u ON u.id = m.user_id WHERE m.workspace_id = ? ORDER BY m.created_at, u.email`,
      ),
      deleteMember: db.prepare(
        'DELETE FROM member WHERE workspace_id = ? AND user_id = (SELECT id FROM user WHERE email = ?)',
      ),
    };
  }

  async verifyKey(token: string, now: Date = new Date()): Promise<KeyPrincipal | null> {
    if (!looksLikeKey(token)) return null;
    // An equality lookup on the hash: what an attacker can time is a search for a sha256 value
    // they cannot choose, so it tells them nothing about stored keys.
    const row = this.statements.principal.get(hashKey(token));
    if (!row || row.revoked_at !== null) return null;
    if (row.expires_at !== null && row.expires_at <= iso(now)) return null;
    return {
      keyId: row.id,
      projectId: row.project_id,
      workspaceId: row.workspace_id,
      plan: effectivePlan({ plan: row.plan, planExpiresAt: dateOrNull(row.plan_expires_at) }, now),
      projectMonthlyCap: row.monthly_cap,
    };
  }

  async ping(): Promise<void> {
    this.statements.ping.get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }

  async createWorkspace(input: CreateWorkspaceInput): Promise<Workspace> {
    const ws = parseWorkspaceInput(input);
    const id = newId('workspace');
    const planExpiresAt = ws.planExpiresAt ? iso(ws.planExpiresAt) : null;
    this.statements.insertWorkspace.run(id, ws.name, ws.plan, planExpiresAt, iso(new Date()));
    return toWorkspace(this.statements.workspaceById.get(id)!);
  }

  async findWorkspace(idOrName: string): Promise<Workspace | null> {
    const byId = this.statements.workspaceById.get(idOrName);
    if (byId) return toWorkspace(byId);
    const byName = this.statements.workspacesByName.all(idOrName);
    if (byName.length > 1) {
      throw new AccountsError(
        'ambiguous',
        `${byName.length} workspaces are named "${idOrName}" (${byName.map((w) => w.id).join(', ')}): use the workspace id`,
      );
    }
    return byName[0] ? toWorkspace(byName[0]) : null;
  }

  async listWorkspaces(): Promise<Workspace[]> {
    return this.statements.workspaces.all().map(toWorkspace);
  }

  async createProject(input: CreateProjectInput): Promise<Project> {
    const project = parseProjectInput(input);
    const id = newId('project');
    this.db
      .transaction(() => {
        if (!this.statements.workspaceById.get(project.workspaceId)) {
          throw new AccountsError('not_found', `no workspace with id "${project.workspaceId}"`);
        }
        if (this.statements.projectByWorkspaceAndName.get(project.workspaceId, project.name)) {
          throw new AccountsError(
            'already_exists',
            `the workspace already has a project named "${project.name}": choose another name`,
          );
        }
        this.statements.insertProject.run(
          id,
          project.workspaceId,
          project.name,
          project.monthlyCap,
          iso(new Date()),
        );
      })
      .immediate();
    return toProject(this.statements.projectById.get(id)!);
  }

  async findProject(idOrName: string, workspaceId?: string): Promise<Project | null> {
    const byId = this.statements.projectById.get(idOrName);
    if (byId && (workspaceId === undefined || byId.workspace_id === workspaceId)) return toProject(byId);
    if (workspaceId !== undefined) {
      const row = this.statements.projectByWorkspaceAndName.get(workspaceId, idOrName);
      return row ? toProject(row) : null;
    }
    const byName = this.statements.projectsByName.all(idOrName);
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
        ? this.statements.projects.all()
        : this.statements.projectsOfWorkspace.all(filter.workspaceId);
    return rows.map(toProject);
  }

  async createKey(input: CreateKeyInput, now: Date = new Date()): Promise<CreatedKey> {
    const parsed = parseKeyInput(input, now);
    const key = generateKey();
    const id = newId('key');
    // BEGIN IMMEDIATE: the write lock is taken before the count, so no other connection or
    // process can insert between this count and this insert.
    this.db
      .transaction(() => {
        const project = this.statements.projectById.get(parsed.projectId);
        if (!project) throw new AccountsError('not_found', `no project with id "${parsed.projectId}"`);
        const active = this.statements.activeKeysOfWorkspace.get(project.workspace_id, iso(now)) ?? 0;
        if (active >= MAX_ACTIVE_KEYS_PER_WORKSPACE) {
          throw new AccountsError(
            'key_limit_reached',
            `the workspace already has ${active} active keys, the most allowed (${MAX_ACTIVE_KEYS_PER_WORKSPACE}): revoke a key first`,
          );
        }
        this.statements.insertKey.run(
          id,
          project.id,
          parsed.label,
          hashKey(key),
          displayKey(key),
          iso(now),
          parsed.expiresAt ? iso(parsed.expiresAt) : null,
        );
      })
      .immediate();
    return { key, record: toKey(this.statements.keyById.get(id)!) };
  }

  async listKeys(filter: { workspaceId?: string; projectId?: string } = {}): Promise<KeyRecord[]> {
    return this.statements.keys
      .all({ workspaceId: filter.workspaceId ?? null, projectId: filter.projectId ?? null })
      .map(toKey);
  }

  async getKey(id: string): Promise<KeyRecord | null> {
    const row = this.statements.keyById.get(id);
    return row ? toKey(row) : null;
  }

  async revokeKey(id: string, now: Date = new Date()): Promise<KeyRecord> {
    const changed = this.statements.revokeKey.run(iso(now), id).changes;
    const row = this.statements.keyById.get(id);
    if (!row) throw new AccountsError('not_found', `no key with id "${id}"`);
    if (changed === 0) {
      throw new AccountsError(
        'already_revoked',
        `key ${id} was already revoked at ${row.revoked_at!.replace(/\.\d{3}Z$/, 'Z')}`,
      );
    }
    return toKey(row);
  }

  async listPlans(): Promise<Plan[]> {
    return this.statements.plans.all().map(toPlan);
  }

  async getPlan(name: string): Promise<Plan | null> {
    const row = this.statements.plan.get(name);
    return row ? toPlan(row) : null;
  }

  async upsertPlan(input: Plan): Promise<Plan> {
    const plan = parsePlanInput(input);
    this.statements.upsertPlan.run({ ...plan, updatedAt: iso(new Date()) });
    return toPlan(this.statements.plan.get(plan.name)!);
  }

  async setWorkspacePlan(workspaceId: string, plan: string, expiresAt: Date | null): Promise<Workspace> {
    const parsed = parseWorkspacePlan(plan, expiresAt);
    const expires = parsed.expiresAt ? iso(parsed.expiresAt) : null;
    if (this.statements.setWorkspacePlan.run(parsed.plan, expires, workspaceId).changes === 0) {
      throw new AccountsError('not_found', `no workspace with id "${workspaceId}"`);
    }
    return toWorkspace(this.statements.workspaceById.get(workspaceId)!);
  }

  async setProjectCap(projectId: string, monthlyCap: number | null): Promise<Project> {
    const cap = parseMonthlyCap(monthlyCap);
    if (this.statements.setProjectCap.run(cap, projectId).changes === 0) {
      throw new AccountsError('not_found', `no project with id "${projectId}"`);
    }
    return toProject(this.statements.projectById.get(projectId)!);
  }

  async getUsage(scope: UsageScope, id: string, month: string): Promise<number> {
    return this.statements.usage.get(scope, id, month) ?? 0;
  }

  async addUsage(deltas: readonly UsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    this.db
      .transaction(() => {
        for (const d of deltas) this.statements.addUsage.run(d.scope, d.id, d.month, d.count);
      })
      .immediate();
  }

  async listUsage(month: string, filter: { workspaceId?: string } = {}): Promise<UsageRow[]> {
    return this.statements.usageOfMonth.all({ month, workspaceId: filter.workspaceId ?? null });
  }

  async addMember(workspaceId: string, address: string, role: MemberRole): Promise<Member> {
    const member = parseMemberInput(address, role);
    this.db
      .transaction(() => {
        if (!this.statements.workspaceById.get(workspaceId)) {
          throw new AccountsError('not_found', `no workspace with id "${workspaceId}"`);
        }
        let user = this.statements.userByEmail.get(member.email);
        if (!user) {
          user = { id: newId('user') };
          this.statements.insertUser.run(user.id, member.email, iso(new Date()));
        }
        this.statements.upsertMember.run(workspaceId, user.id, member.role, iso(new Date()));
      })
      .immediate();
    return (await this.listMembers(workspaceId)).find((m) => m.email === member.email)!;
  }

  async listMembers(workspaceId: string): Promise<Member[]> {
    return this.statements.members.all(workspaceId).map(toMember);
  }

  async removeMember(workspaceId: string, address: string): Promise<void> {
    const email = address.trim().toLowerCase();
    if (this.statements.deleteMember.run(workspaceId, email).changes === 0) {
      throw new AccountsError('not_found', `${email} is not a member of workspace "${workspaceId}"`);
    }
  }
}
