/**
 * Three `server serve` processes sharing the real PostgreSQL and Redis of TEST_DATABASE_URL and
 * TEST_REDIS_URL (a schema and key prefix of their own), 300 concurrent clients:
 * - a workspace limit of L per minute answers exactly L in the minute, the rest 429;
 * - with one request of quota left, 100 parallel requests give exactly one 200;
 * - a revoked key is refused by all three replicas within 1 s.
 */
import t from 'tap';
import path from 'node:path';
import fs from 'node:fs';
import os from 'node:os';
import { Agent } from 'undici';
import { openPgAccountsStore } from '../../../accounts/pg-store.js';
import { copyDemoRelease } from '../../helpers/demo-release.js';
import {
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  get,
  serverCli,
  requireSharedStores,
  spawnServer,
  uniqueNamespace,
  type SpawnedServer,
} from '../../helpers/limits.js';

requireSharedStores();
const LIMIT = 200;
const { schema, prefix } = uniqueNamespace(t, 'replicas');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'replicas-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const releasesDir = path.join(work, 'releases');
copyDemoRelease(releasesDir);
const env = {
  DATABASE_URL: TEST_DATABASE_URL,
  DATABASE_SCHEMA: schema,
  REDIS_URL: TEST_REDIS_URL,
  REDIS_KEY_PREFIX: prefix,
  RELEASES_DIR: releasesDir,
  FREE_REQUESTS_PER_MINUTE: String(LIMIT),
  FREE_MONTHLY_QUOTA: '1000000',
};
const keyOf = (text: string) => /\bkey: (sk_[A-Za-z0-9]+)/.exec(text)![1]!;
const idOf = (text: string) => /created key (key_[a-z0-9]+)/.exec(text)![1]!;
const dispatcher = new Agent({ connections: 150, pipelining: 0 });
t.teardown(() => dispatcher.close());

let servers: SpawnedServer[] = [];
t.before(async () => {
  await serverCli(['plans', 'set', 'five', '--per-minute', '100000', '--per-month', '5'], env);
  servers = await Promise.all([spawnServer(t, env), spawnServer(t, env), spawnServer(t, env)]);
});

t.test(
  `a workspace limit of ${LIMIT} per minute answers exactly ${LIMIT} across three replicas`,
  async (t) => {
    const rate = keyOf(
      await serverCli(['keys', 'create', '--workspace', 'rate', '--project', 'p', '--label', 'a'], env),
    );
    const rate2 = keyOf(
      await serverCli(['keys', 'create', '--workspace', 'rate', '--project', 'q', '--label', 'b'], env),
    );
    // Stay inside one minute window (the fixed window ends at the minute; Redis runs on this clock).
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 61_000 - intoMinute));
    const counts = new Map<number, number>();
    let sent = 0;
    const clients = Array.from({ length: 300 }, async (_, client) => {
      for (let i = 0; i < 4; i++) {
        const server = servers[(client + i) % 3]!;
        const r = await get(`${server.url}/v1/ping`, { key: client % 2 ? rate : rate2, dispatcher });
        sent += 1;
        counts.set(r.status, (counts.get(r.status) ?? 0) + 1);
      }
    });
    await Promise.all(clients);
    t.equal(sent, 1200);
    t.same(Object.fromEntries(counts), { 200: LIMIT, 429: 1200 - LIMIT }, `exactly ${LIMIT} answered`);
    t.ok(Date.now() % 60_000 > intoMinute || Date.now() % 60_000 < 45_000, 'all in one window');
  },
);

t.test(
  'one request of quota left: 100 parallel requests over three replicas give exactly one 200',
  async (t) => {
    const out = await serverCli(
      ['keys', 'create', '--workspace', 'quota', '--project', 'p', '--label', 'q'],
      env,
    );
    await serverCli(['workspaces', 'plan', 'quota', 'five'], env);
    const key = keyOf(out);
    // The plan change reaches the replicas through the key cache (≤ 1 s).
    await new Promise((r) => setTimeout(r, 1_100));
    for (let i = 0; i < 4; i++) {
      const r = await get(`${servers[i % 3]!.url}/v1/ip/1.1.1.1`, { key, dispatcher });
      t.equal(r.status, 200);
    }
    const answers = await Promise.all(
      Array.from({ length: 100 }, (_, i) => get(`${servers[i % 3]!.url}/v1/ip/1.1.1.1`, { key, dispatcher })),
    );
    const counts = new Map<number, number>();
    for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
    t.same(Object.fromEntries(counts), { 200: 1, 402: 99 });
    // The durable copy agrees once the replicas have flushed.
    await new Promise((r) => setTimeout(r, 600));
    const store = openPgAccountsStore({ url: TEST_DATABASE_URL, schema });
    const ws = (await store.findWorkspace('quota'))!;
    t.equal(await store.getUsage('workspace', ws.id, new Date().toISOString().slice(0, 7)), 5);
    await store.close();
  },
);

t.test('a revoked key is refused by all three replicas within 1 s', async (t) => {
  const out = await serverCli(
    ['keys', 'create', '--workspace', 'revoke', '--project', 'p', '--label', 'r'],
    env,
  );
  const key = keyOf(out);
  for (const s of servers) t.equal((await get(`${s.url}/v1/ping`, { key, dispatcher })).status, 200);
  const store = openPgAccountsStore({ url: TEST_DATABASE_URL, schema });
  await store.revokeKey(idOf(out));
  const revokedAt = Date.now();
  await store.close();
  const refusedAfter = await Promise.all(
    servers.map(async (s) => {
      for (;;) {
        const r = await get(`${s.url}/v1/ping`, { key, dispatcher });
        if (r.status === 401) return Date.now() - revokedAt;
        if (Date.now() - revokedAt > 3_000) return Infinity;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }),
  );
  t.comment(`refused after ${refusedAfter.join(', ')} ms`);
  t.ok(
    refusedAfter.every((ms) => ms <= 1_000),
    'every replica refuses it within 1 s',
  );
});
