/**
 * Delivery faults with real `server serve` processes on an embedded SQLite accounts store, the
 * release sequence's second release published while they run (24 watched events), and a loopback
 * receiver verifying every request with `standardwebhooks` (test/helpers/webhook-receiver.ts):
 * - SIGKILL while 16 deliveries are in flight (the receiver holds their replies open): a new
 *   server on the same store sends those 16 again once their lease expired, with the same
 *   webhook-id and body, verified; the other 8 once; every event arrives, nothing is lost;
 * - a receiver failing (500/503) for the first 30 requests, then answering slowly under the reply
 *   timeout: every event is delivered after retries that waited the schedule, and the delivery log
 *   holds each attempt with its status, duration and first bytes.
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAccountsStore } from '../../../accounts/index.js';
import { spawnServer } from '../../helpers/limits.js';
import { buildReleaseSequence, publisherOf } from '../../helpers/release-sequence.js';
import { EXPECTED, describeDelivery } from '../../helpers/watch-expected.js';
import { startWebhookReceiver, until, watchingProject } from '../../helpers/webhook-receiver.js';

const built = fs.mkdtempSync(path.join(os.tmpdir(), 'fault-delivery-'));
t.teardown(() => fs.rmSync(built, { recursive: true, force: true }));
const sequence = await buildReleaseSequence(built);
const [firstId, secondId] = sequence.ids as [string, string];

/** A test directory with the first release published and an accounts file; env for `server serve`. */
function setUp(dir: string, settings: Record<string, string>) {
  const { releasesDir, publish } = publisherOf(sequence, dir);
  publish(firstId);
  const accountsDb = path.join(dir, 'accounts.sqlite');
  const env = {
    ACCOUNTS_DB: accountsDb,
    RELEASES_DIR: releasesDir,
    STATE_DIR: path.join(dir, 'state'),
    CONSOLE_OUTBOX: path.join(dir, 'outbox'),
    LOG_LEVEL: 'info',
    RELEASE_POLL_MS: '100',
    WEBHOOK_POLL_MS: '100',
    WEBHOOK_ALLOW_HTTP: 'true',
    WEBHOOK_ALLOWED_ADDRESSES: '127.0.0.1',
    ...settings,
  };
  return { accountsDb, publish, env };
}

t.test(
  'SIGKILL while deliveries are in flight: a new server sends them again, same webhook-id',
  async (t) => {
    const { accountsDb, publish, env } = setUp(t.testdir({}), { WEBHOOK_LEASE_MS: '3000' });
    // The first 16 requests (the first server's first batch) are never answered; the rest at once.
    const receiver = await startWebhookReceiver(t, (n) => (n <= 16 ? 'hold' : { status: 204 }));
    const store = openAccountsStore(accountsDb);
    t.teardown(() => store.close());
    const { projectId, endpointId } = await watchingProject(store, receiver);

    const first = await spawnServer(t, env);
    await until('the chain to start', async () => (await store.listWatchRuns()).length === 1);
    publish(secondId);
    await until('16 deliveries in flight', () => receiver.open() === 16);
    const exited = new Promise((resolve) => first.child.once('exit', resolve));
    first.child.kill('SIGKILL');
    await exited;
    const killedAt = Date.now();
    await until('the held connections to close', () => receiver.open() === 0);
    const held = receiver.requests.map((r) => r.id);
    t.equal(new Set(held).size, 16, '16 distinct events were in flight');
    t.ok(
      receiver.requests.every((r) => r.verified && r.status === null),
      'each verified, none answered',
    );

    const second = await spawnServer(t, env);
    await until('every delivery to be recorded', async () =>
      (await store.listDeliveries(endpointId)).every((d) => d.state === 'delivered'),
    );
    const events = await store.listEvents({ projectId, limit: 100 });
    t.equal(events.length, EXPECTED.length);
    const delivered = receiver.delivered();
    t.same([...delivered.keys()].sort(), events.map((e) => e.id).sort(), 'every event arrived');
    t.same(
      [...delivered.values()].map((list) => describeDelivery(list[0]!.body)).sort(),
      [...EXPECTED].sort(),
      'as the events of the release pair',
    );
    t.ok(
      [...delivered.values()].every((list) => list.length === 1),
      'each answered 2xx once',
    );
    t.equal(receiver.requests.length, EXPECTED.length + 16, 'the 16 in flight were sent again, nothing else');
    for (const id of held) {
      const sent = receiver.requests.filter((r) => r.id === id);
      t.equal(sent.length, 2, `${id}: sent twice`);
      t.equal(sent[1]!.body, sent[0]!.body, `${id}: the same body`);
      t.ok(sent[1]!.verified, `${id}: the repeat verifies`);
      t.ok(sent[1]!.start >= killedAt, `${id}: repeated by the new server`);
    }
    const repeats = receiver.requests.filter((r) => r.start >= killedAt && held.includes(r.id));
    t.comment(
      `${receiver.requests.length} requests; the 16 repeats ${Math.min(...repeats.map((r) => r.start)) - killedAt}` +
        `–${Math.max(...repeats.map((r) => r.start)) - killedAt} ms after the kill`,
    );
    // The dead process never recorded its attempts: the log has one per delivery, by the new server.
    const log = await store.listAttempts(endpointId, 1000);
    t.equal(log.length, EXPECTED.length);
    t.same(new Set(log.map((a) => `${a.attempt} ${a.status} ${a.ok}`)), new Set(['1 204 true']));
    t.same(new Set(log.map((a) => a.worker.split(':').at(-1))), new Set([String(second.child.pid)]));
    t.same(
      new Set(
        (await store.listDeliveries(endpointId)).map((d) => `${d.state} ${d.attempts} ${d.lastStatus}`),
      ),
      new Set(['delivered 1 204']),
    );
  },
);

t.test('a receiver failing for a while, then slow: retried on schedule until delivered', async (t) => {
  const FAILING = 30;
  const SLOW_MS = 1_000;
  const schedule = [200, 400, 800, 1_600];
  const { accountsDb, publish, env } = setUp(t.testdir({}), {
    WEBHOOK_RETRY_SCHEDULE_MS: schedule.join(','),
  });
  const receiver = await startWebhookReceiver(t, (n) =>
    n <= FAILING
      ? { status: n % 2 ? 500 : 503, body: `failing ${n}` }
      : { status: 200, delayMs: SLOW_MS, body: `ok ${n}` },
  );
  const store = openAccountsStore(accountsDb);
  t.teardown(() => store.close());
  const { projectId, endpointId } = await watchingProject(store, receiver);
  await spawnServer(t, env);
  await until('the chain to start', async () => (await store.listWatchRuns()).length === 1);
  publish(secondId);
  await until(
    'every delivery to be recorded',
    async () => {
      const deliveries = await store.listDeliveries(endpointId);
      return deliveries.length === EXPECTED.length && deliveries.every((d) => d.state === 'delivered');
    },
    30_000,
  );

  const events = await store.listEvents({ projectId, limit: 100 });
  const delivered = receiver.delivered();
  t.same([...delivered.keys()].sort(), events.map((e) => e.id).sort(), 'every event delivered');
  t.ok(
    [...delivered.values()].every((list) => list.length === 1),
    'once each',
  );
  t.equal(receiver.requests.length, EXPECTED.length + FAILING, 'one 2xx per event after the 30 failures');
  t.ok(
    receiver.requests.every((r) => r.verified),
    'every attempt verified',
  );

  // The log: one row per request, matched by (event, attempt number), with what the receiver did.
  const log = await store.listAttempts(endpointId, 1000);
  t.equal(log.length, receiver.requests.length);
  const failed = log.filter((a) => !a.ok);
  t.equal(failed.length, FAILING, 'the 30 failed attempts are logged');
  for (const r of receiver.requests) {
    const attempt = receiver.requests.filter((o) => o.id === r.id && o.n <= r.n).length;
    const row = log.find((a) => a.eventId === r.id && a.attempt === attempt);
    const slow = r.n > FAILING;
    t.match(
      row,
      {
        status: r.n <= FAILING ? (r.n % 2 ? 500 : 503) : 200,
        replyHead: slow ? `ok ${r.n}` : `failing ${r.n}`,
        error: null,
        ok: slow,
      },
      `request ${r.n} is attempt ${attempt} of ${r.id}`,
    );
    if (slow) t.ok(row!.durationMs >= SLOW_MS, `the slow reply took ${row!.durationMs} ms`);
  }
  // Backoff: attempt k+1 started at least schedule[k-1] after attempt k ended (ms rounding: 1).
  const waits: string[] = [];
  for (const a of log) {
    const before = log.find((o) => o.eventId === a.eventId && o.attempt === a.attempt - 1);
    if (!before) continue;
    const gap = a.startedAt.getTime() - (before.startedAt.getTime() + before.durationMs);
    if (gap < schedule[before.attempt - 1]! - 1) waits.push(`${a.eventId} #${a.attempt} after ${gap} ms`);
  }
  t.same(waits, [], 'no retry came before its wait');
  t.ok(
    log.some((a) => a.attempt === 3),
    'some events needed three attempts',
  );
  t.comment(
    `${log.length} attempts (${FAILING} failed), at most ${Math.max(...log.map((a) => a.attempt))} per event, ` +
      `slow replies ${Math.min(...log.filter((a) => a.ok).map((a) => a.durationMs))}–` +
      `${Math.max(...log.filter((a) => a.ok).map((a) => a.durationMs))} ms`,
  );
  t.same(
    new Set((await store.listDeliveries(endpointId)).map((d) => `${d.state} ${d.lastStatus}`)),
    new Set(['delivered 200']),
  );
});
