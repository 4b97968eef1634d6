/**
 * Limit headers that tell the truth on every core (docs/operations.md, "Workers"): one key sends 50
 * requests one after another, each on a new connection, and every response's X-Quota-Used is one
 * more than the last and X-RateLimit-Remaining one less, whichever process answers: two workers of
 * `server serve --workers 2` on the embedded defaults (units lent to each worker, the counts kept by
 * the primary), and two replicas sharing PostgreSQL and Redis.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { Agent } from 'undici';
import { createTestKey } from '../helpers/accounts.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import {
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  awaitMinuteRoom,
  get,
  requireSharedStores,
  serverCli,
  spawnServer,
  uniqueNamespace,
  type SpawnedServer,
} from '../helpers/limits.js';

const PER_MINUTE = 6_000;
const REQUESTS = 50;

interface Seen {
  used: number;
  remaining: number;
  id: string;
}

/** REQUESTS pings one after another, each on a connection of its own, to `urls` in turn. */
async function oneAfterAnother(t: Test, urls: string[], key: string): Promise<Seen[]> {
  const seen: Seen[] = [];
  for (let i = 0; i < REQUESTS; i++) {
    const agent = new Agent({ connections: 1, pipelining: 0 });
    const id = `seq-${i}`;
    const r = await get(`${urls[i % urls.length]}/v1/ping`, {
      key,
      dispatcher: agent,
      headers: { 'x-request-id': id },
    });
    await agent.close();
    t.equal(r.status, 200, `request ${i + 1}: 200`);
    seen.push({
      used: Number(r.headers['x-quota-used']),
      remaining: Number(r.headers['x-ratelimit-remaining']),
      id,
    });
  }
  return seen;
}

/** The headers rise (and fall) by exactly one from each response to the next. */
function checkSequence(t: Test, seen: Seen[], label: string): void {
  const first = seen[0]!;
  t.same(
    seen.map((s) => s.used),
    Array.from({ length: REQUESTS }, (_, i) => first.used + i),
    `${label}: X-Quota-Used rises by one each time (${first.used} to ${first.used + REQUESTS - 1})`,
  );
  t.same(
    seen.map((s) => s.remaining),
    Array.from({ length: REQUESTS }, (_, i) => first.remaining - i),
    `${label}: X-RateLimit-Remaining falls by one each time`,
  );
}

t.test('two workers: consecutive requests see the headers move by one', async (t) => {
  const dir = t.testdir({});
  const { releasesDir } = copyDemoRelease(path.join(dir, 'releases'));
  const accounts = path.join(dir, 'accounts.sqlite');
  const { key } = await createTestKey(accounts, { workspace: 'headers' });
  const server = await spawnServer(t, {
    RELEASES_DIR: releasesDir,
    ACCOUNTS_DB: accounts,
    WORKERS: '2',
    LOG_LEVEL: 'info',
    FREE_REQUESTS_PER_MINUTE: String(PER_MINUTE),
    FREE_MONTHLY_QUOTA: '100000',
  });
  await awaitMinuteRoom(30);
  const seen = await oneAfterAnother(t, [server.url], key);
  checkSequence(t, seen, 'two workers');
  t.equal(seen[0]!.used, 1, 'the first request is the first unit of the month');
  t.equal(seen[0]!.remaining, PER_MINUTE - 1, 'and of the minute');
  // Both workers answered (their log lines carry their pid and the request id).
  await new Promise((resolve) => setTimeout(resolve, 200));
  const pids = new Set(
    server
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { pid?: number; reqId?: string; msg?: string })
      .filter((l) => l.msg === 'request completed' && l.reqId?.startsWith('seq-'))
      .map((l) => l.pid),
  );
  t.equal(pids.size, 2, `both workers answered (pids ${[...pids].join(', ')})`);
});

t.test('two replicas on PostgreSQL and Redis: the same, alternating between them', async (t) => {
  requireSharedStores();
  const { schema, prefix } = uniqueNamespace(t, 'headers');
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'headers-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const releasesDir = path.join(work, 'releases');
  copyDemoRelease(releasesDir);
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
    RELEASES_DIR: releasesDir,
    FREE_REQUESTS_PER_MINUTE: String(PER_MINUTE),
    FREE_MONTHLY_QUOTA: '100000',
  };
  const created = await serverCli(
    ['keys', 'create', '--workspace', 'headers', '--project', 'p', '--label', 'a'],
    env,
  );
  const key = /\bkey: (sk_[A-Za-z0-9]+)/.exec(created)![1]!;
  const servers: SpawnedServer[] = await Promise.all([spawnServer(t, env), spawnServer(t, env)]);
  await awaitMinuteRoom(30);
  const seen = await oneAfterAnother(
    t,
    servers.map((s) => s.url),
    key,
  );
  checkSequence(t, seen, 'two replicas');
});
