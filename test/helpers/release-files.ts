/** Release files for swap tests: a copy of a release under another id, CURRENT rewritten atomically. */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';

/** Copies `<dir>/<fromFile>` to `<dir>/<id>.sqlite` with its meta release_id set to `id`. */
export function copyReleaseAs(dir: string, fromFile: string, id: string): string {
  const name = `${id}.sqlite`;
  const tmp = path.join(dir, `.${name}.tmp`);
  fs.copyFileSync(path.join(dir, fromFile), tmp);
  const db = new Database(tmp);
  db.prepare(`UPDATE meta SET value = ? WHERE key = 'release_id'`).run(id);
  db.close();
  fs.renameSync(tmp, path.join(dir, name));
  return name;
}

/** Points CURRENT at `name` the way the builder does: write a temp file, then rename over. */
export function pointCurrentAt(dir: string, name: string): void {
  const tmp = path.join(dir, `.CURRENT.${process.pid}.tmp`);
  fs.writeFileSync(tmp, `${name}\n`);
  fs.renameSync(tmp, path.join(dir, 'CURRENT'));
}
