/**
 * At most 25 active keys per workspace, enforced atomically: 40 concurrent createKey calls from
 * four processes (each with its own connection to the same file) create exactly 25; revoked and
 * expired keys do not count; the limit is per workspace, not per project.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import {
  MAX_ACTIVE_KEYS_PER_WORKSPACE,
  keyStatus,
  openAccountsStore,
  type AccountsStore,
} from '../../accounts/index.js';
import { createTestKey } from '../helpers/accounts.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, '../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-limit-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
let counter = 0;

/**
 * One worker process (TypeScript through tsx, its own connection to the store): waits for "go" on
 * stdin, fires `count` createKey calls at once and prints {created, refused, errors} as JSON.
 * Inline rather than a file beside the tests, so that `tap test/accounts` does not run it.
 */
const WORKER = `
import readline from 'node:readline';
import { AccountsError, openAccountsStore } from ${JSON.stringify(pathToFileURL(path.join(root, 'accounts/index.ts')).href)};
const [file, projectId, count] = process.argv.slice(1);
const store = openAccountsStore(file);
const lines = readline.createInterface({ input: process.stdin });
process.stdout.write('ready\\n');
for await (const line of lines) if (line.trim() === 'go') break;
lines.close();
let created = 0;
let refused = 0;
const errors = [];
await Promise.all(
  Array.from({ length: Number(count) }, async (_, i) => {
    try {
      await store.createKey({ projectId, label: 'worker ' + process.pid + ' #' + i });
      created++;
    } catch (error) {
      if (error instanceof AccountsError && error.code === 'key_limit_reached') refused++;
      else errors.push(String(error));
    }
  }),
);
await store.close();
process.stdout.write(JSON.stringify({ created, refused, errors }) + '\\n');
`;
const freshFile = () => path.join(work, `case-${++counter}.sqlite`);

const activeCount = async (store: AccountsStore, workspaceId: string) =>
  (await store.listKeys({ workspaceId })).filter((k) => keyStatus(k) === 'active').length;

t.equal(MAX_ACTIVE_KEYS_PER_WORKSPACE, 25);

t.test('40 concurrent calls on one connection: 25 created, 15 refused with a clear error', async (t) => {
  const store = openAccountsStore(freshFile());
  t.teardown(() => store.close());
  const { projectId, workspaceId } = await createTestKey(store);
  const results = await Promise.allSettled(
    Array.from({ length: 39 }, (_, i) => store.createKey({ projectId, label: `k${i}` })),
  );
  t.equal(results.filter((r) => r.status === 'fulfilled').length, 24, '24 more besides the first');
  const refused = results.filter((r) => r.status === 'rejected');
  t.equal(refused.length, 15);
  t.match((refused[0] as PromiseRejectedResult).reason, {
    code: 'key_limit_reached',
    message: 'the workspace already has 25 active keys, the most allowed (25): revoke a key first',
  });
  t.equal(await activeCount(store, workspaceId), 25);
});

t.test('40 concurrent calls from 4 processes on the same file: exactly 25 created', async (t) => {
  const file = freshFile();
  const { projectId, workspaceId } = await createTestKey(file, { project: 'shared' });
  const store = openAccountsStore(file);
  t.teardown(() => store.close());
  // Revoke the helper's key so all 25 places are open to the workers.
  for (const k of await store.listKeys()) await store.revokeKey(k.id);

  const workers = Array.from({ length: 4 }, () => {
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', '--input-type=module', '--eval', WORKER, '--', file, projectId, '10'],
      { cwd: root, stdio: ['pipe', 'pipe', 'pipe'], env: { ...process.env, NODE_OPTIONS: '' } },
    );
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const ready = new Promise<void>((resolve, reject) => {
      child.stdout.on('data', () => stdout.includes('ready\n') && resolve());
      child.on('exit', (code) => reject(new Error(`worker exited (${code}) before ready: ${stderr}`)));
    });
    const done = new Promise<{ created: number; refused: number; errors: string[] }>((resolve, reject) =>
      child.on('exit', (code) => {
        if (code !== 0) reject(new Error(`worker exited with ${code}: ${stderr}`));
        else resolve(JSON.parse(stdout.split('\n')[1]!));
      }),
    );
    return { child, ready, done };
  });
  await Promise.all(workers.map((w) => w.ready));
  for (const w of workers) w.child.stdin.end('go\n');
  const results = await Promise.all(workers.map((w) => w.done));

  t.same(
    results.flatMap((r) => r.errors),
    [],
    'no other errors (no SQLITE_BUSY)',
  );
  t.equal(
    results.reduce((n, r) => n + r.created, 0),
    25,
    `created per worker: ${results.map((r) => r.created).join(', ')}`,
  );
  t.equal(
    results.reduce((n, r) => n + r.refused, 0),
    15,
  );
  t.equal(await activeCount(store, workspaceId), 25);
  t.equal((await store.listKeys({ workspaceId })).length, 26, 'plus the one revoked before');
});

t.test('revoked and expired keys do not count; the limit is per workspace', async (t) => {
  const store = openAccountsStore(freshFile());
  t.teardown(() => store.close());
  const now = new Date('2027-06-01T00:00:00Z');
  const ws = await store.createWorkspace({ name: 'full' });
  const p1 = await store.createProject({ workspaceId: ws.id, name: 'one' });
  const p2 = await store.createProject({ workspaceId: ws.id, name: 'two' });
  const soon = new Date(now.getTime() + 60_000);
  const created = [];
  for (let i = 0; i < 25; i++) {
    const project = i % 2 ? p1 : p2;
    const expiresAt = i < 3 ? soon : null;
    created.push(await store.createKey({ projectId: project.id, label: `k${i}`, expiresAt }, now));
  }
  await t.rejects(store.createKey({ projectId: p1.id, label: 'over' }, now), { code: 'key_limit_reached' });
  await t.rejects(store.createKey({ projectId: p2.id, label: 'over' }, now), {
    code: 'key_limit_reached',
  });

  // Another workspace is not affected.
  const { key } = await createTestKey(store, { workspace: 'elsewhere' });
  t.ok(await store.verifyKey(key), 'another workspace still creates keys');

  // A revoked key frees one place.
  await store.revokeKey(created[10]!.record.id, now);
  t.ok(await store.createKey({ projectId: p1.id, label: 'after revoke' }, now));
  await t.rejects(store.createKey({ projectId: p1.id, label: 'over' }, now), { code: 'key_limit_reached' });

  // Once the three expiring keys have expired, three more fit, and no more.
  const later = new Date(soon.getTime() + 1);
  for (let i = 0; i < 3; i++) {
    t.ok(await store.createKey({ projectId: p2.id, label: `after expiry ${i}` }, later));
  }
  await t.rejects(store.createKey({ projectId: p2.id, label: 'over' }, later), {
    code: 'key_limit_reached',
  });
});
