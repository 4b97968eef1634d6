/**
 * The console's static files (assets/), served by the server itself: read once at start, named by
 * a fingerprint of their content (`/static/console.3f2a9c1b.css`) and cached by browsers for a year;
 * a new build has new names, so nothing stale is ever served.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface Asset {
  path: string;
  type: string;
  body: Buffer;
}

const TYPES: Record<string, string> = {
  '.css': 'text/css; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
};

/** assets/ next to the source; from dist/ the one in the source tree (tsc copies no .css). */
function assetsDir(): string {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const candidates = [path.join(here, 'assets'), path.join(here, '../../console/assets')];
  const found = candidates.find((dir) => fs.existsSync(path.join(dir, 'console.css')));
  if (!found) throw new Error(`console assets not found in ${candidates.join(' or ')}`);
  return found;
}

export interface Assets {
  css: string;
  js: string;
  byPath: Map<string, Asset>;
}

export function loadAssets(): Assets {
  const dir = assetsDir();
  const byPath = new Map<string, Asset>();
  const load = (name: string) => {
    const body = fs.readFileSync(path.join(dir, name));
    const ext = path.extname(name);
    const fingerprint = createHash('sha256').update(body).digest('hex').slice(0, 12);
    const urlPath = `/static/${path.basename(name, ext)}.${fingerprint}${ext}`;
    byPath.set(urlPath, { path: urlPath, type: TYPES[ext]!, body });
    return urlPath;
  };
  return { css: load('console.css'), js: load('console.js'), byPath };
}
