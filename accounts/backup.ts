/**
 * Online backup and restore of the embedded accounts store (docs/decisions/0028-upgrades-and-backups.md).
 *
 * - A backup is SQLite's backup API run in one step (every page at once), so the copy is the store
 *   as one read transaction saw it: every transaction committed before it began, none after. In
 *   WAL mode that read blocks no writer, so servers keep answering and counting meanwhile. The copy
 *   is written under a temporary name, checked (integrity_check, an accounts store), switched to a
 *   self-contained file (no -wal beside it) and only then given its name, never over an existing
 *   file. The source is opened without migrating it: a backup never changes the store.
 * - A restore checks the backup the same way, copies it (the same API) under a temporary name
 *   beside the target, migrates the copy to this program's schema, and then gives it the target's
 *   name. A target that exists is replaced only when asked (`replace`), only when no other process
 *   has it open, and its previous content stays beside it as `<target>.before-restore-<time>`.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { ACCOUNTS_SCHEMA_VERSION } from './schema.js';
import { BUSY_TIMEOUT_MS, openAccountsStore } from './sqlite-store.js';

/** What the backup API copies per step after its first: every page, so the copy is one snapshot. */
const ALL_PAGES = 0x7fffffff;

/** What an accounts file holds. */
export interface AccountsFileSummary {
  /** Its newest migration. */
  schemaVersion: number;
  workspaces: number;
  keys: number;
  bytes: number;
}

export interface BackupResult extends AccountsFileSummary {
  file: string;
  ms: number;
}

export interface RestoreResult extends AccountsFileSummary {
  file: string;
  /** The schema the restored store has now (the backup's, migrated forward). */
  migratedTo: number;
  /** Where the replaced store's content was kept (replace only). */
  keptAs: string | null;
}

/** Copies the accounts store `source` to the new file `destination` while it is in use. */
export async function backupAccountsStore(source: string, destination: string): Promise<BackupResult> {
  const started = performance.now();
  const target = path.resolve(destination);
  if (fs.existsSync(target)) {
    throw new Error(
      `${destination} exists: a backup never replaces a file; choose a new name, e.g. accounts-$(date +%F).sqlite`,
    );
  }
  const db = openExisting(source, 'cannot back up', false);
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (!isAccountsStore(db)) throw notAccountsStore(source);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const part = temporaryBeside(target, 'part');
    try {
      await db.backup(part, { progress: () => ALL_PAGES });
      const summary = sealCopy(part, `the copy of ${source}`);
      // A link never replaces: if the name was taken meanwhile, this fails and the part is removed.
      fs.linkSync(part, target);
      syncDirectory(path.dirname(target));
      return { ...summary, file: target, ms: performance.now() - started };
    } finally {
      removeTemporary(part);
    }
  } finally {
    db.close();
  }
}

/** Makes `target` (an accounts store file) a copy of the backup `from`, migrated to this program's schema. */
export async function restoreAccountsStore(
  from: string,
  target: string,
  options: { replace: boolean; now?: Date },
): Promise<RestoreResult> {
  const file = path.resolve(target);
  // Reading a file in WAL mode (a copy of a live store) makes SQLite create an empty -wal and -shm
  // beside it even read-only: those are removed again.
  const leftovers = ['-wal', '-shm'].map((suffix) => `${from}${suffix}`).filter((f) => !fs.existsSync(f));
  const backup = openExisting(from, 'cannot restore from', true);
  try {
    const summary = summarise(backup, from);
    if (summary.schemaVersion > ACCOUNTS_SCHEMA_VERSION) {
      throw new Error(
        `${from} holds accounts schema version ${summary.schemaVersion}, newer than this program understands ` +
          `(${ACCOUNTS_SCHEMA_VERSION}): restore it with the ipscope version that made it, or upgrade ipscope`,
      );
    }
    const exists = fs.existsSync(file);
    if (exists && !options.replace) {
      throw new Error(
        `${target} exists: restore into a new file and point ACCOUNTS_DB (or --accounts-db) at it, or stop every ` +
          `server and admin command using ${target} and add --replace (its content is kept as ${target}.before-restore-<time>)`,
      );
    }
    if (!exists && fs.existsSync(`${file}-wal`)) {
      throw new Error(
        `${target}-wal exists without ${target}: it belongs to a store that is gone; move it away first`,
      );
    }
    if (exists) assertUnused(file, target);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    const part = temporaryBeside(file, 'restore');
    try {
      await backup.backup(part, { progress: () => ALL_PAGES });
      // Forward to this program's schema (and WAL mode) before it takes the target's name.
      await openAccountsStore(part).close();
      syncFile(part);
      let keptAs: string | null = null;
      if (exists) {
        keptAs = `${file}.before-restore-${stamp(options.now ?? new Date())}`;
        fs.linkSync(file, keptAs);
        fs.renameSync(part, file);
      } else {
        fs.linkSync(part, file);
      }
      syncDirectory(path.dirname(file));
      return { ...summary, file, migratedTo: ACCOUNTS_SCHEMA_VERSION, keptAs };
    } finally {
      removeTemporary(part);
    }
  } finally {
    backup.close();
    for (const f of leftovers)
      if (fs.existsSync(f) && (!f.endsWith('-wal') || fs.statSync(f).size === 0)) fs.rmSync(f);
  }
}

function openExisting(file: string, doing: string, readonly: boolean): Database.Database {
  try {
    return new Database(file, { fileMustExist: true, readonly });
  } catch (error) {
    throw new Error(`${doing} ${file}: ${(error as Error).message}`, { cause: error });
  }
}

function isAccountsStore(db: Database.Database): boolean {
  return (
    db.prepare(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migration'`).get() !==
    undefined
  );
}

const notAccountsStore = (file: string) =>
  new Error(`${file} is not an accounts store (it has no schema_migration table)`);

/** Checks `db` (an integrity check, then the accounts tables) and counts what it holds. */
function summarise(db: Database.Database, file: string): AccountsFileSummary {
  let problems: string[];
  try {
    problems = db.prepare('PRAGMA integrity_check').pluck().all() as string[];
  } catch (error) {
    throw new Error(`${file} is not a readable SQLite database: ${(error as Error).message}`, {
      cause: error,
    });
  }
  if (problems.join() !== 'ok') {
    throw new Error(
      `${file} is damaged (integrity_check: ${problems.slice(0, 3).join('; ')}): use another backup`,
    );
  }
  if (!isAccountsStore(db)) throw notAccountsStore(file);
  const count = (sql: string) => Number(db.prepare(sql).pluck().get() ?? 0);
  return {
    schemaVersion: count('SELECT max(version) FROM schema_migration'),
    workspaces: count('SELECT count(*) FROM workspace'),
    keys: count('SELECT count(*) FROM api_key'),
    bytes: fs.statSync(db.name).size,
  };
}

/** The finished copy: one file (rollback journal, not WAL), checked, on disk. */
function sealCopy(part: string, what: string): AccountsFileSummary {
  const copy = new Database(part);
  try {
    copy.pragma('journal_mode = DELETE');
    const summary = summarise(copy, what);
    return summary;
  } finally {
    copy.close();
    syncFile(part);
  }
}

/**
 * Refuses a target that something else has open: closing the last connection of a WAL database
 * checkpoints it and removes its -wal file, so a -wal left after this one closed is another's.
 */
function assertUnused(file: string, target: string): void {
  const db = openExisting(file, 'cannot replace', false);
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
  if (fs.existsSync(`${file}-wal`)) {
    throw new Error(
      `${target} is in use (a server, one of its workers or an admin command has it open): stop it, then run restore again`,
    );
  }
}

function temporaryBeside(file: string, kind: string): string {
  return path.join(path.dirname(file), `.${path.basename(file)}.${kind}-${process.pid}`);
}

function removeTemporary(file: string): void {
  for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(`${file}${suffix}`, { force: true });
}

function syncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function syncDirectory(dir: string): void {
  const fd = fs.openSync(dir, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/** `20261128T120000Z`. */
const stamp = (date: Date) => date.toISOString().replace(/[-:]|\.\d{3}/g, '');
