/**
 * The accounts commands: in process (a commander program with registerAccountCommands, output
 * captured) for every command and error, and end to end by spawning the compiled CLI (bin/server.js
 * once it exists, a stand-in program until then; run `npx tsc -p tsconfig.json` first).
 */
import t from 'tap';
import { Command } from 'commander';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { openAccountsStore, registerAccountCommands } from '../../accounts/index.js';
import { parseExpiry } from '../../accounts/cli.js';
import { runServerCli } from '../helpers/server-cli.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-cli-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
let counter = 0;
const freshFile = () => path.join(work, `case-${++counter}`, 'accounts.sqlite');

const cli = runServerCli;

const keyOf = (out: string) => /^key: (sk_\S+)$/m.exec(out)?.[1];
const keyIdOf = (out: string) => /^created key (key_[0-9a-z]+) /m.exec(out)?.[1];

t.test('keys create: creates workspace and project, prints the key once', async (t) => {
  const file = freshFile();
  const first = await cli(file, 'keys', 'create', '--project', 'web', '--label', 'billing cron');
  t.equal(first.code, 0, first.err);
  t.equal(first.err, '');
  const lines = first.out.trimEnd().split('\n');
  t.match(lines[0], /^created workspace "default" \(ws_[0-9a-z]{16}\)$/);
  t.match(lines[1], /^created project "web" \(prj_[0-9a-z]{16}\) in workspace "default"$/);
  t.match(lines[2], /^created key key_[0-9a-z]{16} "billing cron" in default\/web$/);
  t.equal(lines[3], 'expires: never');
  t.match(lines[4], /^key: sk_[0-9A-Za-z]{32}$/);
  const key = keyOf(first.out)!;
  t.equal(
    lines[5],
    `This is the only time the key is shown: store it now. Afterwards it appears as ${key.slice(0, 7)}…${key.slice(-4)}.`,
  );
  t.equal(lines.length, 6);

  const store = openAccountsStore(file);
  t.teardown(() => store.close());
  t.match(await store.verifyKey(key), { keyId: keyIdOf(first.out), plan: 'free', projectMonthlyCap: null });

  // Second key in the same project: nothing created but the key; with an expiry.
  const second = await cli(
    file,
    'keys',
    'create',
    '--project',
    'web',
    '--label',
    'ci',
    '--expires',
    '2099-12-31',
  );
  t.equal(second.code, 0, second.err);
  t.notMatch(second.out, /created (workspace|project)/);
  t.match(second.out, /^expires: 2099-12-31T00:00:00Z$/m);
  t.not(keyOf(second.out), key);

  const list = await cli(file, 'keys', 'list');
  t.equal(list.code, 0);
  t.notOk(list.out.includes(key), 'list never shows a key');
  t.notOk(list.out.includes(keyOf(second.out)!));
  const rows = list.out.trimEnd().split('\n');
  t.match(rows[0], /^ID\s+WORKSPACE\s+PROJECT\s+LABEL\s+KEY\s+CREATED\s+EXPIRES\s+STATUS$/);
  t.match(
    rows[1],
    new RegExp(
      `^${keyIdOf(first.out)}\\s+default\\s+web\\s+billing cron\\s+${key.slice(0, 7)}…${key.slice(-4)}\\s+\\d{4}-\\d\\d-\\d\\dT\\d\\d:\\d\\d:\\d\\dZ\\s+never\\s+active$`,
    ),
  );
  t.match(rows[2], /\s+ci\s+.*2099-12-31T00:00:00Z\s+active$/);
  t.equal(rows.length, 3);
});

t.test('keys revoke, status column, revoke twice', async (t) => {
  const file = freshFile();
  const created = await cli(file, 'keys', 'create', '--project', 'web', '--label', 'old');
  const keyId = keyIdOf(created.out)!;
  const revoked = await cli(file, 'keys', 'revoke', keyId);
  t.equal(revoked.code, 0, revoked.err);
  t.match(revoked.out, new RegExp(`^revoked key ${keyId} \\(sk_\\w{4}…\\w{4}, "old"\\) at \\S+Z\\n$`));
  const store = openAccountsStore(file);
  t.teardown(() => store.close());
  t.equal(await store.verifyKey(keyOf(created.out)!), null);
  t.match((await cli(file, 'keys', 'list')).out, /\s+revoked\n$/);

  const again = await cli(file, 'keys', 'revoke', keyId);
  t.equal(again.code, 1);
  t.equal(again.out, '');
  t.match(again.err, new RegExp(`^server: key ${keyId} was already revoked at \\S+\\n$`));
  const unknown = await cli(file, 'keys', 'revoke', 'key_nope');
  t.equal(unknown.code, 1);
  t.equal(unknown.err, 'server: no key with id "key_nope"\n');

  // A key that expired an hour ago (created "two hours ago") shows as expired.
  const project = await store.findProject('web');
  const hour = 3_600_000;
  await store.createKey(
    { projectId: project!.id, label: 'brief', expiresAt: new Date(Date.now() - hour) },
    new Date(Date.now() - 2 * hour),
  );
  t.match((await cli(file, 'keys', 'list')).out, /^key_\S+.*\s+brief\s+.*\s+expired$/m);
});

t.test('workspaces and projects commands, filters', async (t) => {
  const file = freshFile();
  t.equal(
    (await cli(file, 'workspaces', 'list')).out,
    'no workspaces: create one with "npx server workspaces create <name>"\n',
  );
  t.equal(
    (await cli(file, 'projects', 'list')).out,
    'no projects: create one with "npx server projects create <name>"\n',
  );
  t.equal(
    (await cli(file, 'keys', 'list')).out,
    'no keys: create one with "npx server keys create --project <name> --label <label>"\n',
  );

  const ws = await cli(file, 'workspaces', 'create', 'acme');
  t.match(ws.out, /^created workspace "acme" \(ws_[0-9a-z]{16}\), plan free\n$/);
  const dup = await cli(file, 'workspaces', 'create', 'acme');
  t.equal(dup.code, 1);
  t.equal(dup.err, 'server: a workspace named "acme" already exists\n');

  const project = await cli(file, 'projects', 'create', 'api', '--workspace', 'acme', '--cap', '100000');
  t.match(
    project.out,
    /^created project "api" \(prj_[0-9a-z]{16}\) in workspace "acme", monthly cap 100000\n$/,
  );
  const dupProject = await cli(file, 'projects', 'create', 'api', '--workspace', 'acme');
  t.equal(dupProject.code, 1);
  t.match(dupProject.err, /already has a project named "api"/);
  const badCap = await cli(file, 'projects', 'create', 'x', '--cap', '-5');
  t.equal(badCap.code, 1);
  t.match(badCap.err, /expected a whole number of requests/);
  const inDefault = await cli(file, 'projects', 'create', 'site');
  t.match(
    inDefault.out,
    /^created workspace "default" .*\ncreated project "site" .* in workspace "default", no monthly cap\n$/,
  );

  // keys create without --workspace finds "api" in acme; with --workspace creates where told.
  const k1 = await cli(file, 'keys', 'create', '--project', 'api', '--label', 'a');
  t.match(k1.out, /^created key \S+ "a" in acme\/api$/m);
  const k2 = await cli(file, 'keys', 'create', '--project', 'api', '--workspace', 'beta', '--label', 'b');
  t.match(k2.out, /^created workspace "beta"/);
  t.match(k2.out, /^created key \S+ "b" in beta\/api$/m);
  const ambiguous = await cli(file, 'keys', 'create', '--project', 'api', '--label', 'c');
  t.equal(ambiguous.code, 1);
  t.match(ambiguous.err, /^server: 2 projects in different workspaces are named "api": name the workspace/);

  const byWorkspace = await cli(file, 'keys', 'list', '--workspace', 'acme');
  t.equal(byWorkspace.out.trimEnd().split('\n').length, 2);
  t.match(byWorkspace.out, /acme\s+api\s+a\s+/);
  const byProject = await cli(file, 'keys', 'list', '--project', 'api', '--workspace', 'beta');
  t.match(byProject.out, /beta\s+api\s+b\s+/);
  t.equal(byProject.out.trimEnd().split('\n').length, 2);
  const missing = await cli(file, 'keys', 'list', '--workspace', 'nope');
  t.equal(missing.code, 1);
  t.equal(missing.err, 'server: no workspace "nope": see "npx server workspaces list"\n');

  const workspaces = (await cli(file, 'workspaces', 'list')).out.trimEnd().split('\n');
  t.match(workspaces[0], /^ID\s+NAME\s+PLAN\s+PROJECTS\s+ACTIVE KEYS\s+CREATED$/);
  t.match(workspaces[1], /^ws_\S+\s+acme\s+free\s+1\s+1\/25\s+\S+Z$/);
  t.match(workspaces[2], /^ws_\S+\s+default\s+free\s+1\s+0\/25\s+\S+Z$/);
  t.match(workspaces[3], /^ws_\S+\s+beta\s+free\s+1\s+1\/25\s+\S+Z$/);
  const projects = (await cli(file, 'projects', 'list', '--workspace', 'acme')).out.trimEnd().split('\n');
  t.match(projects[0], /^ID\s+WORKSPACE\s+NAME\s+MONTHLY CAP\s+ACTIVE KEYS\s+CREATED$/);
  t.match(projects[1], /^prj_\S+\s+acme\s+api\s+100000\s+1\s+\S+Z$/);
  t.equal(projects.length, 2);
});

t.test('argument errors exit 1 with a message', async (t) => {
  const file = freshFile();
  const noLabel = await cli(file, 'keys', 'create', '--project', 'web');
  t.equal(noLabel.code, 1);
  t.match(noLabel.err, /required option '--label <label>' not specified/);
  const badDate = await cli(file, 'keys', 'create', '--project', 'web', '--label', 'x', '--expires', 'soon');
  t.equal(badDate.code, 1);
  t.match(badDate.err, /expected an ISO 8601 date or timestamp/);
  const past = await cli(
    file,
    'keys',
    'create',
    '--project',
    'web',
    '--label',
    'x',
    '--expires',
    '2001-01-01',
  );
  t.equal(past.code, 1);
  t.match(past.err, /^server: expiry 2001-01-01T00:00:00.000Z is not in the future/);
  const emptyLabel = await cli(file, 'keys', 'create', '--project', 'web', '--label', ' ');
  t.equal(emptyLabel.code, 1);
  t.equal(emptyLabel.err, 'server: label must not be empty\n');
  const badFile = await cli(path.join(work, 'not-a-db'), 'keys', 'list');
  fs.writeFileSync(path.join(work, 'not-a-db'), 'x'.repeat(200));
  const notDb = await cli(path.join(work, 'not-a-db'), 'keys', 'list');
  t.equal(badFile.code, 0, 'a missing file is created');
  t.equal(notDb.code, 1);
  t.match(notDb.err, /^server: cannot open accounts store .*not-a-db: file is not a database/);
});

t.test('parseExpiry', async (t) => {
  const now = new Date('2027-01-01T00:00:00Z');
  t.same(parseExpiry('2027-02-03', now), new Date('2027-02-03T00:00:00Z'));
  t.same(parseExpiry('2027-02-03T04:05:06+02:00', now), new Date('2027-02-03T02:05:06Z'));
  t.same(parseExpiry('90d', now), new Date('2027-04-01T00:00:00Z'));
  for (const bad of ['2027-02-30', '2027-2-3', 'tomorrow', '2027-02-03T04:05:06', '-1d']) {
    t.throws(() => parseExpiry(bad, now), /expected an ISO 8601 date/, bad);
  }
});

t.test('every command has a description; the option is not added twice', async (t) => {
  const program = new Command('server').option('--accounts-db <file>', 'defined by the server CLI');
  registerAccountCommands(program);
  t.equal(program.options.filter((o) => o.long === '--accounts-db').length, 1);
  const walk = (command: Command): Command[] => [command, ...command.commands.flatMap(walk)];
  const all = walk(program).slice(1);
  t.same(
    all.map((c) => c.name()),
    [
      ...['keys', 'create', 'list', 'revoke'],
      ...['workspaces', 'create', 'list', 'plan'],
      ...['projects', 'create', 'list', 'cap'],
      ...['plans', 'list', 'set', 'watch-limit'],
      ...['members', 'add', 'list', 'remove'],
      'usage',
      ...['watch', 'add', 'list', 'remove'],
      ...['webhooks', 'add', 'list', 'log', 'test', 'redeliver', 'rotate', 'enable', 'disable', 'remove'],
      'backup',
      'restore',
    ],
  );
  for (const command of all) t.ok(command.description().length > 10, `${command.name()} has a description`);
});

t.test('end to end: the compiled CLI', async (t) => {
  // bin/server.js once it exists; until then a stand-in `server` program with only these commands.
  const bin = path.join(root, 'bin/server.js');
  const compiled = path.join(root, 'dist/accounts/index.js');
  const driver = `
import { Command } from ${JSON.stringify(import.meta.resolve('commander'))};
import { registerAccountCommands } from ${JSON.stringify(pathToFileURL(compiled).href)};
const program = new Command('server');
registerAccountCommands(program);
await program.parseAsync(process.argv.slice(1), { from: 'user' });
`;
  const entry = fs.existsSync(bin) ? [bin] : ['--input-type=module', '--eval', driver, '--'];
  if (!fs.existsSync(compiled)) {
    t.fail(`${path.relative(root, compiled)} is missing: run "npx tsc -p tsconfig.json" first`);
    return;
  }
  const file = freshFile();
  const run = (env: NodeJS.ProcessEnv, ...args: string[]) => {
    const r = spawnSync(process.execPath, [...entry, ...args], {
      encoding: 'utf8',
      cwd: work,
      // Without tap's NODE_OPTIONS (process tracking): a plain `node`, as an operator runs it.
      env: { ...process.env, NODE_OPTIONS: '', ...env },
    });
    return { out: r.stdout, err: r.stderr, code: r.status };
  };
  const created = run({}, '--accounts-db', file, 'keys', 'create', '--project', 'web', '--label', 'e2e');
  t.equal(created.code, 0, created.err);
  const key = keyOf(created.out)!;
  t.match(key, /^sk_[0-9A-Za-z]{32}$/);
  t.match(created.out, /not shown again|only time the key is shown/);

  // ACCOUNTS_DB from the environment works as well as the flag.
  const listed = run({ ACCOUNTS_DB: file }, 'keys', 'list');
  t.equal(listed.code, 0, listed.err);
  t.match(listed.out, new RegExp(`${keyIdOf(created.out)}\\s+default\\s+web\\s+e2e\\s+${key.slice(0, 7)}…`));
  t.notOk(listed.out.includes(key));

  const revoked = run({ ACCOUNTS_DB: file }, 'keys', 'revoke', keyIdOf(created.out)!);
  t.equal(revoked.code, 0, revoked.err);
  const again = run({ ACCOUNTS_DB: file }, 'keys', 'revoke', keyIdOf(created.out)!);
  t.equal(again.code, 1);
  t.match(again.err, /already revoked/);
  const missing = run({}, '--accounts-db', file, 'keys', 'create', '--label', 'x');
  t.equal(missing.code, 1);
  t.match(missing.err, /required option '--project <name>' not specified/);

  const help = run({}, 'keys', 'create', '--help');
  t.equal(help.code, 0);
  t.match(help.out, /Create an API key in a project/);
  t.match(help.out, /--expires <date>/);
});
