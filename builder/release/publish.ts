/**
 * Publishing a release atomically:
 *   1. take releases/.lock (a second builder refuses with a clear message);
 *   2. remove leftovers of an earlier interrupted run (.tmp-* files, CURRENT temp files);
 *   3. build into releases/.tmp-<id>.sqlite, check it (quick_check, schema, row counts), fsync;
 *   4. rename it to releases/<id>.sqlite and fsync the directory;
 *   5. write CURRENT.tmp, fsync, rename over CURRENT, fsync the directory.
 * A process killed at any point leaves CURRENT naming the last good, complete release.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { META_KEYS, RELEASE_SCHEMA_VERSION, RELEASE_TABLES } from '../../shared/release-schema.js';
import { releaseIdFor } from '../../shared/time.js';

export const CURRENT_FILE = 'CURRENT';
const LOCK_FILE = '.lock';
const TMP_PREFIX = '.tmp-';

export class BuilderBusyError extends Error {}

/** Seam for tests: the steps that touch the disk in the publish sequence. */
export interface PublishHooks {
  /** Called between steps with the step's name (tests kill the process here). */
  afterStep?: (step: string) => void;
}

export function fsyncPath(p: string, directory = false): void {
  const fd = fs.openSync(p, directory ? 'r' : 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the releases directory's lock; returns its release function. */
export function acquireLock(releasesDir: string): () => void {
  fs.mkdirSync(releasesDir, { recursive: true });
  const lockPath = path.join(releasesDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = fs.openSync(lockPath, 'wx');
      fs.writeSync(fd, `${process.pid}\n`);
      fs.closeSync(fd);
      return () => {
        try {
          fs.unlinkSync(lockPath);
        } catch {
          // already gone
        }
      };
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      const pid = Number(fs.readFileSync(lockPath, 'utf8').trim());
      if (Number.isInteger(pid) && pid > 0 && processAlive(pid) && pid !== process.pid) {
        throw new BuilderBusyError(
          `another builder (pid ${pid}) is working in ${releasesDir}; wait for it to finish ` +
            `(its lock is ${lockPath}; remove that file only if process ${pid} is gone)`,
        );
      }
      fs.rmSync(lockPath, { force: true }); // stale lock of a killed builder
    }
  }
  throw new BuilderBusyError(`could not take the lock ${lockPath}`);
}

/** Removes what an interrupted builder left behind. Call with the lock held. */
export function cleanLeftovers(releasesDir: string): string[] {
  const removed: string[] = [];
  for (const name of fs.readdirSync(releasesDir)) {
    if (name.startsWith(TMP_PREFIX) || name.startsWith(`${CURRENT_FILE}.tmp`)) {
      fs.rmSync(path.join(releasesDir, name), { force: true });
      removed.push(name);
    }
  }
  return removed;
}

/** A release id not yet used in the directory (one second later when this second's is taken). */
export function nextReleaseId(releasesDir: string, now: number): { id: string; builtAt: number } {
  let t = now;
  while (fs.existsSync(path.join(releasesDir, `${releaseIdFor(t)}.sqlite`))) t++;
  return { id: releaseIdFor(t), builtAt: t };
}

export function tempReleasePath(releasesDir: string, id: string): string {
  return path.join(releasesDir, `${TMP_PREFIX}${id}.sqlite`);
}

/** Checks a built release file before it may be published; throws with what is wrong. */
export function checkReleaseFile(file: string, expectedId?: string): Record<string, number> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    // quick_check: every page, record and b-tree order, in one pass over the file (6 s for a
    // 1.4 GB release, against 50 s for integrity_check, which also looks up every row in each
    // index; the indexes are SQLite's own, built by CREATE INDEX). See docs/decisions/0011.
    db.pragma('cache_size = -262144');
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(`${file}: quick_check says ${String(check)}`);
    const tables = new Set(
      db.prepare(`SELECT name FROM sqlite_master WHERE type = 'table'`).pluck().all() as string[],
    );
    for (const t of Object.keys(RELEASE_TABLES)) {
      if (!tables.has(t)) throw new Error(`${file}: table ${t} is missing`);
    }
    const meta = new Map(
      (db.prepare(`SELECT key, value FROM meta`).all() as Array<{ key: string; value: string }>).map((r) => [
        r.key,
        r.value,
      ]),
    );
    if (meta.get(META_KEYS.schemaVersion) !== String(RELEASE_SCHEMA_VERSION)) {
      throw new Error(
        `${file}: schema version ${meta.get(META_KEYS.schemaVersion)}, expected ${RELEASE_SCHEMA_VERSION}`,
      );
    }
    if (expectedId && meta.get(META_KEYS.releaseId) !== expectedId) {
      throw new Error(`${file}: release id ${meta.get(META_KEYS.releaseId)}, expected ${expectedId}`);
    }
    const expected = JSON.parse(meta.get(META_KEYS.counts) ?? '{}') as Record<string, number>;
    for (const [table, count] of Object.entries(expected)) {
      const actual = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
      if (actual !== count) throw new Error(`${file}: table ${table} has ${actual} rows, meta says ${count}`);
    }
    return expected;
  } finally {
    db.close();
  }
}

/** Moves a checked temp file into place and points CURRENT at it. */
export function publishFile(
  releasesDir: string,
  tempFile: string,
  id: string,
  hooks: PublishHooks = {},
): string {
  fsyncPath(tempFile);
  hooks.afterStep?.('fsynced');
  const finalName = `${id}.sqlite`;
  fs.renameSync(tempFile, path.join(releasesDir, finalName));
  fsyncPath(releasesDir, true);
  hooks.afterStep?.('renamed');
  swapCurrent(releasesDir, finalName, hooks);
  return path.join(releasesDir, finalName);
}

export function swapCurrent(releasesDir: string, fileName: string, hooks: PublishHooks = {}): void {
  const tmp = path.join(releasesDir, `${CURRENT_FILE}.tmp-${process.pid}`);
  const fd = fs.openSync(tmp, 'w');
  try {
    fs.writeSync(fd, `${fileName}\n`);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  hooks.afterStep?.('current-written');
  fs.renameSync(tmp, path.join(releasesDir, CURRENT_FILE));
  fsyncPath(releasesDir, true);
  hooks.afterStep?.('current-swapped');
}

/** The file CURRENT names, or null when no release was published yet. */
export function currentReleaseFile(releasesDir: string): string | null {
  try {
    const name = fs.readFileSync(path.join(releasesDir, CURRENT_FILE), 'utf8').trim();
    return name ? path.join(releasesDir, name) : null;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
}

export function listReleaseFiles(releasesDir: string): string[] {
  if (!fs.existsSync(releasesDir)) return [];
  return fs
    .readdirSync(releasesDir)
    .filter((n) => /^\d{8}T\d{6}Z\.sqlite$/.test(n))
    .sort();
}
