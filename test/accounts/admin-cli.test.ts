/**
 * The operators' commands of the compiled CLI for plans, caps, members and usage reports, on the
 * embedded accounts file and (with TEST_DATABASE_URL) on PostgreSQL through DATABASE_URL.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAccountsStore, usageMonth } from '../../accounts/index.js';
import { openPgAccountsStore } from '../../accounts/pg-store.js';
import { requireSharedStores, serverCli, uniqueNamespace } from '../helpers/limits.js';

const targets: Array<[string, (t: Test) => Record<string, string>]> = [
  [
    'embedded',
    () => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'admin-cli-'));
      return { ACCOUNTS_DB: path.join(dir, 'accounts.sqlite'), DATABASE_URL: '' };
    },
  ],
  [
    'postgresql',
    (t) => ({
      DATABASE_URL: requireSharedStores('database').databaseUrl,
      DATABASE_SCHEMA: uniqueNamespace(t, 'admincli').schema,
    }),
  ],
];

for (const [name, envFor] of targets) {
  t.test(name, async (t) => {
    const env: Record<string, string> = { FREE_MONTHLY_QUOTA: '500', ...envFor(t) };
    const run = (...args: string[]) => serverCli(args, env);

    t.match(await run('plans', 'list'), /free\s+60\s+500\s+100\s+settings/);
    t.match(
      await run('plans', 'set', 'pro', '--per-minute', '600', '--per-month', '1000000', '--max-page', '500'),
      /plan pro: 600 requests per minute, 1000000 per month, pages up to 500/,
    );
    await t.rejects(run('plans', 'set', 'free', '--per-minute', '1', '--per-month', '1'), /settings/);
    t.match(await run('plans', 'list'), /pro\s+600\s+1000000\s+500\s+plan table/);

    await run('keys', 'create', '--workspace', 'acme', '--project', 'web', '--label', 'k');
    t.match(await run('projects', 'cap', 'web', '250'), /monthly cap 250/);
    t.match(await run('projects', 'list'), /web\s+250/);
    t.match(
      await run('workspaces', 'plan', 'acme', 'pro', '--until', '2099-01-01'),
      /plan pro until 2099-01-01/,
    );
    await t.rejects(run('workspaces', 'plan', 'acme', 'gold'), /no plan "gold"/);
    t.match(
      await run('members', 'add', 'acme', 'Boss@Example.org', '--role', 'owner'),
      /boss@example.org is owner/,
    );
    t.match(await run('members', 'list', 'acme'), /boss@example.org\s+owner/);

    const store = env.DATABASE_URL
      ? openPgAccountsStore({ url: env.DATABASE_URL, schema: env.DATABASE_SCHEMA })
      : openAccountsStore(env.ACCOUNTS_DB!);
    const ws = (await store.findWorkspace('acme'))!;
    const project = (await store.findProject('web', ws.id))!;
    await store.addUsage([
      { scope: 'workspace', id: ws.id, month: usageMonth(), count: 42 },
      { scope: 'project', id: project.id, month: usageMonth(), count: 40 },
    ]);
    await store.close();
    const report = await run('usage', '--workspace', 'acme');
    t.match(report, new RegExp(`usage in ${usageMonth()} \\(UTC\\)`));
    t.match(report, /acme\s+pro\s+42\s+1000000\s+999958/);
    t.match(report, /acme\s+web\s+40\s+250\s+210/);
    t.match(await run('projects', 'cap', 'web', 'none'), /no monthly cap/);
    t.match(await run('members', 'remove', 'acme', 'boss@example.org'), /removed boss@example.org/);
  });
}
