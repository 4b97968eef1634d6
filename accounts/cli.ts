/**
 * Admin commands of `npx server` for accounts: `keys create|list|revoke`, `workspaces
 * create|list|plan`, `projects create|list|cap`, `plans list|set`, `members add|list|remove`,
 * `usage`, and `backup` / `restore` of the SQLite store (cli-backup.ts). They work on the accounts store the settings name: PostgreSQL when DATABASE_URL is set,
 * else the SQLite file of `--accounts-db` or ACCOUNTS_DB.
 */
import { type Command } from 'commander';
import { AccountsError, DEFAULT_PLAN, MAX_ACTIVE_KEYS_PER_WORKSPACE, keyStatus } from './store.js';
import {
  type CliIo,
  consoleIo,
  DEFAULT_WORKSPACE,
  capArg,
  wholeNumber,
  parseExpiry,
  shortIso,
  formatTable,
  workspaceForCreate,
  projectForCreate,
  existingWorkspace,
  existingProject,
  storeRunner,
} from './cli-support.js';
import { registerPlanCommands } from './cli-plans.js';
import { registerBackupCommands } from './cli-backup.js';
import { registerWatchCommands } from './cli-watch.js';

export { formatTable, parseExpiry, type CliIo } from './cli-support.js';

export function registerAccountCommands(program: Command, io: CliIo = consoleIo): void {
  if (!program.options.some((option) => option.long === '--accounts-db')) {
    program.option(
      '--accounts-db <file>',
      'accounts store, an SQLite file created when missing (env ACCOUNTS_DB, default ./accounts.sqlite)',
    );
  }

  const withStore = storeRunner(program, io);

  const keys = program
    .command('keys')
    .description(
      `Create, list and revoke API keys (at most ${MAX_ACTIVE_KEYS_PER_WORKSPACE} active keys per workspace).`,
    );

  keys
    .command('create')
    .description(
      'Create an API key in a project (creating the workspace and project when missing) and print it once.',
    )
    .requiredOption('--project <name>', 'project name or id (prj_…)')
    .requiredOption('--label <label>', 'what the key is for, e.g. "billing cron"')
    .option('--workspace <name>', `workspace name or id (ws_…); default "${DEFAULT_WORKSPACE}"`)
    .option(
      '--expires <date>',
      'expiry: 2027-01-31 (00:00 UTC), an ISO 8601 timestamp, or 90d; default: never',
      (value: string) => parseExpiry(value),
    )
    .action(
      withStore(
        async (store, options: { project: string; label: string; workspace?: string; expires?: Date }) => {
          const { workspace, project } = await projectForCreate(
            store,
            io,
            options.project,
            options.workspace,
          );
          const { key, record } = await store.createKey({
            projectId: project.id,
            label: options.label,
            expiresAt: options.expires ?? null,
          });
          io.out(`created key ${record.id} "${record.label}" in ${workspace.name}/${project.name}`);
          io.out(`expires: ${record.expiresAt ? shortIso(record.expiresAt) : 'never'}`);
          io.out(`key: ${key}`);
          io.out(
            `This is the only time the key is shown: store it now. Afterwards it appears as ${record.display}.`,
          );
        },
      ),
    );

  keys
    .command('list')
    .description('List API keys (never the keys themselves: only their first and last characters).')
    .option('--project <name>', 'only this project (name or id)')
    .option('--workspace <name>', 'only this workspace (name or id)')
    .action(
      withStore(async (store, options: { project?: string; workspace?: string }) => {
        const workspace = options.workspace ? await existingWorkspace(store, options.workspace) : undefined;
        const project = options.project
          ? await existingProject(store, options.project, workspace?.id)
          : undefined;
        const records = await store.listKeys({ workspaceId: workspace?.id, projectId: project?.id });
        if (records.length === 0) {
          io.out('no keys: create one with "npx server keys create --project <name> --label <label>"');
          return;
        }
        const workspaces = new Map((await store.listWorkspaces()).map((w) => [w.id, w.name]));
        const projects = new Map((await store.listProjects()).map((p) => [p.id, p.name]));
        const now = new Date();
        const rows = records.map((k) => [
          k.id,
          workspaces.get(k.workspaceId) ?? k.workspaceId,
          projects.get(k.projectId) ?? k.projectId,
          k.label,
          k.display,
          shortIso(k.createdAt),
          k.expiresAt ? shortIso(k.expiresAt) : 'never',
          keyStatus(k, now),
        ]);
        const header = ['ID', 'WORKSPACE', 'PROJECT', 'LABEL', 'KEY', 'CREATED', 'EXPIRES', 'STATUS'];
        for (const line of formatTable(header, rows)) io.out(line);
      }),
    );

  keys
    .command('revoke')
    .description('Revoke an API key at once and for good (requests with it get 401 from now on).')
    .argument('<key-id>', 'id of the key (key_…), as shown by "keys list"')
    .action(
      withStore(async (store, keyId: string) => {
        const record = await store.revokeKey(keyId);
        io.out(
          `revoked key ${record.id} (${record.display}, "${record.label}") at ${shortIso(record.revokedAt!)}`,
        );
      }),
    );

  const workspaces = program.command('workspaces').description('Create and list workspaces.');

  workspaces
    .command('create')
    .description('Create a workspace (on the Free plan).')
    .argument('<name>', 'workspace name')
    .action(
      withStore(async (store, name: string) => {
        if (await store.findWorkspace(name)) {
          throw new AccountsError('already_exists', `a workspace named "${name}" already exists`);
        }
        const workspace = await store.createWorkspace({ name });
        io.out(`created workspace "${workspace.name}" (${workspace.id}), plan ${workspace.plan}`);
      }),
    );

  workspaces
    .command('list')
    .description('List workspaces with their plan, projects and active keys.')
    .action(
      withStore(async (store) => {
        const all = await store.listWorkspaces();
        if (all.length === 0) {
          io.out('no workspaces: create one with "npx server workspaces create <name>"');
          return;
        }
        const projects = await store.listProjects();
        const keysList = await store.listKeys();
        const now = new Date();
        const rows = all.map((w) => [
          w.id,
          w.name,
          w.planExpiresAt ? `${w.plan} (until ${shortIso(w.planExpiresAt)})` : w.plan,
          String(projects.filter((p) => p.workspaceId === w.id).length),
          `${keysList.filter((k) => k.workspaceId === w.id && keyStatus(k, now) === 'active').length}/${MAX_ACTIVE_KEYS_PER_WORKSPACE}`,
          shortIso(w.createdAt),
        ]);
        for (const line of formatTable(['ID', 'NAME', 'PLAN', 'PROJECTS', 'ACTIVE KEYS', 'CREATED'], rows)) {
          io.out(line);
        }
      }),
    );

  const projects = program
    .command('projects')
    .description('Create and list projects (a key belongs to one).');

  projects
    .command('create')
    .description('Create a project in a workspace (creating the workspace when missing).')
    .argument('<name>', 'project name (unique in its workspace)')
    .option('--workspace <name>', `workspace name or id (ws_…); default "${DEFAULT_WORKSPACE}"`)
    .option('--cap <n>', "the project's own monthly request cap; default: none", wholeNumber)
    .action(
      withStore(async (store, name: string, options: { workspace?: string; cap?: number }) => {
        const workspace = await workspaceForCreate(store, io, options.workspace);
        const project = await store.createProject({
          workspaceId: workspace.id,
          name,
          monthlyCap: options.cap ?? null,
        });
        const cap = project.monthlyCap === null ? 'no monthly cap' : `monthly cap ${project.monthlyCap}`;
        io.out(`created project "${project.name}" (${project.id}) in workspace "${workspace.name}", ${cap}`);
      }),
    );

  projects
    .command('list')
    .description('List projects with their monthly cap and active keys.')
    .option('--workspace <name>', 'only this workspace (name or id)')
    .action(
      withStore(async (store, options: { workspace?: string }) => {
        const workspace = options.workspace ? await existingWorkspace(store, options.workspace) : undefined;
        const all = await store.listProjects({ workspaceId: workspace?.id });
        if (all.length === 0) {
          io.out('no projects: create one with "npx server projects create <name>"');
          return;
        }
        const workspaceNames = new Map((await store.listWorkspaces()).map((w) => [w.id, w.name]));
        const keysList = await store.listKeys({ workspaceId: workspace?.id });
        const now = new Date();
        const rows = all.map((p) => [
          p.id,
          workspaceNames.get(p.workspaceId) ?? p.workspaceId,
          p.name,
          p.monthlyCap === null ? 'none' : String(p.monthlyCap),
          String(keysList.filter((k) => k.projectId === p.id && keyStatus(k, now) === 'active').length),
          shortIso(p.createdAt),
        ]);
        const header = ['ID', 'WORKSPACE', 'NAME', 'MONTHLY CAP', 'ACTIVE KEYS', 'CREATED'];
        for (const line of formatTable(header, rows)) io.out(line);
      }),
    );

  projects
    .command('cap')
    .description(
      "Set or remove a project's own monthly request cap (its keys get 402 project_cap_exceeded past it).",
    )
    .argument('<project>', 'project name or id (prj_…)')
    .argument('<cap>', 'requests per month, or "none" to remove the cap', capArg)
    .option('--workspace <name>', 'workspace of the project (name or id), when the name is not unique')
    .action(
      withStore(async (store, ref: string, cap: number | null, options: { workspace?: string }) => {
        const workspace = options.workspace ? await existingWorkspace(store, options.workspace) : undefined;
        const project = await store.setProjectCap((await existingProject(store, ref, workspace?.id)).id, cap);
        io.out(
          `project "${project.name}" (${project.id}): ${project.monthlyCap === null ? 'no monthly cap' : `monthly cap ${project.monthlyCap}`}`,
        );
      }),
    );

  workspaces
    .command('plan')
    .description('Put a workspace on a plan, optionally until a date (then the Free plan applies again).')
    .argument('<workspace>', 'workspace name or id')
    .argument('<plan>', `plan name ("${DEFAULT_PLAN}" or one of "plans list")`)
    .option(
      '--until <date>',
      'when the plan lapses: 2027-01-31, an ISO 8601 timestamp, or 30d; default: never',
      (v: string) => parseExpiry(v),
    )
    .action(
      withStore(async (store, ref: string, planName: string, options: { until?: Date }) => {
        if (planName !== DEFAULT_PLAN && !(await store.getPlan(planName))) {
          throw new AccountsError(
            'not_found',
            `no plan "${planName}": create it with "npx server plans set ${planName} …"`,
          );
        }
        const workspace = await existingWorkspace(store, ref);
        const updated = await store.setWorkspacePlan(workspace.id, planName, options.until ?? null);
        io.out(
          `workspace "${updated.name}" (${updated.id}) is on plan ${updated.plan}${updated.planExpiresAt ? ` until ${shortIso(updated.planExpiresAt)}` : ''}`,
        );
      }),
    );

  registerPlanCommands(program, withStore, io);
  registerWatchCommands(program, withStore, io);
  registerBackupCommands(program, io);
}
