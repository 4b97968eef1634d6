/**
 * Admin commands of `npx server` for accounts: `keys create|list|revoke`, `workspaces
 * create|list|plan`, `projects create|list|cap`, `plans list|set`, `members add|list|remove` and
 * `usage`. They work on the accounts store the settings name: PostgreSQL when DATABASE_URL is set,
 * else the SQLite file of `--accounts-db` or ACCOUNTS_DB.
 */
import { InvalidArgumentError, type Command } from 'commander';
import { loadSettings } from '../../shared/config.js';
import { parseIsoToEpoch } from '../../shared/time.js';
import { openConfiguredAccountsStore } from './open.js';
import {
  AccountsError,
  DEFAULT_PLAN,
  MAX_ACTIVE_KEYS_PER_WORKSPACE,
  MEMBER_ROLES,
  effectivePlan,
  keyStatus,
  usageMonth,
  type Plan,
  type AccountsStore,
  type Project,
  type Workspace,
} from './store.js';

/** Where the commands write; tests pass their own. */
export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  /** Called once when a command fails, with the exit code to end with. */
  fail(exitCode: number): void;
}

const consoleIo: CliIo = {
  out: (line) => console.log(line),
  err: (line) => console.error(line),
  fail: (exitCode) => {
    process.exitCode = exitCode;
  },
};

const DEFAULT_WORKSPACE = 'default';
const DAY_MS = 86_400_000;

function capArg(value: string): number | null {
  if (value === 'none') return null;
  return wholeNumber(value);
}

function monthArg(value: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value))
    throw new InvalidArgumentError('expected a month as YYYY-MM, e.g. 2026-11');
  return value;
}

function wholeNumber(value: string): number {
  if (!/^\d+$/.test(value) || !Number.isSafeInteger(Number(value))) {
    throw new InvalidArgumentError('expected a whole number of requests, e.g. 100000');
  }
  return Number(value);
}

/** `2027-01-31` (00:00 UTC), an ISO 8601 timestamp with offset, or `<n>d` (n days from now). */
export function parseExpiry(value: string, now: Date = new Date()): Date {
  const days = /^(\d{1,5})d$/.exec(value);
  if (days) return new Date(now.getTime() + Number(days[1]) * DAY_MS);
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) {
    const date = new Date(`${value}T00:00:00Z`);
    if (!Number.isNaN(date.getTime()) && date.toISOString().startsWith(value)) return date;
  }
  const epoch = parseIsoToEpoch(value);
  if (epoch !== null) return new Date(epoch * 1000);
  throw new InvalidArgumentError(
    'expected an ISO 8601 date or timestamp (2027-01-31, 2027-01-31T12:00:00Z) or a number of days (90d)',
  );
}

const shortIso = (d: Date) => d.toISOString().replace(/\.\d{3}Z$/, 'Z');

/** Left-aligned columns separated by two spaces. */
export function formatTable(header: string[], rows: string[][]): string[] {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)];
}

interface Resolved {
  workspace: Workspace;
  project: Project;
}

/**
 * The workspace named by `workspaceRef` (default: "default"), created when missing (said on `io`);
 * an id (`ws_…`) that does not exist is an error, not a new workspace's name.
 */
async function workspaceForCreate(
  store: AccountsStore,
  io: CliIo,
  workspaceRef?: string,
): Promise<Workspace> {
  const ref = workspaceRef ?? DEFAULT_WORKSPACE;
  const found = await store.findWorkspace(ref);
  if (found) return found;
  if (/^ws_[0-9a-z]+$/.test(ref)) throw new AccountsError('not_found', `no workspace with id "${ref}"`);
  const created = await store.createWorkspace({ name: ref });
  io.out(`created workspace "${created.name}" (${created.id})`);
  return created;
}

/** The project to create a key in: found by id or name, else created (in --workspace or "default"). */
async function projectForCreate(
  store: AccountsStore,
  io: CliIo,
  projectRef: string,
  workspaceRef?: string,
): Promise<Resolved> {
  if (workspaceRef === undefined) {
    const project = await store.findProject(projectRef);
    if (project) return { project, workspace: (await store.findWorkspace(project.workspaceId))! };
  }
  if (/^prj_[0-9a-z]+$/.test(projectRef) && !(await store.findProject(projectRef))) {
    throw new AccountsError('not_found', `no project with id "${projectRef}"`);
  }
  const workspace = await workspaceForCreate(store, io, workspaceRef);
  const existing = await store.findProject(projectRef, workspace.id);
  if (existing) return { workspace, project: existing };
  const project = await store.createProject({ workspaceId: workspace.id, name: projectRef });
  io.out(`created project "${project.name}" (${project.id}) in workspace "${workspace.name}"`);
  return { workspace, project };
}

async function existingWorkspace(store: AccountsStore, ref: string): Promise<Workspace> {
  const workspace = await store.findWorkspace(ref);
  if (!workspace) {
    throw new AccountsError('not_found', `no workspace "${ref}": see "npx server workspaces list"`);
  }
  return workspace;
}

async function existingProject(store: AccountsStore, ref: string, workspaceId?: string): Promise<Project> {
  const project = await store.findProject(ref, workspaceId);
  if (!project) throw new AccountsError('not_found', `no project "${ref}": see "npx server projects list"`);
  return project;
}

/** Adds the accounts commands (and the global `--accounts-db` option if missing) to `program`. */
export function registerAccountCommands(program: Command, io: CliIo = consoleIo): void {
  if (!program.options.some((option) => option.long === '--accounts-db')) {
    program.option(
      '--accounts-db <file>',
      'accounts store, an SQLite file created when missing (env ACCOUNTS_DB, default ./accounts.sqlite)',
    );
  }

  /** Runs `body` with the store open; a failure prints `<program>: <message>` and exits 1. */
  const withStore =
    <A extends unknown[]>(body: (store: AccountsStore, ...args: A) => Promise<void>) =>
    async (...args: unknown[]): Promise<void> => {
      const command = args[args.length - 1] as Command;
      let store: AccountsStore | undefined;
      try {
        const { accountsDb } = command.optsWithGlobals<{ accountsDb?: string }>();
        const settings = loadSettings(process.env, accountsDb ? { ACCOUNTS_DB: accountsDb } : {});
        store = openConfiguredAccountsStore(settings);
        await body(store, ...(args as A));
      } catch (error) {
        io.err(`${program.name()}: ${(error as Error).message}`);
        io.fail(1);
      } finally {
        await store?.close();
      }
    };

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

  const plans = program
    .command('plans')
    .description('List and set plans: requests per minute, monthly quota and largest page per workspace.');

  const freeFromSettings = (): Plan => {
    const settings = loadSettings(process.env);
    return {
      name: DEFAULT_PLAN,
      requestsPerMinute: settings.FREE_REQUESTS_PER_MINUTE,
      monthlyQuota: settings.FREE_MONTHLY_QUOTA,
      maxPageSize: settings.FREE_MAX_PAGE_SIZE,
    };
  };

  plans
    .command('list')
    .description('List the plans with their limits (the Free plan from the FREE_* settings).')
    .action(
      withStore(async (store) => {
        const rows = [freeFromSettings(), ...(await store.listPlans())].map((p) => [
          p.name,
          String(p.requestsPerMinute),
          String(p.monthlyQuota),
          String(p.maxPageSize),
          p.name === DEFAULT_PLAN ? 'settings' : 'plan table',
        ]);
        for (const line of formatTable(['PLAN', 'PER MINUTE', 'PER MONTH', 'MAX PAGE', 'FROM'], rows))
          io.out(line);
      }),
    );

  plans
    .command('set')
    .description('Create or change a plan (not "free": its limits are the FREE_* settings).')
    .argument('<name>', 'plan name: lowercase letters, digits, - and _')
    .requiredOption('--per-minute <n>', 'requests per minute per workspace', wholeNumber)
    .requiredOption('--per-month <n>', 'requests per UTC month per workspace', wholeNumber)
    .option('--max-page <n>', 'largest page (limit) of a paged lookup, 1 to 1000; default 1000', wholeNumber)
    .action(
      withStore(
        async (store, name: string, options: { perMinute: number; perMonth: number; maxPage?: number }) => {
          const plan = await store.upsertPlan({
            name,
            requestsPerMinute: options.perMinute,
            monthlyQuota: options.perMonth,
            maxPageSize: options.maxPage ?? 1000,
          });
          io.out(
            `plan ${plan.name}: ${plan.requestsPerMinute} requests per minute, ${plan.monthlyQuota} per month, pages up to ${plan.maxPageSize}`,
          );
        },
      ),
    );

  const members = program
    .command('members')
    .description(`Workspace members and their roles (${MEMBER_ROLES.join(', ')}), for the console.`);

  members
    .command('add')
    .description("Add a member to a workspace by e-mail address, or change a member's role.")
    .argument('<workspace>', 'workspace name or id')
    .argument('<email>', 'e-mail address the member signs in with')
    .option('--role <role>', `${MEMBER_ROLES.join(', ')}; default member`, 'member')
    .action(
      withStore(async (store, ref: string, email: string, options: { role: string }) => {
        const workspace = await existingWorkspace(store, ref);
        const member = await store.addMember(
          workspace.id,
          email,
          options.role as (typeof MEMBER_ROLES)[number],
        );
        io.out(`${member.email} is ${member.role} of workspace "${workspace.name}"`);
      }),
    );

  members
    .command('list')
    .description('List the members of a workspace.')
    .argument('<workspace>', 'workspace name or id')
    .action(
      withStore(async (store, ref: string) => {
        const workspace = await existingWorkspace(store, ref);
        const all = await store.listMembers(workspace.id);
        if (all.length === 0) {
          io.out(`no members: add one with "npx server members add ${workspace.name} <email> --role owner"`);
          return;
        }
        for (const line of formatTable(
          ['EMAIL', 'ROLE', 'SINCE'],
          all.map((m) => [m.email, m.role, shortIso(m.createdAt)]),
        )) {
          io.out(line);
        }
      }),
    );

  members
    .command('remove')
    .description('Remove a member from a workspace.')
    .argument('<workspace>', 'workspace name or id')
    .argument('<email>', 'e-mail address of the member')
    .action(
      withStore(async (store, ref: string, email: string) => {
        const workspace = await existingWorkspace(store, ref);
        await store.removeMember(workspace.id, email);
        io.out(`removed ${email.trim().toLowerCase()} from workspace "${workspace.name}"`);
      }),
    );

  program
    .command('usage')
    .description(
      'Report counted requests of a UTC month per workspace (against its plan quota) and per project (against its cap).',
    )
    .option('--month <YYYY-MM>', 'month to report; default the current one', monthArg)
    .option('--workspace <name>', 'only this workspace (name or id)')
    .action(
      withStore(async (store, options: { month?: string; workspace?: string }) => {
        const month = options.month ?? usageMonth();
        const only = options.workspace ? await existingWorkspace(store, options.workspace) : undefined;
        const workspaceList = only ? [only] : await store.listWorkspaces();
        const projectList = await store.listProjects({ workspaceId: only?.id });
        const usage = await store.listUsage(month, { workspaceId: only?.id });
        const used = (scope: string, id: string) =>
          usage.find((u) => u.scope === scope && u.id === id)?.used ?? 0;
        const free = freeFromSettings();
        const tablePlans = new Map((await store.listPlans()).map((p) => [p.name, p]));
        const rows: string[][] = [];
        for (const w of workspaceList) {
          const planName = effectivePlan(w);
          const plan = planName === DEFAULT_PLAN ? free : (tablePlans.get(planName) ?? free);
          const n = used('workspace', w.id);
          rows.push([
            w.name,
            '',
            planName,
            String(n),
            String(plan.monthlyQuota),
            String(Math.max(0, plan.monthlyQuota - n)),
          ]);
          for (const p of projectList.filter((x) => x.workspaceId === w.id)) {
            const m = used('project', p.id);
            const cap = p.monthlyCap;
            rows.push([
              w.name,
              p.name,
              '',
              String(m),
              cap === null ? 'no cap' : String(cap),
              cap === null ? '' : String(Math.max(0, cap - m)),
            ]);
          }
        }
        io.out(`usage in ${month} (UTC)`);
        for (const line of formatTable(['WORKSPACE', 'PROJECT', 'PLAN', 'USED', 'LIMIT', 'REMAINING'], rows))
          io.out(line);
      }),
    );
}
