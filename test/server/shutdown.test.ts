/**
 * Graceful shutdown of a real `bin/server.js serve` process (issue 16, defect 3): SIGTERM while
 * 20 keep-alive clients keep it busy. Every response it sends after SIGTERM says
 * `Connection: close`, a request arriving on a kept-alive connection gets 503 with `Retry-After`
 * and `Connection: close`, idle kept-alive connections are closed only once idle for a while: a
 * client that retries 503s on a second replica and reconnects after `Connection: close` sees no
 * failed request, and the process exits 0.
 */
import t, { type Test } from 'tap';
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { createTestKey } from '../helpers/accounts.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { startLoad } from '../helpers/keepalive-load.js';
import { spawnServer } from '../helpers/limits.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'shutdown-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const releasesDir = path.join(work, 'releases');
copyDemoRelease(releasesDir);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until check() holds, failing after 60 s (a loaded machine is slow, not stuck). */
async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 60_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

/** The exit code of a child, failing after 30 s. */
function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error('the server did not exit within 30 s of SIGTERM')),
      30_000,
    );
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(code);
    });
  });
}

/** Two replicas on one accounts file (unmetered: they only read it). */
async function replicas(t: Test, label: string) {
  const accounts = path.join(work, `${label}.sqlite`);
  const { key } = await createTestKey(accounts, {});
  const env = { ACCOUNTS_DB: accounts, RELEASES_DIR: releasesDir, METERING: 'off' };
  const [a, b] = await Promise.all([spawnServer(t, env), spawnServer(t, env)]);
  return { a: a!, b: b!, key };
}

t.test('SIGTERM under keep-alive load: 0 failed requests, exit 0', async (t) => {
  const { a, b, key } = await replicas(t, 'load');
  const load = startLoad({
    servers: [a.url, b.url],
    paths: ['/v1/ip/104.16.132.229', '/v1/domain/news.example/history', '/v1/asn/AS13335?limit=2', '/health'],
    key,
    connections: 20,
  });
  // Until every worker has had answers from the first replica.
  await until('400 answers from the first replica', () => load.result.perServer[0]! >= 400);
  const exited = exitOf(a.child);
  a.child.kill('SIGTERM');
  const code = await exited.catch(async (error: Error) => {
    await load.stop();
    throw error;
  });
  const before = load.result.perServer[1]!;
  await until('200 answers from the second replica', () => load.result.perServer[1]! >= before + 200);
  const result = await load.stop();
  t.comment(
    `figures: ${result.ok} answered (${result.perServer.join(' + ')}), ${result.failures.length} failed, ` +
      `${result.retried} 503s retried, ${result.closeHeaders} Connection: close`,
  );
  t.equal(code, 0, 'the first replica exited 0');
  t.same(result.failures, [], `no failed request among ${result.ok} answered`);
  t.equal(result.closeHeaders, 20, 'each of the 20 connections was told Connection: close once');
  t.ok(result.perServer[0]! >= 400 && result.perServer[1]! >= 200, 'both replicas answered');
  t.match(a.output(), /server: SIGTERM, closing/);
});

t.test(
  'an idle kept-alive connection: its next request gets 503, Retry-After, Connection: close',
  async (t) => {
    const { a, key } = await replicas(t, 'idle');
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    t.teardown(() => agent.destroy());
    const ask = () =>
      new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
        http
          .get(`${a.url}/v1/ping`, { agent, headers: { authorization: `Bearer ${key}` } }, (res) => {
            let body = '';
            res.setEncoding('utf8');
            res.on('data', (chunk: string) => (body += chunk));
            res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body }));
          })
          .on('error', reject);
      });
    const first = await ask();
    t.equal(first.status, 200);
    t.equal(first.headers.connection, 'keep-alive');
    const exited = new Promise<number | null>((resolve) => a.child.once('exit', resolve));
    a.child.kill('SIGTERM');
    // The server needs a moment to see the signal; the connection stays open meanwhile.
    await sleep(300);
    const late = await ask();
    t.equal(late.status, 503);
    t.equal(late.headers['retry-after'], '1');
    t.equal(late.headers.connection, 'close');
    t.equal(typeof late.headers['x-request-id'], 'string');
    t.same(JSON.parse(late.body), {
      error: 'service_unavailable',
      message: 'the server is shutting down: retry after Retry-After seconds',
    });
    t.equal(await exited, 0, 'exit 0 once the connection closed');
  },
);
