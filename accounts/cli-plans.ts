/** Admin commands `plans list|set`, `members add|list|remove` and `usage` (registered by cli.ts). */
import { type Command } from 'commander';
import { loadSettings } from '../shared/config.js';
import { MEMBER_ROLES, type Plan } from './records.js';
import { DEFAULT_PLAN, effectivePlan, usageMonth } from './store.js';
import {
  type CliIo,
  monthArg,
  wholeNumber,
  shortIso,
  formatTable,
  existingWorkspace,
  type StoreRunner,
} from './cli-support.js';

export function registerPlanCommands(program: Command, withStore: StoreRunner, io: CliIo): void {
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
