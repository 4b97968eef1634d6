/**
 * `server backup` and `server restore` (accounts/backup.ts) on real files, through the commands:
 * what a backup file is, what a restore does to an older backup and to an existing store, and every
 * refusal with its message. Nothing is left half-written: no temporary file remains, a refused
 * command changes no file. Under load and served afterwards: backup-under-load.test.ts.
 */
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { ACCOUNTS_SCHEMA_VERSION, openAccountsStore } from '../../accounts/index.js';
import { createTestKey } from '../helpers/accounts.js';
import { fixtureText } from '../helpers/accounts-schema.js';
import { runServerCli } from '../helpers/server-cli.js';

/** A store with one workspace, project and key; returns the key. */
async function storeWithKey(file: string, workspace = 'acme'): Promise<string> {
  const store = openAccountsStore(file);
  try {
    return (await createTestKey(store, { workspace })).key;
  } finally {
    await store.close();
  }
}

const filesIn = (dir: string) => fs.readdirSync(dir).sort();
const bytes = (file: string) => fs.readFileSync(file);

async function verifies(file: string, key: string): Promise<boolean> {
  const store = openAccountsStore(file);
  try {
    return (await store.verifyKey(key)) !== null;
  } finally {
    await store.close();
  }
}

function fromFixture(t: Test, version: number): string {
  const file = path.join(t.testdir({}), `v${version}.sqlite`);
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.exec(fixtureText(version, 'sqlite'));
  db.close();
  return file;
}

t.test('a backup is one checked file; the store it copied is not changed', async (t) => {
  const dir = t.testdir({});
  const live = path.join(dir, 'accounts.sqlite');
  const key = await storeWithKey(live);
  const server = openAccountsStore(live); // a server holding the store open, as in production
  t.teardown(() => server.close());
  const to = path.join(dir, 'backups', 'nightly.sqlite');
  const run = await runServerCli(live, 'backup', '--to', to);
  t.equal(run.code, 0, run.err);
  t.match(
    run.out,
    new RegExp(
      `^backed up ${live} to ${to}: accounts schema ${ACCOUNTS_SCHEMA_VERSION}, 1 workspace, 1 key, \\d+ KiB, one snapshot in \\d+ ms\\n$`,
    ),
  );
  t.same(filesIn(path.join(dir, 'backups')), ['nightly.sqlite'], 'one file: no -wal beside it, no temporary');
  const copy = new Database(to, { readonly: true });
  t.equal(copy.pragma('journal_mode', { simple: true }), 'delete');
  t.equal(copy.prepare('PRAGMA integrity_check').pluck().get(), 'ok');
  copy.close();
  t.ok(await verifies(to, key), 'its key verifies');

  const again = await runServerCli(live, 'backup', '--to', to);
  t.equal(again.code, 1);
  t.equal(
    again.err,
    `server: ${to} exists: a backup never replaces a file; choose a new name, e.g. accounts-$(date +%F).sqlite\n`,
  );
});

t.test('a backup of an older store stays older; its restore is migrated forward', async (t) => {
  const old = fromFixture(t, 2);
  const dir = path.dirname(old);
  const backup = path.join(dir, 'v2-backup.sqlite');
  t.equal((await runServerCli(old, 'backup', '--to', backup)).code, 0);
  const versions = (file: string) => {
    const db = new Database(file, { readonly: true });
    const list = db.prepare('SELECT version FROM schema_migration ORDER BY 1').pluck().all();
    db.close();
    return list;
  };
  t.same(versions(old), [1, 2], 'backup never migrates the store it copies');
  t.same(versions(backup), [1, 2]);

  const target = path.join(dir, 'restored', 'accounts.sqlite');
  const run = await runServerCli(target, 'restore', '--from', backup);
  t.equal(run.code, 0, run.err);
  t.equal(
    run.out,
    `restored ${backup} to ${target}: accounts schema 2 (migrated to ${ACCOUNTS_SCHEMA_VERSION}), 2 workspaces, 3 keys\n` +
      `serve it with ACCOUNTS_DB=${target} (or --accounts-db ${target})\n`,
  );
  t.same(versions(target).at(-1), ACCOUNTS_SCHEMA_VERSION);
  t.ok(await verifies(target, 'sk_FixtureAcmeWebCi00000000013sUDCS'), "the fixture's key verifies");
  t.same(filesIn(path.dirname(target)), ['accounts.sqlite'], 'no temporary left');
});

t.test('restore over an existing store: only with --replace, only unused, the old one kept', async (t) => {
  const dir = t.testdir({});
  const live = path.join(dir, 'accounts.sqlite');
  const oldKey = await storeWithKey(live, 'before');
  const other = path.join(dir, 'other.sqlite');
  const newKey = await storeWithKey(other, 'after');
  const backup = path.join(dir, 'other-backup.sqlite');
  t.equal((await runServerCli(other, 'backup', '--to', backup)).code, 0);
  const original = bytes(live);

  const plain = await runServerCli(live, 'restore', '--from', backup);
  t.equal(plain.code, 1);
  t.equal(
    plain.err,
    `server: ${live} exists: restore into a new file and point ACCOUNTS_DB (or --accounts-db) at it, or stop every ` +
      `server and admin command using ${live} and add --replace (its content is kept as ${live}.before-restore-<time>)\n`,
  );

  const server = openAccountsStore(live);
  await server.ping();
  const busy = await runServerCli(live, 'restore', '--from', backup, '--replace');
  t.equal(busy.code, 1);
  t.equal(
    busy.err,
    `server: ${live} is in use (a server, one of its workers or an admin command has it open): stop it, then run restore again\n`,
  );
  t.ok(await server.verifyKey(oldKey), 'the store in use kept working');
  await server.close();
  t.same(bytes(live), original, 'and was not changed');

  const replaced = await runServerCli(live, 'restore', '--from', backup, '--replace');
  t.equal(replaced.code, 0, replaced.err);
  const kept = /^the store it replaced is kept as (.*)$/m.exec(replaced.out)?.[1];
  t.match(kept, new RegExp(`^${live}\\.before-restore-\\d{8}T\\d{6}Z$`));
  t.ok(await verifies(live, newKey), "the backup's key verifies in the store");
  t.notOk(await verifies(live, oldKey), "the replaced store's key does not");
  t.ok(await verifies(kept!, oldKey), 'the replaced store is kept whole');
  t.same(
    filesIn(dir),
    ['accounts.sqlite', path.basename(kept!), 'other-backup.sqlite', 'other.sqlite'].sort(),
  );
});

t.test('refusals say what to do and change nothing', async (t) => {
  const dir = t.testdir({
    'garbage.sqlite': 'this is not a database, it is a text file of some length'.repeat(100),
  });
  const live = path.join(dir, 'accounts.sqlite');
  await storeWithKey(live);
  const notAccounts = path.join(dir, 'other-app.sqlite');
  new Database(notAccounts).exec('CREATE TABLE t (x)').close();
  const newer = path.join(dir, 'newer.sqlite');
  fs.copyFileSync(live, newer);
  const db = new Database(newer);
  db.prepare(
    `INSERT INTO schema_migration VALUES (?, 'from a later version', '2030-01-01T00:00:00.000Z')`,
  ).run(ACCOUNTS_SCHEMA_VERSION + 1);
  db.close();
  const listing = filesIn(dir);
  const target = path.join(dir, 'restored.sqlite');
  const missing = path.join(dir, 'missing.sqlite');

  const cases: Array<[string | null, string[], string]> = [
    [
      missing,
      ['backup', '--to', path.join(dir, 'b.sqlite')],
      `cannot back up ${missing}: unable to open database file`,
    ],
    [
      notAccounts,
      ['backup', '--to', path.join(dir, 'b.sqlite')],
      `${notAccounts} is not an accounts store (it has no schema_migration table)`,
    ],
    [target, ['restore', '--from', missing], `cannot restore from ${missing}: unable to open database file`],
    [
      target,
      ['restore', '--from', path.join(dir, 'garbage.sqlite')],
      `${path.join(dir, 'garbage.sqlite')} is not a readable SQLite database: file is not a database`,
    ],
    [
      target,
      ['restore', '--from', notAccounts],
      `${notAccounts} is not an accounts store (it has no schema_migration table)`,
    ],
    [
      target,
      ['restore', '--from', newer],
      `${newer} holds accounts schema version ${ACCOUNTS_SCHEMA_VERSION + 1}, newer than this program understands ` +
        `(${ACCOUNTS_SCHEMA_VERSION}): restore it with the ipscope version that made it, or upgrade ipscope`,
    ],
    [live, ['restore'], "error: required option '--from <file>' not specified"],
    [live, ['backup'], "error: required option '--to <file>' not specified"],
  ];
  for (const [file, args, message] of cases) {
    const run = await runServerCli(file, ...args);
    t.equal(run.code, 1, args.join(' '));
    t.equal(run.err, message.startsWith('error:') ? `${message}\n` : `server: ${message}\n`);
  }

  process.env.DATABASE_URL = 'postgres://postgres@127.0.0.1:5432/test';
  t.teardown(() => delete process.env.DATABASE_URL);
  for (const args of [
    ['backup', '--to', path.join(dir, 'b.sqlite')],
    ['restore', '--from', live],
  ]) {
    const run = await runServerCli(live, ...args);
    t.equal(run.code, 1);
    t.equal(
      run.err,
      'server: the accounts store is PostgreSQL (DATABASE_URL is set): back it up with pg_dump and restore it with ' +
        'pg_restore (docs/production.md, "Backups"); backup and restore copy the SQLite store (ACCOUNTS_DB)\n',
    );
  }
  t.same(filesIn(dir), listing, 'no file created, none left behind');
});
