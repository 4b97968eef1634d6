/**
 * Rows of the accounts tables (schema.ts) as the store's records (records.ts). Times come back as
 * ISO 8601 text from SQLite and as Date objects from PostgreSQL; both become Dates here.
 */
import type { Selectable } from 'kysely';
import type { PlanTable, ProjectTable, WorkspaceTable } from './schema.js';
import type { KeyRecord, Plan, Project, Workspace } from './records.js';

/** How times are written, in both dialects. */
export const iso = (date: Date): string => date.toISOString();

export const toDate = (value: string | Date): Date => new Date(value);
export const toDateOrNull = (value: string | Date | null): Date | null =>
  value === null ? null : new Date(value);

export const toWorkspace = (r: Selectable<WorkspaceTable>): Workspace => ({
  id: r.id,
  name: r.name,
  plan: r.plan,
  planExpiresAt: toDateOrNull(r.plan_expires_at),
  createdAt: toDate(r.created_at),
});

export const toProject = (r: Selectable<ProjectTable>): Project => ({
  id: r.id,
  workspaceId: r.workspace_id,
  name: r.name,
  monthlyCap: r.monthly_cap,
  createdAt: toDate(r.created_at),
});

export interface KeyRow {
  id: string;
  project_id: string;
  workspace_id: string;
  label: string;
  display: string;
  created_at: string | Date;
  expires_at: string | Date | null;
  revoked_at: string | Date | null;
  last_used_at: string | Date | null;
  created_by: string | null;
}

export const toKey = (r: KeyRow): KeyRecord => ({
  id: r.id,
  projectId: r.project_id,
  workspaceId: r.workspace_id,
  label: r.label,
  display: r.display,
  createdAt: toDate(r.created_at),
  expiresAt: toDateOrNull(r.expires_at),
  revokedAt: toDateOrNull(r.revoked_at),
  lastUsedAt: toDateOrNull(r.last_used_at),
  createdBy: r.created_by,
});

export const toPlan = (r: Selectable<PlanTable>): Plan => ({
  name: r.name,
  requestsPerMinute: r.requests_per_minute,
  monthlyQuota: r.monthly_quota,
  maxPageSize: r.max_page_size,
});
