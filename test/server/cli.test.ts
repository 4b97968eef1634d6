/** `bin/server.js serve --port 0` (the compiled CLI) listens, prints its address, stops on SIGTERM. */
import t from 'tap';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { request } from 'undici';
import { copyDemoRelease, ROOT } from '../helpers/demo-release.js';

t.test('server serve --port 0', async (t) => {
  t.ok(fs.existsSync(path.join(ROOT, 'dist/server/cli.js')), 'dist/server/cli.js exists (run npm run build)');
  const dir = t.testdir({});
  const { releasesDir, id } = copyDemoRelease(path.join(dir, 'releases'));
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin/server.js'),
      'serve',
      '--port',
      '0',
      '--host',
      '127.0.0.1',
      '--releases-dir',
      releasesDir,
      '--accounts-db',
      path.join(dir, 'accounts.sqlite'),
      '--log-level',
      'warn',
    ],
    { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, PORT: '1', WORKERS: '1' } },
  );
  t.teardown(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const lines = createInterface({ input: child.stdout });
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`no listening line within 20 s; stderr: ${stderr}`)),
      20_000,
    );
    lines.on('line', (line) => {
      const match = /^listening on (http:\/\/127\.0\.0\.1:(\d+))$/.exec(line);
      if (match && match[2] !== '0') {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('exit', (code) => reject(new Error(`exited with ${code} before listening; stderr: ${stderr}`)));
  });
  t.pass(`printed: listening on ${url}`);

  const health = await request(`${url}/health`);
  t.equal(health.statusCode, 200);
  const body = (await health.body.json()) as { status: string; release: { id: string } };
  t.equal(body.status, 'healthy');
  t.equal(body.release.id, id);
  const ping = await request(`${url}/v1/ping`);
  t.equal(ping.statusCode, 401);
  await ping.body.dump();

  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  child.kill('SIGTERM');
  t.equal(await exited, 0, 'SIGTERM closes gracefully with exit code 0');
});
