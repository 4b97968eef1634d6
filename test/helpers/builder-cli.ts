/**
 * The built `bin/builder.js` run as an operator runs it (run `npx tsc -p tsconfig.json` first), a
 * local mirror of the publishers for it (FEED_MIRROR maps https://host/path to <mirror>/host/path),
 * and the builder's metrics file read back: for the quality-gate tests.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parsePrometheus } from './prometheus.js';

/** The repository root, from the sources (tsx) or the build (dist/test/helpers). */
export const ROOT = (() => {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  while (!fs.existsSync(path.join(dir, 'package.json'))) dir = path.dirname(dir);
  return dir;
})();

export interface BuilderRun {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Runs bin/builder.js with `args` (the mirror keeps answering meanwhile: the child is not awaited synchronously). */
export function runBuilder(args: string[], env: Record<string, string> = {}): Promise<BuilderRun> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [path.join(ROOT, 'bin/builder.js'), ...args], {
      env: { ...process.env, ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('exit', (status) => resolve({ status, stdout, stderr }));
  });
}

export interface Mirror {
  /** The FEED_MIRROR value. */
  url: string;
  /** Serves `body` at https://<host/path> (as `/<host/path>` on the mirror), with an ETag of its bytes. */
  serve(hostPath: string, body: Buffer | string): void;
}

/** A mirror on 127.0.0.1 (any path not served answers 404), closed at teardown. */
export async function startMirror(t: { teardown(fn: () => unknown): void }): Promise<Mirror> {
  const bodies = new Map<string, Buffer>();
  const server = http.createServer((req, res) => {
    const body = bodies.get(req.url ?? '');
    if (!body) return void res.writeHead(404).end();
    const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
    if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
    res.writeHead(200, { etag, 'content-type': 'application/octet-stream' }).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    serve: (hostPath, body) => bodies.set(`/${hostPath}`, Buffer.from(body)),
  };
}

/** The value of one sample of `<stateDir>/builder.prom` (0 when it is absent). */
export function builderMetric(stateDir: string, name: string, labels: Record<string, string>): number {
  const text = fs.readFileSync(path.join(stateDir, 'builder.prom'), 'utf8');
  const sample = parsePrometheus(text).samples.find(
    (s) =>
      s.name === name &&
      Object.keys(s.labels).length === Object.keys(labels).length &&
      Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return sample?.value ?? 0;
}
