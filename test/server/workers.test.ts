/**
 * `server serve --workers 2` on the embedded defaults (SQLite accounts, counters in the primary):
 * limits and quotas stay exact across the workers with requests spread over many connections,
 * the monthly quota's last unit is served once, the counts reach the accounts file at shutdown,
 * a release swap under load reaches both workers with no failed request and no client seeing an
 * older release after a newer one, and a worker that dies is replaced.
 */
import t, { type Test } from 'tap';
import path from 'node:path';
import { Agent, Client, request } from 'undici';
import { openAccountsStore } from '../../accounts/index.js';
import { monthOf } from '../../server/limits/counters.js';
import { createTestKey } from '../helpers/accounts.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { awaitMinuteRoom, get, spawnServer, type SpawnedServer } from '../helpers/limits.js';
import { parsePrometheus, value } from '../helpers/prometheus.js';
import { copyReleaseAs, pointCurrentAt } from '../helpers/release-files.js';

const IP = '23.228.249.10';

interface LogLine {
  pid?: number;
  msg?: string;
  statusCode?: number;
  release?: string;
}

function logLines(server: SpawnedServer): LogLine[] {
  return server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as LogLine);
}

/** How many answers had each status, as an object ({200: 40, 429: 80}). */
function byStatus(answers: Array<{ status: number }>): Record<number, number> {
  const counts: Record<number, number> = {};
  for (const a of answers) counts[a.status] = (counts[a.status] ?? 0) + 1;
  return counts;
}

/** The pids of the workers that logged a 200, once the last log lines are in. */
async function answeringPids(server: SpawnedServer): Promise<Set<number | undefined>> {
  await new Promise((resolve) => setTimeout(resolve, 200));
  return new Set(
    logLines(server)
      .filter((l) => l.statusCode === 200)
      .map((l) => l.pid),
  );
}

async function setUp(t: Test, env: Record<string, string> = {}) {
  const dir = t.testdir({});
  const { releasesDir, id } = copyDemoRelease(path.join(dir, 'releases'));
  const accounts = path.join(dir, 'accounts.sqlite');
  return {
    dir,
    releasesDir,
    id,
    accounts,
    env: { RELEASES_DIR: releasesDir, ACCOUNTS_DB: accounts, ...env },
  };
}

/** Two workers on the embedded defaults, the Free plan at `L` requests per minute, and a key of it. */
async function twoWorkersAt(t: Test, L: number, workspace: string) {
  const s = await setUp(t);
  const { key } = await createTestKey(s.accounts, { workspace });
  const server = await spawnServer(t, {
    ...s.env,
    WORKERS: '2',
    LOG_LEVEL: 'info',
    FREE_REQUESTS_PER_MINUTE: String(L),
    FREE_MONTHLY_QUOTA: '100000',
  });
  return { key, server };
}

t.test('two workers: L requests per minute answer exactly L successes across both', async (t) => {
  const L = 40;
  const { key, server } = await twoWorkersAt(t, L, 'rate');
  t.match(server.output(), /^listening on http:\/\/127\.0\.0\.1:\d+$/m);
  // The workers line follows the listening line (the promise resolved on the first).
  for (let i = 0; i < 100 && !/^workers: /m.test(server.output()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.match(server.output(), /^workers: 2 \(pids \d+, \d+\)$/m);
  const agent = new Agent({ connections: 30, pipelining: 1 });
  t.teardown(() => agent.close());
  await awaitMinuteRoom(30);
  const answers = await Promise.all(
    Array.from({ length: 3 * L }, () => get(`${server.url}/v1/ip/${IP}`, { key, dispatcher: agent })),
  );
  t.same(byStatus(answers), { 200: L, 429: 2 * L }, `exactly ${L} of ${3 * L} served`);
  const remaining = answers
    .filter((a) => a.status === 200)
    .map((a) => Number(a.headers['x-ratelimit-remaining']))
    .sort((a, b) => a - b);
  t.same(
    remaining,
    Array.from({ length: L }, (_, i) => i),
    'each unit of the minute handed out once',
  );
  const refused = answers.find((a) => a.status === 429)!;
  t.equal(JSON.parse(refused.text).error, 'rate_limited');
  const pids = await answeringPids(server);
  t.equal(pids.size, 2, `both workers answered (pids ${[...pids].join(', ')})`);
});

t.test('two workers: a limit large enough for leases still serves exactly L', async (t) => {
  // Far from the limit each worker hands out units leased from the primary; the last 1024 (4 leases
  // of 128 per worker) are taken one at a time, and a take is refused only after the leases of the
  // other worker came back.
  const L = 2_000;
  const { key, server } = await twoWorkersAt(t, L, 'leases');
  const agent = new Agent({ connections: 30, pipelining: 1 });
  t.teardown(() => agent.close());
  await awaitMinuteRoom(40);
  const answers = await Promise.all(
    Array.from({ length: L + 300 }, () => get(`${server.url}/v1/ip/${IP}`, { key, dispatcher: agent })),
  );
  t.same(byStatus(answers), { 200: L, 429: 300 }, `exactly ${L} of ${L + 300} served`);
  const pids = await answeringPids(server);
  t.equal(pids.size, 2, 'both workers answered');
});

t.test('two workers: /metrics on the primary counts the requests of both', async (t) => {
  const s = await setUp(t);
  const { key } = await createTestKey(s.accounts, { workspace: 'metrics' });
  const server = await spawnServer(t, { ...s.env, WORKERS: '2', LOG_LEVEL: 'info', METRICS_PORT: '0' });
  let metricsUrl = '';
  for (let i = 0; i < 100 && !metricsUrl; i++) {
    metricsUrl = /^metrics on (http:\/\/\S+)$/m.exec(server.output())?.[1] ?? '';
    if (!metricsUrl) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.match(metricsUrl, /^http:\/\/127\.0\.0\.1:\d+\/metrics$/, 'the primary prints where /metrics is');
  const agent = new Agent({ connections: 20, pipelining: 1 });
  t.teardown(() => agent.close());
  const answers = await Promise.all(
    Array.from({ length: 60 }, () => get(`${server.url}/v1/ip/${IP}`, { key, dispatcher: agent })),
  );
  t.same([...new Set(answers.map((a) => a.status))], [200]);
  const pids = await answeringPids(server);
  t.equal(pids.size, 2, 'both workers answered');
  for (const scrape of [1, 2]) {
    const metrics = await request(metricsUrl);
    t.equal(metrics.statusCode, 200);
    const { samples } = parsePrometheus(await metrics.body.text());
    t.equal(
      value(samples, 'ipscope_http_requests_total', { route: '/v1/ip/{ip}', status: '200' }),
      60,
      `scrape ${scrape}: the 60 answers of both workers, summed`,
    );
    t.equal(value(samples, 'ipscope_release_info', { id: s.id }), 1, `scrape ${scrape}: one release, once`);
  }
});

t.test('two workers: the monthly quota’s last unit is served once, the counts reach the file', async (t) => {
  const Q = 25;
  const s = await setUp(t);
  const store = openAccountsStore(s.accounts);
  await store.upsertPlan({ name: 'tiny', requestsPerMinute: 100_000, monthlyQuota: Q, maxPageSize: 100 });
  await store.close();
  const { key, workspaceId } = await createTestKey(s.accounts, { workspace: 'quota', plan: 'tiny' });
  const server = await spawnServer(t, { ...s.env, WORKERS: '2' });
  const agent = new Agent({ connections: 30, pipelining: 1 });
  t.teardown(() => agent.close());
  const answers = await Promise.all(
    Array.from({ length: 2 * Q + 10 }, () => get(`${server.url}/v1/ip/${IP}`, { key, dispatcher: agent })),
  );
  const served = answers.filter((a) => a.status === 200);
  t.equal(served.length, Q, `exactly ${Q} of ${2 * Q + 10} served`);
  t.same(
    served.map((a) => Number(a.headers['x-quota-used'])).sort((a, b) => a - b),
    Array.from({ length: Q }, (_, i) => i + 1),
    'every unit of the quota served once, the last one too',
  );
  t.equal(
    served.filter((a) => a.headers['x-quota-remaining'] === '0').length,
    1,
    'one answer took the last unit',
  );
  const refused = answers.filter((a) => a.status !== 200);
  t.same([...new Set(refused.map((a) => `${a.status} ${JSON.parse(a.text).error}`))], ['402 quota_exceeded']);
  await server.stop();
  t.equal(server.child.exitCode, 0, 'SIGTERM drained both workers and the primary exited 0');
  const after = openAccountsStore(s.accounts);
  t.teardown(() => after.close());
  t.equal(
    await after.getUsage('workspace', workspaceId, monthOf(Date.now())),
    Q,
    'the primary wrote the counts',
  );
});

t.test('two workers: the refused-key throttle counts across both', async (t) => {
  const s = await setUp(t);
  await createTestKey(s.accounts);
  const server = await spawnServer(t, { ...s.env, WORKERS: '2' });
  const agent = new Agent({ connections: 20, pipelining: 1 });
  t.teardown(() => agent.close());
  const wrong = `sk_${'A'.repeat(32)}`;
  const answers = await Promise.all(
    Array.from({ length: 120 }, () => get(`${server.url}/v1/ping`, { key: wrong, dispatcher: agent })),
  );
  t.same(byStatus(answers), { 401: 100, 429: 20 }, '100 refused keys per address and minute, then 429');
});

t.test('two workers: a release swap under load, no failure, no client going back', async (t) => {
  const s = await setUp(t, { RELEASE_POLL_MS: '100', METERING: 'off', LOG_LEVEL: 'info' });
  const { key } = await createTestKey(s.accounts);
  const server = await spawnServer(t, { ...s.env, WORKERS: '2' });
  const NEW_ID = '20300101T000000Z';
  const newFile = copyReleaseAs(s.releasesDir, `${s.id}.sqlite`, NEW_ID);
  const origin = new URL(server.url).origin;
  let stop = false;
  const failures: string[] = [];
  const wentBack: string[] = [];
  let requests = 0;
  const seenNew = new Set<number>();
  const clientLoop = async (n: number) => {
    // Each client holds several connections (spread over both workers by the primary).
    const clients = [new Client(origin), new Client(origin), new Client(origin)];
    let newest = s.id;
    let i = 0;
    try {
      while (!stop) {
        const client = clients[i++ % clients.length]!;
        const r = await get(`${server.url}/v1/ip/${IP}`, { key, dispatcher: client });
        requests += 1;
        if (r.status !== 200) {
          failures.push(`${r.status} ${r.text}`);
          continue;
        }
        const id = (JSON.parse(r.text) as { release: { id: string } }).release.id;
        if (id === NEW_ID) {
          newest = NEW_ID;
          seenNew.add(n);
        } else if (newest === NEW_ID) wentBack.push(`client ${n}: ${id} after ${NEW_ID}`);
      }
    } finally {
      await Promise.all(clients.map((c) => c.close()));
    }
  };
  const loops = Array.from({ length: 6 }, (_, n) => clientLoop(n));
  await new Promise((resolve) => setTimeout(resolve, 300));
  pointCurrentAt(s.releasesDir, newFile);
  const started = Date.now();
  while (seenNew.size < 6 && Date.now() - started < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  stop = true;
  await Promise.all(loops);
  t.equal(seenNew.size, 6, 'every client got the new release');
  t.same(failures, [], `no failed request among ${requests}`);
  t.same(wentBack, [], 'no client saw the old release after the new one');
  const swapped = logLines(server).filter((l) => l.msg === `serving release ${NEW_ID}`);
  t.equal(new Set(swapped.map((l) => l.pid)).size, 2, 'both workers swapped');
});

t.test('two workers: a worker that dies is replaced, the service goes on', async (t) => {
  const s = await setUp(t, { METERING: 'off', LOG_LEVEL: 'info' });
  const { key } = await createTestKey(s.accounts);
  const server = await spawnServer(t, { ...s.env, WORKERS: '2' });
  // A request logs its worker's pid: kill that worker.
  const first = await get(`${server.url}/v1/ip/${IP}`, { key });
  t.equal(first.status, 200);
  await new Promise((resolve) => setTimeout(resolve, 100));
  const victim = logLines(server).find((l) => l.statusCode === 200)!.pid!;
  process.kill(victim, 'SIGKILL');
  const started = Date.now();
  while (!/starting another/.test(server.output()) && Date.now() - started < 10_000) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  t.match(server.output(), new RegExp(`worker ${victim} exited \\(SIGKILL\\); starting another`));
  // Fresh connections (new sockets) until both workers (the replacement included) answered.
  const pids = new Set<number>();
  const statuses = new Set<number>();
  while (pids.size < 2 && Date.now() - started < 20_000) {
    const agent = new Agent();
    const r = await get(`${server.url}/v1/ip/${IP}`, { key, dispatcher: agent });
    await agent.close();
    statuses.add(r.status);
    await new Promise((resolve) => setTimeout(resolve, 50));
    for (const l of logLines(server)) if (l.statusCode === 200 && l.pid !== victim) pids.add(l.pid!);
  }
  t.same([...statuses], [200], 'every request after the kill answered 200');
  t.equal(pids.size, 2, 'the replacement worker answers beside the other one');
});
