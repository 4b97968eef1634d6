/**
 * Failure behaviour (issue 4, item 6) with real servers:
 * - a Redis server this test starts itself is stopped during load: zero 5xx, health says
 *   `cache: error` while it is down, the refused-key throttle still holds, and shared counting
 *   resumes by itself (the Redis counter is re-seeded from the durable usage and exact again);
 * - a replica pointed at an unreachable PostgreSQL: health 503 within 5 s, lookups 503 with
 *   Retry-After; and PostgreSQL going away under a running replica (a TCP relay the test cuts):
 *   the same, then recovery by itself when it is back.
 */
import t from 'tap';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { createTestKey } from '../../helpers/accounts.js';
import { copyDemoRelease } from '../../helpers/demo-release.js';
import {
  TEST_DATABASE_URL,
  freePort,
  requireSharedStores,
  get,
  serverCli,
  spawnServer,
  uniqueNamespace,
} from '../../helpers/limits.js';

// On PATH: make test installs Debian's redis-server when it is missing (scripts/system-deps.sh).
const REDIS_SERVER = 'redis-server';
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'limits-failures-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const releasesDir = path.join(work, 'releases');
copyDemoRelease(releasesDir);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    REDIS_SERVER,
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  for (let i = 0; i < 100; i++) {
    const probe = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      return child;
    } catch {
      probe.disconnect();
      await sleep(50);
    }
  }
  throw new Error(`redis-server did not start on port ${port}`);
}

async function stopProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}

t.test('Redis stops during load: no 5xx, cache: error, throttle holds, counting resumes', async (t) => {
  const port = await freePort();
  let redis = await startRedis(port);
  t.teardown(() => stopProcess(redis));
  const accountsDb = path.join(work, 'redis-stop.sqlite');
  const key = await createTestKey(accountsDb, {});
  const prefix = 'ipscope-failures:';
  const server = await spawnServer(t, {
    ACCOUNTS_DB: accountsDb,
    REDIS_URL: `redis://127.0.0.1:${port}`,
    REDIS_KEY_PREFIX: prefix,
    RELEASES_DIR: releasesDir,
    FREE_REQUESTS_PER_MINUTE: '1000000',
    FREE_MONTHLY_QUOTA: '1000000',
    USAGE_FLUSH_MS: '50',
  });
  t.equal((await get(`${server.url}/v1/ping`, { key: key.key })).status, 200);

  const statuses = new Map<number, number>();
  let answered = 0;
  let running = true;
  const load = Array.from({ length: 20 }, async () => {
    while (running) {
      const r = await get(`${server.url}/v1/ip/1.1.1.1`, { key: key.key });
      statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
      if (r.status === 200) answered += 1;
    }
  });

  await sleep(700);
  await stopProcess(redis);
  await sleep(700);
  const health = await get(`${server.url}/health`);
  t.equal(health.status, 200, 'still healthy without Redis');
  t.match(JSON.parse(health.text), { status: 'healthy', checks: { cache: 'error', database: 'ok' } });
  const refused: number[] = [];
  for (let i = 0; i < 101; i++)
    refused.push((await get(`${server.url}/v1/ping`, { key: 'sk_wrong' })).status);
  t.equal(refused.filter((s) => s === 401).length, 100, 'refused keys: 100 times 401 …');
  t.equal(refused[100], 429, '… then 429 while Redis is down');

  redis = await startRedis(port); // empty: Redis keeps nothing on disk here
  let resumed = false;
  for (let i = 0; i < 50 && !resumed; i++) {
    await sleep(100);
    resumed = JSON.parse((await get(`${server.url}/health`)).text).checks.cache === 'ok';
  }
  t.ok(resumed, 'health shows cache: ok again');
  await sleep(700);
  running = false;
  await Promise.all(load);
  t.comment(`statuses during the run: ${JSON.stringify(Object.fromEntries(statuses))}`);
  t.same([...statuses.keys()], [200], 'every lookup answered 200, zero 5xx');

  await sleep(300); // the replica's ledger flush
  const client = new Redis({ port });
  const month = new Date().toISOString().slice(0, 7);
  const shared = Number(await client.get(`${prefix}q:${key.workspaceId}:${month}`));
  client.disconnect();
  t.equal(shared, answered + 1, 'the shared counter is exact again (re-seeded from the durable usage)');
});

/** A TCP relay to PostgreSQL the test can cut and restore. */
function relay(target: { host: string; port: number }) {
  const sockets = new Set<net.Socket>();
  let server: net.Server | null = null;
  return {
    async open(port: number) {
      server = net.createServer((inbound) => {
        const outbound = net.connect(target.port, target.host);
        sockets.add(inbound).add(outbound);
        inbound.pipe(outbound).pipe(inbound);
        const drop = () => {
          inbound.destroy();
          outbound.destroy();
          sockets.delete(inbound);
          sockets.delete(outbound);
        };
        inbound.on('error', drop).on('close', drop);
        outbound.on('error', drop).on('close', drop);
      });
      await new Promise<void>((resolve) => server!.listen(port, '127.0.0.1', resolve));
    },
    async cut() {
      const closing = server ? new Promise((resolve) => server!.close(resolve)) : Promise.resolve();
      for (const socket of sockets) socket.destroy();
      sockets.clear();
      await closing;
      server = null;
    },
  };
}

t.test('PostgreSQL unreachable: health 503 within 5 s, lookups 503 with Retry-After, recovery', async (t) => {
  requireSharedStores('database');
  const { schema } = uniqueNamespace(t, 'failures');
  const direct = { DATABASE_URL: TEST_DATABASE_URL, DATABASE_SCHEMA: schema };
  const key = /\bkey: (sk_[A-Za-z0-9]+)/.exec(
    await serverCli(['keys', 'create', '--project', 'p', '--label', 'k'], direct),
  )![1]!;
  const pgUrl = new URL(TEST_DATABASE_URL);

  t.test('a replica started against an unreachable PostgreSQL', async (t) => {
    const dead = await freePort();
    const url = new URL(TEST_DATABASE_URL);
    url.port = String(dead);
    const server = await spawnServer(t, {
      DATABASE_URL: url.toString(),
      DATABASE_SCHEMA: schema,
      RELEASES_DIR: releasesDir,
    });
    // From the moment it listens (the process's own start-up is not what is measured).
    const started = Date.now();
    const health = await get(`${server.url}/health`);
    t.equal(health.status, 503);
    t.match(JSON.parse(health.text), { status: 'unhealthy', checks: { database: 'error' } });
    t.ok(Date.now() - started < 5_000, 'health 503 within 5 s');
    const lookup = await get(`${server.url}/v1/ip/1.1.1.1`, { key });
    t.equal(lookup.status, 503);
    t.match(JSON.parse(lookup.text), { error: 'service_unavailable' });
    t.ok(Number(lookup.headers['retry-after']) >= 1, 'Retry-After');
  });

  t.test('PostgreSQL goes away under a running replica and comes back', async (t) => {
    const port = await freePort();
    const link = relay({ host: pgUrl.hostname, port: Number(pgUrl.port || 5432) });
    await link.open(port);
    t.teardown(() => link.cut());
    const url = new URL(TEST_DATABASE_URL);
    url.hostname = '127.0.0.1';
    url.port = String(port);
    const server = await spawnServer(t, {
      DATABASE_URL: url.toString(),
      DATABASE_SCHEMA: schema,
      RELEASES_DIR: releasesDir,
      USAGE_FLUSH_MS: '50',
    });
    t.equal((await get(`${server.url}/v1/ip/1.1.1.1`, { key })).status, 200);
    t.equal((await get(`${server.url}/health`)).status, 200);

    await link.cut();
    const cutAt = Date.now();
    let healthAfter = Infinity;
    for (;;) {
      const h = await get(`${server.url}/health`);
      if (h.status === 503) {
        healthAfter = Date.now() - cutAt;
        break;
      }
      if (Date.now() - cutAt > 6_000) break;
      await sleep(100);
    }
    t.ok(healthAfter <= 5_000, `health 503 within 5 s (after ${healthAfter} ms)`);
    await sleep(600); // past the key cache
    const statuses = new Set<number>();
    for (let i = 0; i < 20; i++) {
      const r = await get(`${server.url}/v1/ip/1.1.1.1`, { key });
      statuses.add(r.status);
      if (r.status === 503) t.ok(Number(r.headers['retry-after']) >= 1);
    }
    t.same([...statuses], [503], 'lookups answer 503, never 500');

    await link.open(port);
    let back = false;
    for (let i = 0; i < 50 && !back; i++) {
      await sleep(200);
      back = (await get(`${server.url}/v1/ip/1.1.1.1`, { key })).status === 200;
    }
    t.ok(back, 'lookups recover by themselves');
    t.equal((await get(`${server.url}/health`)).status, 200, 'health recovers');
  });
});
