/** `builder list` and `builder inspect`: what releases exist and what one holds. */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { META_KEYS } from '../../shared/release-schema.js';
import { currentReleaseFile, listReleaseFiles } from './publish.js';

export function readReleaseMeta(file: string): Record<string, string> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return Object.fromEntries(
      (db.prepare(`SELECT key, value FROM meta`).all() as Array<{ key: string; value: string }>).map((r) => [
        r.key,
        r.value,
      ]),
    );
  } finally {
    db.close();
  }
}

export function listReleases(releasesDir: string, out: (line: string) => void = console.log): void {
  const files = listReleaseFiles(releasesDir);
  if (files.length === 0) {
    out(`no releases in ${releasesDir}: run "npx builder release" first`);
    return;
  }
  const current = currentReleaseFile(releasesDir);
  for (const name of files) {
    const file = path.join(releasesDir, name);
    const meta = readReleaseMeta(file);
    const size = (fs.statSync(file).size / 1048576).toFixed(1);
    const mark = current && path.basename(current) === name ? '*' : ' ';
    out(`${mark} ${meta[META_KEYS.releaseId]}  built ${meta[META_KEYS.builtAt]}  ${size} MiB  ${file}`);
  }
}

export function resolveRelease(releasesDir: string, release?: string): string {
  if (!release) {
    const current = currentReleaseFile(releasesDir);
    if (!current) throw new Error(`no current release in ${releasesDir}: run "npx builder release" first`);
    return current;
  }
  if (fs.existsSync(release)) return release;
  const file = path.join(releasesDir, `${release}.sqlite`);
  if (!fs.existsSync(file))
    throw new Error(`no release ${release} in ${releasesDir} (see "npx builder list")`);
  return file;
}

export function inspectRelease(
  releasesDir: string,
  release?: string,
  out: (line: string) => void = console.log,
): void {
  const file = resolveRelease(releasesDir, release);
  const meta = readReleaseMeta(file);
  const json = (key: string) => JSON.parse(meta[key] ?? 'null') as unknown;
  out(
    JSON.stringify(
      {
        file,
        release: { id: meta[META_KEYS.releaseId], built_at: meta[META_KEYS.builtAt] },
        schema_version: Number(meta[META_KEYS.schemaVersion]),
        coverage: json(META_KEYS.coverage),
        counts: json(META_KEYS.counts),
        sources: json(META_KEYS.sources),
        attribution: json(META_KEYS.attribution),
      },
      null,
      2,
    ),
  );
}
