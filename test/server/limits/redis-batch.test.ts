/**
 * RedisCounters against the real Redis of TEST_REDIS_URL: takes asked in one turn of the event loop
 * go to Redis as one script call, and each gets what one call of its own would have given, in the
 * order they were asked (outcome, counts after it, ticket).
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAccountsStore } from '../../../accounts/sqlite-store.js';
import { UsageLedger } from '../../../server/limits/usage-ledger.js';
import { RedisCounters } from '../../../server/limits/redis-counters.js';
import { connectRedis } from '../../../server/limits/from-settings.js';
import { monthOf, type TakeRequest } from '../../../server/limits/counters.js';
import { TEST_REDIS_URL, requireSharedStores, uniqueNamespace } from '../../helpers/limits.js';

requireSharedStores('redis');
const { prefix } = uniqueNamespace(t, 'batch');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-batch-'));
const store = openAccountsStore(path.join(work, 'accounts.sqlite'));
const ledger = new UsageLedger({ store, flushMs: 60_000 });
// The server's own client (no auto-pipelining: the batches are RedisCounters' own, decision 0037).
const redis = connectRedis(TEST_REDIS_URL);
const counters = new RedisCounters({ redis, prefix, store, ledger });
t.teardown(async () => {
  await counters.close();
  redis.disconnect();
  await store.close();
  fs.rmSync(work, { recursive: true, force: true });
});
const calls: string[] = [];
// Counts the script calls that reach Redis (MONITOR would see other tests' traffic too).
const sendCommand = redis.sendCommand.bind(redis);
redis.sendCommand = ((command: { name: string }) => {
  calls.push(command.name);
  return sendCommand(command as never);
}) as typeof redis.sendCommand;

const request = (workspaceId: string, limits: Partial<TakeRequest> = {}): TakeRequest => ({
  workspaceId,
  projectId: `${workspaceId}-p`,
  requestsPerMinute: 1_000,
  monthlyQuota: 1_000_000,
  projectCap: null,
  now: Date.now(),
  ...limits,
});
const scripts = () => calls.filter((c) => c === 'evalsha' || c === 'eval').length;

// Connected before the first take (else the counters fall back to memory); the minute window is
// fixed: stay inside one.
t.before(async () => {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 61_000 - intoMinute));
});

t.test('a minute limit of 5: of 8 takes in one turn, the first 5 succeed', async (t) => {
  await counters.take(request('rate', { requestsPerMinute: 5 })); // seeds the month counter
  const before = scripts();
  const results = await Promise.all(
    Array.from({ length: 7 }, () => counters.take(request('rate', { requestsPerMinute: 5 }))),
  );
  t.equal(scripts() - before, 1, 'one script call for the seven takes');
  t.same(
    results.map((r) => r.outcome),
    ['ok', 'ok', 'ok', 'ok', 'rate_limited', 'rate_limited', 'rate_limited'],
  );
  t.same(
    results.map((r) => r.minuteUsed),
    [2, 3, 4, 5, 5, 5, 5],
  );
  t.same(
    results.map((r) => r.monthUsed),
    [2, 3, 4, 5, 5, 5, 5],
  );
  t.same(
    results.map((r) => r.ticket?.where ?? null),
    ['redis', 'redis', 'redis', 'redis', null, null, null],
  );
  t.ok(results.every((r) => r.resetMs > 0 && r.resetMs <= 60_000));
  t.equal(await redis.get(`${prefix}q:rate:${monthOf(Date.now())}`), '5');
});

t.test('the quota is checked before the minute limit, as one take at a time would', async (t) => {
  await counters.take(request('quota', { monthlyQuota: 3, requestsPerMinute: 3 }));
  const results = await Promise.all(
    Array.from({ length: 4 }, () =>
      counters.take(request('quota', { monthlyQuota: 3, requestsPerMinute: 3 })),
    ),
  );
  t.same(
    results.map((r) => [r.outcome, r.monthUsed, r.minuteUsed]),
    [
      ['ok', 2, 2],
      ['ok', 3, 3],
      ['quota_exceeded', 3, 3],
      ['quota_exceeded', 3, 3],
    ],
  );
});

t.test('a project cap counts and refuses per project', async (t) => {
  const capped = { projectCap: 2 };
  const results = await Promise.all(Array.from({ length: 4 }, () => counters.take(request('cap', capped))));
  t.same(
    results.map((r) => [r.outcome, r.projectUsed, r.monthUsed]),
    [
      ['ok', 1, 1],
      ['ok', 2, 2],
      ['project_cap_exceeded', 2, 2],
      ['project_cap_exceeded', 2, 2],
    ],
  );
  t.same(
    results.map((r) => r.ticket?.project ?? null),
    [true, true, null, null],
  );
});

t.test('takes of different workspaces in one turn are counted apart', async (t) => {
  const results = await Promise.all([
    counters.take(request('one', { requestsPerMinute: 1 })),
    counters.take(request('two', { requestsPerMinute: 1 })),
    counters.take(request('one', { requestsPerMinute: 1 })),
    counters.take(request('two', { requestsPerMinute: 1 })),
  ]);
  t.same(
    results.map((r) => [r.outcome, r.minuteUsed]),
    [
      ['ok', 1],
      ['ok', 1],
      ['rate_limited', 1],
      ['rate_limited', 1],
    ],
  );
});

t.test('takes of one workspace for two projects or two plans in one turn are batched apart', async (t) => {
  // One workspace, three batches in one turn: project a under 1,000 per minute, project b under
  // the same limits, project a under a plan of 2 per minute (the plan changed mid-turn).
  const a = request('mixed', { projectId: 'mixed-a', projectCap: 10 });
  const b = request('mixed', { projectId: 'mixed-b', projectCap: 10 });
  const small = request('mixed', { projectId: 'mixed-a', projectCap: 10, requestsPerMinute: 2 });
  // One unit of each project first: their month counters are then in Redis (no seeding below).
  await counters.take(a);
  await counters.take(b);
  const before = scripts();
  const results = await Promise.all([
    counters.take(a),
    counters.take(b),
    counters.take(small),
    counters.take(a),
    counters.take(small),
    counters.take(b),
  ]);
  t.equal(scripts() - before, 3, 'one script call per project and plan');
  // The batches run in the order their first take came: a (2 units), b (2), then the small plan's,
  // which finds the workspace's minute at 6 of 2 already.
  t.same(
    results.map((r) => [r.outcome, r.minuteUsed, r.monthUsed, r.projectUsed]),
    [
      ['ok', 3, 3, 2],
      ['ok', 5, 5, 2],
      ['rate_limited', 6, 6, 3],
      ['ok', 4, 4, 3],
      ['rate_limited', 6, 6, 3],
      ['ok', 6, 6, 3],
    ],
  );
  // Every granted take of a batch carries the same ticket, naming its own project.
  t.equal(results[0]!.ticket, results[3]!.ticket);
  t.same(
    results.map((r) => r.ticket?.projectId ?? null),
    ['mixed-a', 'mixed-b', null, 'mixed-a', null, 'mixed-b'],
  );
  t.equal(monthOf(Date.now()), results[0]!.ticket!.month);
});

t.test('a batch gathers the takes of two turns; a take of the third turn goes in the next', async (t) => {
  // Decision 0040: the takes of the turn of a batch's first take and of the next turn go out as
  // one script call. Asked one per turn (as the requests of a loaded server arrive), three takes
  // make two calls: the first two together, the third on its own.
  await counters.take(request('turns')); // seeds the month counter
  const before = scripts();
  const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
  const first = counters.take(request('turns'));
  await nextTurn();
  t.equal(scripts() - before, 0, 'nothing sent at the end of the first turn');
  const second = counters.take(request('turns'));
  await nextTurn();
  t.equal(scripts() - before, 1, 'the takes of both turns in one call');
  const third = counters.take(request('turns'));
  const results = await Promise.all([first, second, third]);
  t.equal(scripts() - before, 2, 'the third take in a call of its own');
  t.same(
    results.map((r) => [r.outcome, r.monthUsed, r.minuteUsed]),
    [
      ['ok', 2, 2],
      ['ok', 3, 3],
      ['ok', 4, 4],
    ],
  );
});
