/**
 * The accounts store interface: workspaces, projects and API keys. One implementation
 * (sql-store.ts) stands behind it for the embedded SQLite file (sqlite-store.ts) and for
 * PostgreSQL (pg-store.ts); every method is async because PostgreSQL answers over the network.
 */

import type { ConsoleStore } from './console-types.js';

/** At most this many active keys per workspace (SPEC.md, Limits); revoked and expired ones do not count. */
export const MAX_ACTIVE_KEYS_PER_WORKSPACE = 25;

export const DEFAULT_PLAN = 'free';

export interface Workspace {
  id: string;
  name: string;
  /** The plan paid for; see `effectivePlan` for the one whose limits apply. */
  plan: string;
  /** When the plan lapses (null: never); afterwards the Free plan's limits apply. */
  planExpiresAt: Date | null;
  createdAt: Date;
}

export interface Project {
  id: string;
  workspaceId: string;
  name: string;
  /** Requests per month for the project's keys (null: only the workspace quota applies). */
  monthlyCap: number | null;
  createdAt: Date;
}

export type KeyStatus = 'active' | 'revoked' | 'expired';

/** A key as stored: everything but the key itself, which exists only in `CreatedKey.key`. */
export interface KeyRecord {
  id: string;
  projectId: string;
  workspaceId: string;
  label: string;
  /** First and last characters of the key, e.g. `sk_AbCd…wxYz`. */
  display: string;
  createdAt: Date;
  expiresAt: Date | null;
  revokedAt: Date | null;
  lastUsedAt: Date | null;
}

export interface CreatedKey {
  /** The plaintext key: returned here once and never again. */
  key: string;
  record: KeyRecord;
}

/** Who a valid key acts for: what the server needs for limits, quotas and caps. */
export interface KeyPrincipal {
  keyId: string;
  projectId: string;
  workspaceId: string;
  /** The plan whose limits apply now (`free` once a paid plan lapsed). */
  plan: string;
  projectMonthlyCap: number | null;
  /** Largest page size the plan allows, once the meter has looked the plan up (server/page-size.ts). */
  maxPageSize?: number;
}

/** A plan's limits (SPEC.md Limits). The Free plan's come from settings (FREE_*), the others from the plan table. */
export interface Plan {
  name: string;
  /** Requests per minute per workspace, across all its keys. */
  requestsPerMinute: number;
  /** Requests per UTC calendar month per workspace. */
  monthlyQuota: number;
  /** Largest `limit` a page may have; larger values are lowered (Free: 100). */
  maxPageSize: number;
}

/** Whose monthly usage a count is: the workspace's (quota) or the project's (cap). */
export type UsageScope = 'workspace' | 'project';

/** Counted requests to add to the durable monthly usage. `month` is `YYYY-MM` (UTC). */
export interface UsageDelta {
  scope: UsageScope;
  id: string;
  month: string;
  count: number;
}

export interface UsageRow {
  scope: UsageScope;
  id: string;
  month: string;
  used: number;
}

export const MEMBER_ROLES = ['owner', 'admin', 'member'] as const;
export type MemberRole = (typeof MEMBER_ROLES)[number];

export interface Member {
  workspaceId: string;
  userId: string;
  email: string;
  role: MemberRole;
  createdAt: Date;
}

export interface CreateWorkspaceInput {
  name: string;
  plan?: string;
  planExpiresAt?: Date | null;
}

export interface CreateProjectInput {
  workspaceId: string;
  name: string;
  monthlyCap?: number | null;
}

export interface CreateKeyInput {
  projectId: string;
  label: string;
  /** Omitted or null: the key never expires. Must lie in the future. */
  expiresAt?: Date | null;
}

export interface AccountsStore extends ConsoleStore {
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
