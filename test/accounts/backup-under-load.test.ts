/**
 * `server backup` while a real server answers a bench-api-style load (many concurrent keyed
 * lookups over keep-alive connections, several keys and workspaces, every answer counted), taken
 * by a separate process as an operator would; `server restore` into a new accounts file; a server
 * started on it serves every key.
 *
 * What is guaranteed, and checked here for every usage row (monthly per workspace and project,
 * daily per key): the backup holds the store as one transaction saw it, so each count is at least
 * the one written before the backup began and at most the one written when it ended. Requests
 * answered after the last usage write before the backup are not in it (at most USAGE_FLUSH_MS of
 * them, like a restart after SIGKILL); nothing is counted twice. Keys, revocations, workspaces and
 * projects are those of that moment. The load sees no error while the backup runs.
 */
import t from 'tap';
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { Pool } from 'undici';
import { openAccountsStore, usageMonth } from '../../accounts/index.js';
import { createTestKey, type TestKey } from '../helpers/accounts.js';
import { ROOT } from '../helpers/demo-release.js';
import { startMeteredServer } from '../helpers/limits.js';
import { runServerCli } from '../helpers/server-cli.js';

/** Free-plan limits the load never reaches: the meter counts every answer and refuses none. */
const LIMITS = {
  FREE_REQUESTS_PER_MINUTE: 1_000_000_000,
  FREE_MONTHLY_QUOTA: 1_000_000_000,
  USAGE_FLUSH_MS: 50,
};
const CONNECTIONS = 16;
const PATHS = ['/v1/ip/23.228.249.10', '/v1/domain/example.com/hosting', '/v1/ip/2606:4700::6810:84e5'];

type Usage = Map<string, number>;

/** Every usage count of an accounts file, read beside the server (`month:scope:id`, `day:key:day`). */
function usageOf(file: string): Usage {
  const db = new Database(file, { readonly: true });
  try {
    const usage: Usage = new Map();
    for (const r of db.prepare('SELECT scope, id, month, used FROM usage').all() as Array<
      Record<string, string>
    >)
      usage.set(`month:${r.scope}:${r.id}:${r.month}`, Number(r.used));
    for (const r of db.prepare('SELECT key_id, day, used FROM usage_day').all() as Array<
      Record<string, string>
    >)
      usage.set(`day:${r.key_id}:${r.day}`, Number(r.used));
    return usage;
  } finally {
    db.close();
  }
}

/** `server --accounts-db <file> backup --to <to>` in a process of its own (TypeScript through tsx). */
function backupInAnotherProcess(file: string, to: string): Promise<{ code: number; output: string }> {
  const child = spawn(
    process.execPath,
    [
      '--import',
      'tsx',
      '--input-type=module',
      '--eval',
      `import { main } from './server/cli.ts'; await main(['node', 'server', ...process.argv.slice(1)]);`,
      '--',
      '--accounts-db',
      file,
      'backup',
      '--to',
      to,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
  );
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code: code ?? -1, output })));
}

t.test('a backup made under load restores to a store that serves every key', async (t) => {
  const work = t.testdir({});
  const live = path.join(work, 'accounts.sqlite');
  const setup = openAccountsStore(live);
  const keys: TestKey[] = [];
  for (const workspace of ['north', 'south', 'east', 'west']) {
    for (const label of ['web', 'cron']) keys.push(await createTestKey(setup, { workspace, label }));
  }
  const revoked = await createTestKey(setup, { workspace: 'north', label: 'old' });
  await setup.revokeKey(revoked.keyId);
  await setup.close();

  const server = await startMeteredServer(t, { ACCOUNTS_DB: live, ...LIMITS });
  const pool = new Pool(server.url, { connections: CONNECTIONS });
  t.teardown(() => pool.close());
  const answered = new Map<string, number>(keys.map((k) => [k.keyId, 0]));
  const failures: string[] = [];
  let total = 0;
  let stop = false;
  const loop = async (n: number) => {
    for (let i = n; !stop; i += CONNECTIONS) {
      const key = keys[i % keys.length]!;
      const { statusCode, body } = await pool.request({
        method: 'GET',
        path: PATHS[i % PATHS.length]!,
        headers: { authorization: `Bearer ${key.key}` },
      });
      const text = await body.text();
      total += 1;
      if (statusCode === 200) answered.set(key.keyId, answered.get(key.keyId)! + 1);
      else failures.push(`${statusCode} ${text.slice(0, 200)}`);
    }
  };
  const loadStarted = performance.now();
  const loops = Array.from({ length: CONNECTIONS }, (_, n) => loop(n));

  await new Promise((resolve) => setTimeout(resolve, 1_000));
  const backupFile = path.join(work, 'backups', 'accounts-backup.sqlite');
  const before = usageOf(live);
  const atStart = total;
  const backupStarted = performance.now();
  const backup = await backupInAnotherProcess(live, backupFile);
  const during = total - atStart;
  const backupSeconds = ((performance.now() - backupStarted) / 1000).toFixed(1);
  const after = usageOf(live);
  await new Promise((resolve) => setTimeout(resolve, 300));
  stop = true;
  await Promise.all(loops);
  const loadSeconds = ((performance.now() - loadStarted) / 1000).toFixed(1);
  await server.close();

  t.equal(backup.code, 0, backup.output);
  t.match(
    backup.output,
    new RegExp(
      `^backed up ${live} to ${backupFile}: accounts schema \\d+, 4 workspaces, 9 keys, \\d+ KiB, one snapshot in \\d+ ms\\n$`,
    ),
  );
  t.same(failures, [], `no failed request among ${total} in ${loadSeconds} s`);
  t.ok(during > 0, `${during} requests answered in the ${backupSeconds} s of the backup process`);
  t.ok(before.size > 0, 'usage had been written before the backup began');

  // Every answer counted once in the live store, once the server wrote its last counts.
  const final = usageOf(live);
  const month = usageMonth();
  const day = new Date().toISOString().slice(0, 10);
  for (const workspaceId of new Set(keys.map((k) => k.workspaceId))) {
    const expected = keys
      .filter((k) => k.workspaceId === workspaceId)
      .reduce((n, k) => n + answered.get(k.keyId)!, 0);
    t.equal(
      final.get(`month:workspace:${workspaceId}:${month}`),
      expected,
      `workspace ${workspaceId}: every answer`,
    );
  }
  for (const k of keys)
    t.equal(final.get(`day:${k.keyId}:${day}`), answered.get(k.keyId), `key ${k.keyId}: every answer`);

  const restoredFile = path.join(work, 'restored', 'accounts.sqlite');
  const restore = await runServerCli(restoredFile, 'restore', '--from', backupFile);
  t.equal(restore.code, 0, restore.err);
  t.match(restore.out, `restored ${backupFile} to ${restoredFile}: accounts schema`);
  const restored = usageOf(restoredFile);
  for (const row of before.keys()) t.ok(restored.has(row), `${row}: written before the backup, in it`);
  for (const [row, count] of restored) {
    const low = before.get(row) ?? 0;
    const high = after.get(row) ?? -1;
    t.ok(count >= low && count <= high, `${row}: ${low} <= ${count} <= ${high}`);
  }

  // A server on the restored file: every key answers, its counts continue from the restored ones.
  const second = await startMeteredServer(t, { ACCOUNTS_DB: restoredFile, ...LIMITS });
  const sent = new Map<string, number>();
  for (const k of keys) {
    const r = await second.get('/v1/ip/23.228.249.10', { key: k.key });
    t.equal(r.status, 200, `key ${k.keyId} answers`);
    const n = (sent.get(k.workspaceId) ?? 0) + 1;
    sent.set(k.workspaceId, n);
    t.equal(
      r.headers['x-quota-used'],
      String((restored.get(`month:workspace:${k.workspaceId}:${month}`) ?? 0) + n),
      'the restored count, plus this server',
    );
  }
  t.equal(
    (await second.get('/v1/ip/23.228.249.10', { key: revoked.key })).status,
    401,
    'a revoked key stays revoked',
  );
});
