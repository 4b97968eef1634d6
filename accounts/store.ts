/**
 * The accounts store interface: workspaces, projects and API keys. One implementation
 * (sql-store.ts) stands behind it for the embedded SQLite file (sqlite-store.ts) and for
 * PostgreSQL (pg-store.ts); every method is async because PostgreSQL answers over the network.
 * What it keeps and answers with (workspaces, keys, plans, …) is declared in records.ts.
 */

import type { ConsoleStore } from './console-types.js';
import type { WatchStore } from './watch-types.js';
import type {
  CreateKeyInput,
  CreateProjectInput,
  CreateWorkspaceInput,
  CreatedKey,
  KeyPrincipal,
  KeyRecord,
  KeyStatus,
  Member,
  MemberRole,
  Plan,
  Project,
  UsageDelta,
  UsageRow,
  UsageScope,
  Workspace,
} from './records.js';

/** At most this many active keys per workspace; revoked and expired ones do not count. */
export const MAX_ACTIVE_KEYS_PER_WORKSPACE = 25;

export const DEFAULT_PLAN = 'free';

export interface AccountsStore extends ConsoleStore, WatchStore {
  /**
   * The principal of an active key, or null when the token is malformed or fails its checksum
   * (refused without reading the store), unknown, revoked or expired at `now`.
   */
  verifyKey(token: string, now?: Date): Promise<KeyPrincipal | null>;
  /** Resolves when the store answers a query; throws when it is unreachable. */
  ping(): Promise<void>;
  /** Closes the store; later calls fail. Closing twice is harmless. */
  close(): Promise<void>;

  createWorkspace(input: CreateWorkspaceInput): Promise<Workspace>;
  /** By id (`ws_…`) or by name; throws AccountsError `ambiguous` when several workspaces share the name. */
  findWorkspace(idOrName: string): Promise<Workspace | null>;
  listWorkspaces(): Promise<Workspace[]>;

  /** Throws AccountsError `not_found` (workspace) or `already_exists` (name taken in the workspace). */
  createProject(input: CreateProjectInput): Promise<Project>;
  /**
   * By id (`prj_…`), or by name within `workspaceId`; without a workspace the name must be unique
   * across workspaces (AccountsError `ambiguous` otherwise).
   */
  findProject(idOrName: string, workspaceId?: string): Promise<Project | null>;
  listProjects(filter?: { workspaceId?: string }): Promise<Project[]>;

  /**
   * Creates a key. Atomic against every other writer of the store: throws AccountsError
   * `key_limit_reached` when the workspace already has MAX_ACTIVE_KEYS_PER_WORKSPACE active keys.
   */
  createKey(input: CreateKeyInput, now?: Date): Promise<CreatedKey>;
  listKeys(filter?: { workspaceId?: string; projectId?: string }): Promise<KeyRecord[]>;
  getKey(id: string): Promise<KeyRecord | null>;
  /** Revokes immediately and for good; AccountsError `not_found` or `already_revoked` otherwise. */
  revokeKey(id: string, now?: Date): Promise<KeyRecord>;

  /** Plans of the plan table (the Free plan's limits are settings and never stored). */
  listPlans(): Promise<Plan[]>;
  getPlan(name: string): Promise<Plan | null>;
  /** Creates or changes a plan; AccountsError `invalid_input` for `free` or bad limits. */
  upsertPlan(plan: Plan): Promise<Plan>;
  /** Puts a workspace on a plan until `expiresAt` (null: no end); AccountsError `not_found`. */
  setWorkspacePlan(workspaceId: string, plan: string, expiresAt: Date | null): Promise<Workspace>;
  /** Sets (or with null removes) a project's own monthly cap; AccountsError `not_found`. */
  setProjectCap(projectId: string, monthlyCap: number | null): Promise<Project>;

  /** Durable counted requests of one workspace or project in one month (0 when none). */
  getUsage(scope: UsageScope, id: string, month: string): Promise<number>;
  /** Adds counted requests to the durable monthly usage, atomically for the whole batch. */
  addUsage(deltas: readonly UsageDelta[]): Promise<void>;
  /** Usage rows of one month, optionally of one workspace (and its projects). */
  listUsage(month: string, filter?: { workspaceId?: string }): Promise<UsageRow[]>;

  /** Adds a member (creating the user by e-mail) or changes their role; AccountsError `not_found`. */
  addMember(workspaceId: string, email: string, role: MemberRole): Promise<Member>;
  listMembers(workspaceId: string): Promise<Member[]>;
  /** AccountsError `not_found` when the address is not a member of the workspace. */
  removeMember(workspaceId: string, email: string): Promise<void>;
}

export type AccountsErrorCode =
  | 'not_found'
  | 'already_exists'
  | 'ambiguous'
  | 'invalid_input'
  | 'key_limit_reached'
  | 'watch_limit_reached'
  | 'already_revoked'
  | 'unsupported_schema';

/** A refusal of the accounts store; `message` says what to do about it. */
export class AccountsError extends Error {
  override readonly name = 'AccountsError';
  constructor(
    readonly code: AccountsErrorCode,
    message: string,
  ) {
    super(message);
  }
}

export function keyStatus(key: KeyRecord, now: Date = new Date()): KeyStatus {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && key.expiresAt.getTime() <= now.getTime()) return 'expired';
  return 'active';
}

/** `YYYY-MM` of `now` in UTC: the month a count belongs to (quotas reset at its start). */
export function usageMonth(now: Date = new Date()): string {
  return now.toISOString().slice(0, 7);
}

/** The plan whose limits apply at `now`: the workspace's plan, or `free` after it lapsed. */
export function effectivePlan(
  workspace: Pick<Workspace, 'plan' | 'planExpiresAt'>,
  now: Date = new Date(),
): string {
  if (workspace.planExpiresAt && workspace.planExpiresAt.getTime() <= now.getTime()) return DEFAULT_PLAN;
  return workspace.plan;
}
