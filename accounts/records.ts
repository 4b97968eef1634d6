/**
 * What the accounts store keeps and answers with: workspaces, projects, API keys, plans, monthly
 * usage and members, as the store's interface (store.ts) and the console's (console-types.ts)
 * hand them out.
 */

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
  /** The e-mail address of the console user who created it; null when made by the admin CLI. */
  createdBy: string | null;
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
  /** Largest page size the plan allows, once the meter has looked the plan up (server/call/page-size.ts). */
  maxPageSize?: number;
}

/** A plan's limits. The Free plan's come from settings (FREE_*), the others from the plan table. */
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
  /** The console user creating it (user id); omitted for the admin CLI. */
  createdBy?: string | null;
}
