/**
 * Several server processes on one accounts store, with real `server serve` processes and a loopback
 * receiver verifying every request with `standardwebhooks`:
 * - two replicas on the PostgreSQL and Redis of TEST_DATABASE_URL / TEST_REDIS_URL (a schema and
 *   key prefix of their own, a releases directory each), and `--workers 2` on the embedded SQLite
 *   store: each release's events are computed once (one process logs it, one watch_run row), every
 *   event is delivered, and no two attempts of one delivery overlap in time at the receiver, under
 *   a short delivery lease and a receiver failing at first, then slow;
 * - a replica that took the run lease of a release and is killed (SIGKILL) half way through
 *   inserting its events (the second batch of 100 waits on a row this test holds uncommitted): once
 *   the lease expired the other, running replica computes the release, with the same event ids.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { openAccountsStore, type AccountsStore } from '../../../accounts/index.js';
import { openPgAccountsStore } from '../../../accounts/pg-store.js';
import { openRelease } from '../../../shared/queries/index.js';
import { computeWatchEvents } from '../../../server/watch/compute.js';
import { WatchIndex } from '../../../server/watch/subjects.js';
import {
  TEST_DATABASE_URL,
  TEST_REDIS_URL,
  requireSharedStores,
  spawnServer,
  uniqueNamespace,
  type SpawnedServer,
} from '../../helpers/limits.js';
import { buildReleaseSequence, publisherOf } from '../../helpers/release-sequence.js';
import { EXPECTED, describeDelivery, watchedEntries } from '../../helpers/watch-expected.js';
import {
  overlappingAttempts,
  startWebhookReceiver,
  until,
  watchingProject,
  type WebhookReceiver,
} from '../../helpers/webhook-receiver.js';

requireSharedStores();
const built = fs.mkdtempSync(path.join(os.tmpdir(), 'fault-replicas-'));
t.teardown(() => fs.rmSync(built, { recursive: true, force: true }));
const sequence = await buildReleaseSequence(built);
const [firstId, secondId] = sequence.ids as [string, string];

const WATCH_ENV = {
  LOG_LEVEL: 'info',
  RELEASE_POLL_MS: '100',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_ALLOW_HTTP: 'true',
  WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
  WEBHOOK_LEASE_MS: '2000',
  WEBHOOK_RETRY_SCHEDULE_MS: '100,100,100,100,100,100,100',
  WATCH_RUN_LEASE_MS: '2000',
};

/** `count` releases directories (one per replica) under `dir`, publishing to all at once. */
function releasesFor(dir: string, count: number) {
  const dirs = Array.from({ length: count }, (_, i) => publisherOf(sequence, path.join(dir, `r${i}`)));
  return {
    dirs: dirs.map((d) => d.releasesDir),
    publish: (id: string) => dirs.forEach((d) => d.publish(id)),
  };
}

/** The PostgreSQL store of a schema of the test's own, and the env of replicas on it and Redis. */
function sharedStores(t: Test, label: string) {
  const { schema, prefix } = uniqueNamespace(t, label);
  const store = openPgAccountsStore({ url: TEST_DATABASE_URL, schema });
  t.teardown(() => store.close());
  const env = {
    DATABASE_URL: TEST_DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
  };
  return { schema, store, env };
}

const computedLines = (server: SpawnedServer, release: string) =>
  server
    .output()
    .split('\n')
    .filter((line) => line.includes(`"watch events of release ${release} computed"`)).length;

/** Publishes the second release and checks: computed once, every event delivered, no overlap. */
async function computedOnceDeliveredAll(
  t: Test,
  store: AccountsStore,
  servers: SpawnedServer[],
  receiver: WebhookReceiver,
  ids: { projectId: string; endpointId: string },
  publish: (id: string) => void,
) {
  await until('the chain to start', async () => (await store.listWatchRuns()).length === 1);
  publish(secondId);
  await until('every delivery to be recorded', async () => {
    const deliveries = await store.listDeliveries(ids.endpointId);
    return deliveries.length === EXPECTED.length && deliveries.every((d) => d.state === 'delivered');
  });
  t.match(
    await store.listWatchRuns(),
    [
      { release: firstId, previousRelease: null, events: 0, leaseOwner: null, doneAt: Date },
      {
        release: secondId,
        previousRelease: firstId,
        events: EXPECTED.length,
        leaseOwner: null,
        doneAt: Date,
      },
    ],
    'one run per release',
  );
  t.equal(
    servers.reduce((n, s) => n + computedLines(s, secondId), 0),
    1,
    'computed by one process',
  );
  const events = await store.listEvents({ projectId: ids.projectId, limit: 100 });
  const delivered = receiver.delivered();
  t.same([...delivered.keys()].sort(), events.map((e) => e.id).sort(), 'every event delivered');
  t.same([...delivered.values()].map((list) => describeDelivery(list[0]!.body)).sort(), [...EXPECTED].sort());
  t.ok(
    [...delivered.values()].every((list) => list.length === 1),
    'each answered 2xx once',
  );
  t.ok(
    receiver.requests.every((r) => r.verified),
    `all ${receiver.requests.length} requests verified`,
  );
  t.same(overlappingAttempts(receiver.requests), [], 'no two attempts of a delivery overlapped');
  const log = await store.listAttempts(ids.endpointId, 1000);
  t.equal(log.length, receiver.requests.length, 'each request logged once');
  const workers = new Set(log.map((a) => a.worker));
  t.comment(`${receiver.requests.length} requests, attempted by ${workers.size} processes`);
}

/** 500 for the first 20 requests, then 204 after 300 ms (under the 1 s reply timeout of a 2 s lease). */
const failingThenSlow = (n: number) =>
  n <= 20 ? { status: 500, body: 'down' } : { status: 204, delayMs: 300 };

t.test('two replicas on PostgreSQL and Redis: computed once, all delivered, never overlapping', async (t) => {
  const { store, env } = sharedStores(t, 'watch_two');
  const receiver = await startWebhookReceiver(t, failingThenSlow);
  const ids = await watchingProject(store, receiver);
  const { dirs, publish } = releasesFor(t.testdir({}), 2);
  publish(firstId);
  const servers = await Promise.all(
    dirs.map((releasesDir) => spawnServer(t, { ...env, ...WATCH_ENV, RELEASES_DIR: releasesDir })),
  );
  await computedOnceDeliveredAll(t, store, servers, receiver, ids, publish);
  await Promise.all(servers.map((s) => s.stop()));
});

t.test('--workers 2 on SQLite: computed once, all delivered, never overlapping', async (t) => {
  const dir = t.testdir({});
  const accountsDb = path.join(dir, 'accounts.sqlite');
  const store = openAccountsStore(accountsDb);
  t.teardown(() => store.close());
  const receiver = await startWebhookReceiver(t, failingThenSlow);
  const ids = await watchingProject(store, receiver);
  const { dirs, publish } = releasesFor(dir, 1);
  publish(firstId);
  const server = await spawnServer(t, {
    ...WATCH_ENV,
    WORKERS: '2',
    ACCOUNTS_DB: accountsDb,
    RELEASES_DIR: dirs[0]!,
    CONSOLE_OUTBOX: path.join(dir, 'outbox'),
  });
  await computedOnceDeliveredAll(t, store, [server], receiver, ids, publish);
  await server.stop();
});

t.test('a replica killed holding the run lease: the other computes after it expired, same ids', async (t) => {
  const { schema, store, env } = sharedStores(t, 'watch_reclaim');
  const receiver = await startWebhookReceiver(t, () => ({ status: 204 }));
  const ids = await watchingProject(store, receiver);
  // Four more projects watching the same: 120 events, two insert batches of 100 and 20.
  const ws = (await store.findWorkspace('acme'))!;
  for (const name of ['p2', 'p3', 'p4', 'p5']) {
    const project = await store.createProject({ workspaceId: ws.id, name });
    await store.addWatchEntries(project.id, watchedEntries(), 100);
  }
  // The events the computation will insert, in its order (the same ids whoever computes them).
  const [older, newer] = [firstId, secondId].map((id) =>
    openRelease(path.join(sequence.releasesDir, `${id}.sqlite`)),
  );
  const expected = await computeWatchEvents(older!, newer!, new WatchIndex(await store.listWatchEntries()));
  older!.close();
  newer!.close();
  t.equal(expected.length, 5 * EXPECTED.length);

  // Holds the first event of the second batch uncommitted: the computer's second insert waits on it.
  const lock = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await lock.connect();
  t.teardown(() => lock.end());
  const blocking = expected[100]!;
  await lock.query('BEGIN');
  await lock.query(
    `INSERT INTO ${schema}.watch_event (id, project_id, release, previous_release, kind, subject, payload, created_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
    [
      blocking.id,
      blocking.projectId,
      blocking.release,
      blocking.previousRelease,
      blocking.kind,
      blocking.subject,
      blocking.payload,
      new Date().toISOString(),
    ],
  );

  const { dirs, publish } = releasesFor(t.testdir({}), 2);
  publish(firstId);
  const servers = await Promise.all(
    dirs.map((releasesDir) => spawnServer(t, { ...env, ...WATCH_ENV, RELEASES_DIR: releasesDir })),
  );
  await until('the chain to start', async () => (await store.listWatchRuns()).length === 1);
  publish(secondId);
  await until('the first batch to be inserted', async () => (await eventIds(schema)).length === 100);
  const run = (await store.listWatchRuns())[1]!;
  t.match(run, { release: secondId, doneAt: null, leaseOwner: String }, 'leased, not done');
  const holder = servers.find((s) => run.leaseOwner!.endsWith(`:${s.child.pid}`))!;
  const survivor = servers.find((s) => s !== holder)!;
  const exited = new Promise((resolve) => holder.child.once('exit', resolve));
  holder.child.kill('SIGKILL');
  await exited;
  await lock.query('ROLLBACK');

  await until('the run to be done', async () => (await store.listWatchRuns())[1]!.doneAt !== null);
  const done = (await store.listWatchRuns())[1]!;
  t.match(done, { previousRelease: firstId, events: expected.length, leaseOwner: null });
  t.ok(done.doneAt!.getTime() >= run.leaseExpiresAt!.getTime(), 'after the lease expired');
  t.comment(
    `done ${done.doneAt!.getTime() - run.leaseExpiresAt!.getTime()} ms after the dead replica's lease expired`,
  );
  t.equal(computedLines(holder, secondId), 0, 'the killed replica never finished');
  t.equal(computedLines(survivor, secondId), 1, 'the other one computed it');
  t.same(await eventIds(schema), expected.map((e) => e.id).sort(), 'the same ids, no duplicates');

  await until('every delivery to be recorded', async () => {
    const deliveries = await store.listDeliveries(ids.endpointId);
    return deliveries.length === EXPECTED.length && deliveries.every((d) => d.state === 'delivered');
  });
  const delivered = receiver.delivered();
  t.same(
    [...delivered.values()].map((list) => describeDelivery(list[0]!.body)).sort(),
    [...EXPECTED].sort(),
    "the project's events, delivered",
  );
  t.ok(
    receiver.requests.every((r) => r.verified),
    'verified',
  );
  await survivor.stop();
});

/** Every event id of the schema, sorted (read past the store: all projects at once). */
async function eventIds(schema: string): Promise<string[]> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string }>(`SELECT id FROM ${schema}.watch_event`);
    return rows.map((r) => r.id).sort();
  } finally {
    await client.end();
  }
}
