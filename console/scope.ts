/**
 * Every console route that names a workspace, project, member, key, watch entry or webhook
 * endpoint finds it through the
 * signed-in member's own workspaces: an ID that is not in one of them, or that belongs to another
 * workspace than the one in the path, is NotFound (404), the same as an ID that does not exist.
 */
import type { MemberRole, Project, Workspace } from '../accounts/index.js';
import type { KeyRecord } from '../accounts/index.js';
import type { WatchEntry, WebhookEndpoint } from '../accounts/watch-types.js';
import { Forbidden, NotFound, type ConsoleDeps, type Visitor } from './deps.js';

export interface WorkspaceScope {
  workspace: Workspace;
  role: MemberRole;
  /** Owners and admins manage members, projects, keys and caps; members see keys and usage. */
  manages: boolean;
}

const ID = /^[a-z]{2,3}_[0-9a-z]{16}$/;

export async function workspaceScope(
  deps: ConsoleDeps,
  visitor: Visitor,
  workspaceId: string,
): Promise<WorkspaceScope> {
  if (!ID.test(workspaceId)) throw new NotFound();
  const role = await deps.store.memberRole(workspaceId, visitor.user.id);
  if (role === null) throw new NotFound();
  const workspace = await deps.store.findWorkspace(workspaceId);
  if (workspace === null || workspace.id !== workspaceId) throw new NotFound();
  return { workspace, role, manages: role === 'owner' || role === 'admin' };
}

export async function projectScope(
  deps: ConsoleDeps,
  visitor: Visitor,
  workspaceId: string,
  projectId: string,
): Promise<WorkspaceScope & { project: Project }> {
  const scope = await workspaceScope(deps, visitor, workspaceId);
  if (!ID.test(projectId)) throw new NotFound();
  const project = await deps.store.findProject(projectId, scope.workspace.id);
  if (project === null || project.id !== projectId || project.workspaceId !== scope.workspace.id)
    throw new NotFound();
  return { ...scope, project };
}

export async function keyScope(
  deps: ConsoleDeps,
  visitor: Visitor,
  workspaceId: string,
  projectId: string,
  keyId: string,
): Promise<WorkspaceScope & { project: Project; key: KeyRecord }> {
  const scope = await projectScope(deps, visitor, workspaceId, projectId);
  if (!ID.test(keyId)) throw new NotFound();
  const key = await deps.store.getKey(keyId);
  if (key === null || key.projectId !== scope.project.id || key.workspaceId !== scope.workspace.id)
    throw new NotFound();
  return { ...scope, key };
}

export async function entryScope(
  deps: ConsoleDeps,
  visitor: Visitor,
  workspaceId: string,
  projectId: string,
  entryId: string,
): Promise<WorkspaceScope & { project: Project; entry: WatchEntry }> {
  const scope = await projectScope(deps, visitor, workspaceId, projectId);
  if (!ID.test(entryId)) throw new NotFound();
  const entry = (await deps.store.listWatchEntries(scope.project.id)).find((e) => e.id === entryId);
  if (entry === undefined || entry.projectId !== scope.project.id) throw new NotFound();
  return { ...scope, entry };
}

export async function endpointScope(
  deps: ConsoleDeps,
  visitor: Visitor,
  workspaceId: string,
  projectId: string,
  endpointId: string,
): Promise<WorkspaceScope & { project: Project; endpoint: WebhookEndpoint }> {
  const scope = await projectScope(deps, visitor, workspaceId, projectId);
  if (!ID.test(endpointId)) throw new NotFound();
  const endpoint = await deps.store.getEndpoint(endpointId);
  if (endpoint === null || endpoint.id !== endpointId || endpoint.projectId !== scope.project.id)
    throw new NotFound();
  return { ...scope, endpoint };
}

export function mustManage(scope: WorkspaceScope): void {
  if (!scope.manages) throw new Forbidden('Only the owners and admins of this workspace can do that.');
}
