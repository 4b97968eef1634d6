/**
 * Workspaces and projects in the accounts store: creation, lookup by id or name, listing, a
 * workspace's plan and a project's own monthly cap.
 */
import { firstOf, rowsOf } from './steps.js';
import { newId } from './ids.js';
import { parseMonthlyCap, parseProjectInput, parseWorkspaceInput, parseWorkspacePlan } from './input.js';
import { iso, toProject, toWorkspace } from './rows.js';
import type { StoreCore } from './store-core.js';
import { AccountsError, type AccountsStore } from './store.js';

type WorkspaceOperations = Pick<
  AccountsStore,
  | 'createWorkspace'
  | 'findWorkspace'
  | 'listWorkspaces'
  | 'setWorkspacePlan'
  | 'createProject'
  | 'findProject'
  | 'listProjects'
  | 'setProjectCap'
>;

export function workspaceOperations(core: StoreCore): WorkspaceOperations {
  const { q } = core;
  const workspaces = () => q.selectFrom('workspace').selectAll().$call(core.oldestFirst());
  const projects = () => q.selectFrom('project').selectAll().$call(core.oldestFirst());

  function* createProjectSteps(project: ReturnType<typeof parseProjectInput>) {
    if (!(yield* core.lockWorkspace(project.workspaceId))) {
      throw new AccountsError('not_found', `no workspace with id "${project.workspaceId}"`);
    }
    const taken = yield* firstOf(
      q
        .selectFrom('project')
        .select('id')
        .where('workspace_id', '=', project.workspaceId)
        .where('name', '=', project.name),
    );
    if (taken) {
      throw new AccountsError(
        'already_exists',
        `the workspace already has a project named "${project.name}": choose another name`,
      );
    }
    const [row] = yield* rowsOf(
      q
        .insertInto('project')
        .values({
          id: newId('project'),
          workspace_id: project.workspaceId,
          name: project.name,
          monthly_cap: project.monthlyCap,
          created_at: iso(new Date()),
        })
        .returningAll(),
    );
    return row!;
  }

  return {
    async createWorkspace(input) {
      const ws = parseWorkspaceInput(input);
      const row = await core.first(
        q
          .insertInto('workspace')
          .values({
            id: newId('workspace'),
            name: ws.name,
            plan: ws.plan,
            plan_expires_at: ws.planExpiresAt ? iso(ws.planExpiresAt) : null,
            created_at: iso(new Date()),
          })
          .returningAll(),
      );
      return toWorkspace(row!);
    },

    async findWorkspace(idOrName) {
      const byId = await core.first(q.selectFrom('workspace').selectAll().where('id', '=', idOrName));
      if (byId) return toWorkspace(byId);
      const byName = await core.all(workspaces().where('name', '=', idOrName));
      if (byName.length > 1) {
        throw new AccountsError(
          'ambiguous',
          `${byName.length} workspaces are named "${idOrName}" (${byName.map((w) => w.id).join(', ')}): use the workspace id`,
        );
      }
      return byName[0] ? toWorkspace(byName[0]) : null;
    },

    async listWorkspaces() {
      return (await core.all(workspaces())).map(toWorkspace);
    },

    async setWorkspacePlan(workspaceId, plan, expiresAt) {
      const parsed = parseWorkspacePlan(plan, expiresAt);
      const row = await core.first(
        q
          .updateTable('workspace')
          .set({ plan: parsed.plan, plan_expires_at: parsed.expiresAt ? iso(parsed.expiresAt) : null })
          .where('id', '=', workspaceId)
          .returningAll(),
      );
      if (!row) throw new AccountsError('not_found', `no workspace with id "${workspaceId}"`);
      return toWorkspace(row);
    },

    async createProject(input) {
      const project = parseProjectInput(input);
      return toProject(await core.transaction(() => createProjectSteps(project)));
    },

    async findProject(idOrName, workspaceId) {
      const byId = await core.first(q.selectFrom('project').selectAll().where('id', '=', idOrName));
      if (byId && (workspaceId === undefined || byId.workspace_id === workspaceId)) return toProject(byId);
      if (workspaceId !== undefined) {
        const row = await core.first(
          q
            .selectFrom('project')
            .selectAll()
            .where('workspace_id', '=', workspaceId)
            .where('name', '=', idOrName),
        );
        return row ? toProject(row) : null;
      }
      const byName = await core.all(projects().where('name', '=', idOrName));
      if (byName.length > 1) {
        throw new AccountsError(
          'ambiguous',
          `${byName.length} projects in different workspaces are named "${idOrName}": name the workspace, or use the project id (${byName.map((p) => p.id).join(', ')})`,
        );
      }
      return byName[0] ? toProject(byName[0]) : null;
    },

    async listProjects({ workspaceId } = {}) {
      const query = projects().$if(workspaceId !== undefined, (p) =>
        p.where('workspace_id', '=', workspaceId!),
      );
      return (await core.all(query)).map(toProject);
    },

    async setProjectCap(projectId, monthlyCap) {
      const cap = parseMonthlyCap(monthlyCap);
      const row = await core.first(
        q.updateTable('project').set({ monthly_cap: cap }).where('id', '=', projectId).returningAll(),
      );
      if (!row) throw new AccountsError('not_found', `no project with id "${projectId}"`);
      return toProject(row);
    },
  };
}
