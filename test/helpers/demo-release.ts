/**
 * The demo release (committed real feed excerpts + generated observation rounds), built once per
 * set of inputs through the real CLI as `make demo` does and shared by the tests that serve or
 * query it. Tests get their own copy of the releases directory so they can swap and delete freely.
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The repository root, from the .ts source or from its compiled copy under dist/. */
export const ROOT = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
})();

function hashInputs(): string {
  const hash = createHash('sha256');
  const walk = (dir: string) => {
    for (const entry of fs
      .readdirSync(dir, { withFileTypes: true })
      .sort((a, b) => a.name.localeCompare(b.name))) {
      const p = path.join(dir, entry.name);
      if (entry.isDirectory()) walk(p);
      else if (entry.isFile()) hash.update(p).update(fs.readFileSync(p));
    }
  };
  for (const dir of ['demo', 'test/fixtures/feeds', 'dist/builder', 'dist/shared'])
    walk(path.join(ROOT, dir));
  return hash.digest('hex').slice(0, 16);
}

function run(args: string[], env: NodeJS.ProcessEnv): string {
  const r = spawnSync(args[0]!, args.slice(1), { encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

/** Directory holding the built demo release (CURRENT + one file). Do not modify it: copy it. */
export function demoReleasesDir(): string {
  const cache = path.join(os.tmpdir(), `ipscope-demo-release-${hashInputs()}`);
  if (fs.existsSync(path.join(cache, 'releases', 'CURRENT'))) return path.join(cache, 'releases');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ipscope-demo-build-'));
  const stateDir = path.join(work, 'state');
  const releasesDir = path.join(work, 'releases');
  const env = { ...process.env, ASN_MAPPING: 'ip-location-db' };
  const builder = (...args: string[]) =>
    run(
      [
        process.execPath,
        path.join(ROOT, 'bin/builder.js'),
        '--state-dir',
        stateDir,
        '--releases-dir',
        releasesDir,
        ...args,
      ],
      env,
    );
  run(['bash', path.join(ROOT, 'demo/import-feeds.sh'), stateDir, releasesDir], env);
  builder(
    'import',
    'ip-location-db',
    path.join(ROOT, 'demo/data/asn/asn-ipv4.csv'),
    path.join(ROOT, 'demo/data/asn/asn-ipv6.csv'),
  );
  builder('import', 'tranco', path.join(ROOT, 'demo/data/seed.csv'));
  const rounds = fs
    .readdirSync(path.join(ROOT, 'demo/data/observations'))
    .filter((f) => f.endsWith('.ndjson'))
    .sort()
    .map((f) => path.join(ROOT, 'demo/data/observations', f));
  builder('import', 'observations', ...rounds);
  builder('release', '--demo');
  fs.rmSync(path.join(work, 'state'), { recursive: true, force: true });
  try {
    fs.renameSync(work, cache);
  } catch {
    // Another test process published the same build first; use theirs.
    fs.rmSync(work, { recursive: true, force: true });
  }
  return path.join(cache, 'releases');
}

/** A private copy of the demo releases directory; returns its path and the release file name. */
export function copyDemoRelease(target: string): { releasesDir: string; file: string; id: string } {
  const source = demoReleasesDir();
  fs.mkdirSync(target, { recursive: true });
  for (const name of fs.readdirSync(source))
    fs.copyFileSync(path.join(source, name), path.join(target, name));
  const file = fs.readFileSync(path.join(target, 'CURRENT'), 'utf8').trim();
  return { releasesDir: target, file, id: file.replace(/\.sqlite$/, '') };
}
