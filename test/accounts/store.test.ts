/**
 * The SQLite accounts store on real files: schema and WAL mode, only hashes stored, verifyKey for
 * every key state, workspace/project rules, revocation, plan lapse, and refusal of newer files.
 */
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  ACCOUNTS_SCHEMA_VERSION,
  AccountsError,
  hashKey,
  keyStatus,
  openAccountsStore,
  type AccountsStore,
} from '../../accounts/index.js';
import { createTestKey } from '../helpers/accounts.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-store-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
let counter = 0;
const freshFile = () => path.join(work, `case-${++counter}`, 'nested', 'accounts.sqlite');

async function withStore(fn: (store: AccountsStore, file: string) => Promise<void>): Promise<void> {
  const file = freshFile();
  const store = openAccountsStore(file);
  try {
    await fn(store, file);
  } finally {
    await store.close();
  }
}

const rejectsWith = async (t: Test, promise: Promise<unknown>, code: string, message: RegExp) => {
  await t.rejects(promise, { name: 'AccountsError', code, message });
};

t.test('creates the file and its directory, WAL, migrations table, reopen is idempotent', async (t) => {
  const file = freshFile();
  t.notOk(fs.existsSync(path.dirname(file)));
  const store = openAccountsStore(file);
  await store.ping();
  await store.close();
  await store.close(); // twice is harmless
  await t.rejects(store.ping(), /not open/, 'ping throws once the store is closed');

  const again = openAccountsStore(file);
  await again.ping();
  await again.close();

  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  t.equal(db.pragma('journal_mode', { simple: true }), 'wal');
  t.same(
    db.prepare('SELECT version FROM schema_migration').pluck().all(),
    Array.from({ length: ACCOUNTS_SCHEMA_VERSION }, (_, i) => i + 1),
    'each migration recorded once',
  );
  const tables = db
    .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
    .pluck()
    .all();
  t.same(tables, [
    'api_key',
    'console_session',
    'member',
    'plan',
    'project',
    'recovery_code',
    'schema_migration',
    'sign_in_link',
    'usage',
    'usage_day',
    'user',
    'watch_entry',
    'watch_event',
    'watch_run',
    'webhook_attempt',
    'webhook_delivery',
    'webhook_endpoint',
    'workspace',
  ]);
  const columns = (table: string) =>
    db.prepare(`SELECT name, "notnull", dflt_value FROM pragma_table_info(?)`).all(table) as {
      name: string;
      notnull: number;
      dflt_value: string | null;
    }[];
  t.same(
    columns('workspace').map((c) => c.name),
    ['id', 'name', 'plan', 'plan_expires_at', 'created_at'],
  );
  t.equal(columns('workspace').find((c) => c.name === 'plan')?.dflt_value, "'free'");
  t.same(
    columns('api_key').map((c) => [c.name, c.notnull]),
    [
      ['id', 0],
      ['project_id', 1],
      ['label', 1],
      ['hash', 1],
      ['display', 1],
      ['created_at', 1],
      ['expires_at', 0],
      ['revoked_at', 0],
      ['last_used_at', 0],
      ['created_by', 0],
    ],
  );
  t.same(
    columns('member').map((c) => c.name),
    ['workspace_id', 'user_id', 'role', 'created_at'],
  );
});

t.test('a file from a newer program is refused, and so is a file that is not a database', async (t) => {
  const file = freshFile();
  (await openAccountsStore(file)).close();
  const db = new Database(file);
  db.prepare(`INSERT INTO schema_migration VALUES (?, 'from the future', '2030-01-01T00:00:00.000Z')`).run(
    ACCOUNTS_SCHEMA_VERSION + 1,
  );
  db.close();
  t.throws(() => openAccountsStore(file), {
    code: 'unsupported_schema',
    message: new RegExp(
      `accounts schema version ${ACCOUNTS_SCHEMA_VERSION + 1} is newer than this program understands \\(${ACCOUNTS_SCHEMA_VERSION}\\): upgrade ipscope`,
    ),
  });

  const junk = path.join(work, 'junk.sqlite');
  fs.writeFileSync(junk, 'this is not an SQLite file, just text that is long enough to have a header');
  t.throws(
    () => openAccountsStore(junk),
    /cannot open accounts store .*junk\.sqlite: file is not a database/,
  );
});

t.test('only the hash of a key is stored', async (t) => {
  const file = freshFile();
  const store = openAccountsStore(file);
  const keys = [];
  for (let i = 0; i < 5; i++) keys.push(await createTestKey(store, { label: `key ${i}` }));
  // Read the bytes while open (main file and WAL) and after close (checkpointed into the file).
  const bytesOpen = Buffer.concat(
    [file, `${file}-wal`].filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f)),
  );
  await store.close();
  t.notOk(fs.existsSync(`${file}-wal`), 'the WAL is checkpointed and removed on close');
  const bytesClosed = fs.readFileSync(file);
  for (const { key, record } of keys) {
    const body = key.slice(3);
    t.notOk(bytesOpen.includes(body), 'key body not in the open files');
    t.notOk(bytesClosed.includes(body), 'key body not in the closed file');
    t.notOk(bytesClosed.includes(key.slice(7, -4)), 'not even the undisplayed middle');
    t.ok(bytesClosed.includes(hashKey(key)), 'its hash is');
    t.ok(bytesClosed.includes(record.display), 'and its display form');
  }
  const db = new Database(file, { readonly: true });
  t.teardown(() => db.close());
  const row = db.prepare('SELECT * FROM api_key WHERE id = ?').get(keys[0]!.keyId) as Record<string, unknown>;
  t.equal(row.hash, hashKey(keys[0]!.key));
  t.match(row.display, /^sk_[0-9A-Za-z]{4}…[0-9A-Za-z]{4}$/);
});

t.test('verifyKey', async (t) =>
  withStore(async (store) => {
    const now = new Date('2027-03-01T12:00:00Z');
    const ws = await store.createWorkspace({ name: 'acme', plan: 'pro' });
    const capped = await store.createProject({ workspaceId: ws.id, name: 'capped', monthlyCap: 5000 });
    const plain = await store.createProject({ workspaceId: ws.id, name: 'plain' });

    const active = await store.createKey({ projectId: capped.id, label: 'active' }, now);
    const other = await store.createKey({ projectId: plain.id, label: 'other' }, now);
    const expiring = await store.createKey(
      { projectId: plain.id, label: 'expiring', expiresAt: new Date('2027-03-02T00:00:00Z') },
      now,
    );
    const revoked = await store.createKey({ projectId: plain.id, label: 'revoked' }, now);
    await store.revokeKey(revoked.record.id, now);

    t.same(await store.verifyKey(active.key, now), {
      keyId: active.record.id,
      projectId: capped.id,
      workspaceId: ws.id,
      plan: 'pro',
      projectMonthlyCap: 5000,
    });
    t.same(await store.verifyKey(other.key, now), {
      keyId: other.record.id,
      projectId: plain.id,
      workspaceId: ws.id,
      plan: 'pro',
      projectMonthlyCap: null,
    });
    t.ok(await store.verifyKey(active.key), 'default now');

    t.ok(await store.verifyKey(expiring.key, new Date('2027-03-01T23:59:59Z')), 'valid before expiry');
    t.equal(await store.verifyKey(expiring.key, new Date('2027-03-02T00:00:00Z')), null, 'expired at expiry');
    t.equal(await store.verifyKey(revoked.key, now), null, 'revoked');

    const unknown = (await import('../../accounts/index.js')).generateKey();
    t.equal(await store.verifyKey(unknown, now), null, 'well-formed but unknown');

    const typo = active.key.slice(0, 10) + (active.key[10] === 'a' ? 'b' : 'a') + active.key.slice(11);
    for (const token of [
      '',
      'sk_',
      typo,
      active.key.toLowerCase(),
      `${active.key} `,
      active.key.slice(0, -1),
    ]) {
      t.equal(await store.verifyKey(token, now), null, `malformed ${JSON.stringify(token)}`);
    }

    t.test('malformed tokens are refused without reading the store', async (t) => {
      const file = freshFile();
      const closed = openAccountsStore(file);
      await closed.close();
      t.equal(await closed.verifyKey(typo), null, 'bad checksum: answered by a closed store');
      t.equal(await closed.verifyKey('nonsense'), null);
      await t.rejects(closed.verifyKey(unknown), /not open/, 'a well-formed key does read the store');
    });
  }),
);

t.test('a lapsed plan falls back to free', async (t) =>
  withStore(async (store) => {
    const ws = await store.createWorkspace({
      name: 'lapsing',
      plan: 'pro',
      planExpiresAt: new Date('2027-01-01T00:00:00Z'),
    });
    const { key } = await createTestKey(store, { workspace: ws.name });
    t.equal((await store.verifyKey(key, new Date('2026-12-31T23:59:59Z')))?.plan, 'pro');
    t.equal((await store.verifyKey(key, new Date('2027-01-01T00:00:00Z')))?.plan, 'free');
    t.equal((await store.createWorkspace({ name: 'new' })).plan, 'free', 'new workspaces are on free');
  }),
);

t.test('revocation is immediate, irreversible, and a second revoke says so', async (t) =>
  withStore(async (store) => {
    const { key, keyId } = await createTestKey(store);
    t.ok(await store.verifyKey(key));
    const when = new Date('2027-05-05T05:05:05Z');
    const revoked = await store.revokeKey(keyId, when);
    t.same(revoked.revokedAt, when);
    t.equal(keyStatus(revoked), 'revoked');
    t.equal(await store.verifyKey(key), null);
    for (let i = 0; i < 2; i++) {
      await rejectsWith(
        t,
        store.revokeKey(keyId),
        'already_revoked',
        new RegExp(`^key ${keyId} was already revoked at 2027-05-05T05:05:05Z$`),
      );
    }
    t.same((await store.getKey(keyId))?.revokedAt, when, 'first revocation time kept');
    await rejectsWith(
      t,
      store.revokeKey('key_doesnotexist'),
      'not_found',
      /no key with id "key_doesnotexist"/,
    );
    t.equal(await store.getKey('key_doesnotexist'), null);
  }),
);

t.test('key records, listing and filters', async (t) =>
  withStore(async (store) => {
    const a = await createTestKey(store, { workspace: 'one', project: 'p1', label: 'first' });
    const b = await createTestKey(store, { workspace: 'one', project: 'p2', label: 'second' });
    const c = await createTestKey(store, { workspace: 'two', project: 'p1', label: 'third' });
    const expiresAt = new Date(Date.now() + 86_400_000);
    const d = await createTestKey(store, { workspace: 'two', project: 'p1', label: 'fourth', expiresAt });

    const record = await store.getKey(a.keyId);
    t.match(record, {
      id: a.keyId,
      projectId: a.projectId,
      workspaceId: a.workspaceId,
      label: 'first',
      display: `${a.key.slice(0, 7)}…${a.key.slice(-4)}`,
      createdAt: Date,
      expiresAt: null,
      revokedAt: null,
      lastUsedAt: null,
    });
    t.notOk(JSON.stringify(record).includes(a.key.slice(3)), 'a record never carries the key');
    t.same((await store.getKey(d.keyId))?.expiresAt, expiresAt);

    const ids = (list: { id: string }[]) => list.map((k) => k.id);
    t.same(ids(await store.listKeys()), [a.keyId, b.keyId, c.keyId, d.keyId]);
    t.same(ids(await store.listKeys({ workspaceId: a.workspaceId })), [a.keyId, b.keyId]);
    t.same(ids(await store.listKeys({ projectId: c.projectId })), [c.keyId, d.keyId]);
    t.same(ids(await store.listKeys({ workspaceId: a.workspaceId, projectId: c.projectId })), []);
  }),
);

t.test('workspaces and projects', async (t) =>
  withStore(async (store) => {
    const ws = await store.createWorkspace({ name: '  spaced  ' });
    t.equal(ws.name, 'spaced', 'names are trimmed');
    t.match(ws.id, /^ws_[0-9a-z]{16}$/);
    t.same(await store.findWorkspace(ws.id), ws);
    t.same(await store.findWorkspace('spaced'), ws);
    t.equal(await store.findWorkspace('missing'), null);

    await store.createWorkspace({ name: 'twin' });
    await store.createWorkspace({ name: 'twin' });
    await rejectsWith(
      t,
      store.findWorkspace('twin'),
      'ambiguous',
      /2 workspaces are named "twin".*use the workspace id/,
    );

    const project = await store.createProject({ workspaceId: ws.id, name: 'api', monthlyCap: 100 });
    t.match(project, { workspaceId: ws.id, name: 'api', monthlyCap: 100 });
    t.match(project.id, /^prj_[0-9a-z]{16}$/);
    t.same(await store.findProject(project.id), project);
    t.same(await store.findProject('api'), project);
    t.same(await store.findProject('api', ws.id), project);
    t.equal(await store.findProject(project.id, 'ws_other'), null, 'id outside the given workspace');
    await rejectsWith(
      t,
      store.createProject({ workspaceId: ws.id, name: 'api' }),
      'already_exists',
      /already has a project named "api"/,
    );
    const other = await store.createWorkspace({ name: 'other' });
    const twin = await store.createProject({ workspaceId: other.id, name: 'api' });
    await rejectsWith(
      t,
      store.findProject('api'),
      'ambiguous',
      /2 projects in different workspaces are named "api"/,
    );
    t.same(await store.findProject('api', other.id), twin);
    t.same(
      (await store.listProjects({ workspaceId: other.id })).map((p) => p.id),
      [twin.id],
    );
    t.equal((await store.listProjects()).length, 2);
    t.equal((await store.listWorkspaces()).length, 4);

    await rejectsWith(
      t,
      store.createProject({ workspaceId: 'ws_nope', name: 'x' }),
      'not_found',
      /no workspace with id "ws_nope"/,
    );
    await rejectsWith(
      t,
      store.createProject({ workspaceId: ws.id, name: 'neg', monthlyCap: -1 }),
      'invalid_input',
      /monthly cap must not be negative/,
    );
    await rejectsWith(
      t,
      store.createWorkspace({ name: ' ' }),
      'invalid_input',
      /workspace name must not be empty/,
    );
    await rejectsWith(
      t,
      store.createWorkspace({ name: 'x'.repeat(101) }),
      'invalid_input',
      /at most 100 characters/,
    );
  }),
);

t.test('createKey input', async (t) =>
  withStore(async (store) => {
    const { projectId } = await createTestKey(store);
    await rejectsWith(
      t,
      store.createKey({ projectId, label: '' }),
      'invalid_input',
      /label must not be empty/,
    );
    await rejectsWith(
      t,
      store.createKey({ projectId, label: 'a\nb' }),
      'invalid_input',
      /control characters/,
    );
    const now = new Date('2027-01-01T00:00:00Z');
    await rejectsWith(
      t,
      store.createKey({ projectId, label: 'past', expiresAt: new Date('2026-12-31T00:00:00Z') }, now),
      'invalid_input',
      /expiry 2026-12-31T00:00:00.000Z is not in the future/,
    );
    await rejectsWith(
      t,
      store.createKey({ projectId, label: 'bad date', expiresAt: new Date('nonsense') }),
      'invalid_input',
      /./,
    );
    await rejectsWith(
      t,
      store.createKey({ projectId: 'prj_nope', label: 'x' }),
      'not_found',
      /no project with id/,
    );
    t.ok(new AccountsError('not_found', 'x') instanceof Error);
  }),
);
