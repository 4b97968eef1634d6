/**
 * `make demo`'s server half (scripts/demo.sh) on a copy of the demo release: it creates a key,
 * serves on PORT and prints the URL and key; then every curl line of the README's example block
 * runs as written (only the port differs) and answers JSON without an error. A restart keeps the
 * key; the demo workspace is on the plan "demo" (6,000 a minute), not Free.
 */
import t from 'tap';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyDemoRelease, ROOT } from './helpers/demo-release.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-'));
copyDemoRelease(path.join(work, 'releases'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));

/** Runs scripts/demo.sh until it prints its guide; returns what it printed and a stop function. */
async function startDemo(): Promise<{ printed: string; stop: () => Promise<void> }> {
  const demo = spawn('bash', [path.join(ROOT, 'scripts/demo.sh')], {
    cwd: ROOT,
    env: { ...process.env, DEMO_DIR: work, PORT: '0', LOG_LEVEL: 'warn' },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const exited = new Promise((resolve) => demo.once('exit', resolve));
  const stop = async () => {
    try {
      process.kill(-demo.pid!, 'SIGTERM');
    } catch {
      return; // already gone
    }
    await exited;
  };
  t.teardown(stop);
  const printed = await new Promise<string>((resolve, reject) => {
    let out = '';
    demo.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      if (/Ctrl-C stops the server/.test(out)) resolve(out);
    });
    demo.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    demo.on('exit', (code) => reject(new Error(`demo.sh exited ${code}:\n${out}`)));
  });
  return { printed, stop };
}

// The first start creates the key; a restart keeps it (issue 16).
const first = await startDemo();
const firstKey = /Key:\s+(sk_[A-Za-z0-9]+)/.exec(first.printed)?.[1];
await first.stop();
const { printed } = await startDemo();
const url = /API:\s+(http:\/\/127\.0\.0\.1:\d+)\/v1/.exec(printed)?.[1];
const key = /Key:\s+(sk_[A-Za-z0-9]+)/.exec(printed)?.[1];
t.ok(url, 'prints the API URL');
t.ok(key, 'prints the key');
t.equal(key, firstKey, 'the demo key survives a restart');
t.match(printed, 'Plan:  demo: 6,000 requests/minute, 10,000,000/month, pages up to 1,000');
t.equal((fs.statSync(path.join(work, 'demo.key')).mode & 0o777).toString(8), '600', 'key file is private');

const ping = spawnSync(
  'curl',
  ['-s', '-D', '-', '-o', '/dev/null', '-H', `Authorization: Bearer ${key}`, `${url}/v1/ping`],
  {
    encoding: 'utf8',
  },
);
t.match(ping.stdout, /\r\nx-ratelimit-limit: 6000\r\n/i, 'the demo plan, not Free');

const readme = fs.readFileSync(path.join(ROOT, 'README.md'), 'utf8');
const block =
  /<!-- demo-curl:start -->\n```sh\n([\s\S]*?)```\n<!-- demo-curl:end -->/.exec(readme)?.[1] ?? '';
const lines = block.split('\n').filter((l) => l.startsWith('curl '));
t.equal(lines.length, 7, 'the README has the curl examples');

for (const line of lines) {
  const command = line.replaceAll('http://127.0.0.1:8080', url!);
  const r = spawnSync('bash', ['-c', command], { encoding: 'utf8', env: { ...process.env, KEY: key } });
  t.equal(r.status, 0, `${line} exits 0`);
  const body = JSON.parse(r.stdout) as Record<string, unknown>;
  t.notOk('error' in body || 'detail' in body, `${line} answers without an error: ${r.stdout.slice(0, 200)}`);
  if (line.includes('/health')) t.equal(body.status, 'healthy');
  else if (line.includes('/v1/ping')) t.equal(body.ok, true);
  else t.same((body.release as { id?: string }).id?.length, 16, 'names the release that answered');
}

const mcp = /<!-- mcp-curl:start -->\n```sh\n([\s\S]*?)```\n<!-- mcp-curl:end -->/.exec(readme)?.[1] ?? '';
t.match(mcp, /^curl /, 'the README has the MCP example');
const call = spawnSync('bash', ['-c', mcp.replaceAll('http://127.0.0.1:8080', url!)], {
  encoding: 'utf8',
  env: { ...process.env, KEY: key },
});
t.equal(call.status, 0, 'the MCP curl example exits 0');
const rpc = JSON.parse(call.stdout) as {
  result?: { isError?: boolean; structuredContent?: { ip?: string; is_cdn?: boolean } };
};
t.notOk(rpc.result?.isError, 'not a tool error');
t.same(
  { ip: rpc.result?.structuredContent?.ip, is_cdn: rpc.result?.structuredContent?.is_cdn },
  { ip: '104.16.132.229', is_cdn: true },
);
