/**
 * The request state a Redis take holds dies young (docs/decisions/0037-no-per-turn-map-churn.md).
 * RedisCounters over the server's own Redis client (connectRedis) and the real Redis of
 * TEST_REDIS_URL, under the server's V8 flags: 2,000 turns of 25 takes, each take holding about
 * 5 KB (as a request holds its answer) until its result comes. Promotion into the old generation
 * happens only at young collections, so the old space's growth between turns, summed, is what
 * survived them. Measured here: about 595 bytes per take with the per-turn Map cleared instead of
 * replaced (the chain of Map tables kept every turn's takes alive), about 190 with the client's
 * auto-pipelining on, 64–87 with both fixed.
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import { openAccountsStore } from '../../../accounts/sqlite-store.js';
import { UsageLedger } from '../../../server/limits/usage-ledger.js';
import { RedisCounters } from '../../../server/limits/redis-counters.js';
import { connectRedis } from '../../../server/limits/from-settings.js';
import type { TakeRequest } from '../../../server/limits/counters.js';
import { TEST_REDIS_URL, requireSharedStores, uniqueNamespace } from '../../helpers/limits.js';
import { applyServerV8Flags } from '../../../server/v8-flags.js';

// As every server process runs (0024): else V8 may pretenure the payloads' allocation sites at
// random, and everything they allocate lands in the old generation whatever the counters do.
applyServerV8Flags();

requireSharedStores('redis');
const { prefix } = uniqueNamespace(t, 'young');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'redis-young-'));
const store = openAccountsStore(path.join(work, 'accounts.sqlite'));
const ledger = new UsageLedger({ store, flushMs: 60_000 });
const redis = connectRedis(TEST_REDIS_URL);
const counters = new RedisCounters({ redis, prefix, store, ledger });
t.teardown(async () => {
  await counters.close();
  redis.disconnect();
  await store.close();
  fs.rmSync(work, { recursive: true, force: true });
});

const TAKES_PER_TURN = 25;
const request = (): TakeRequest => ({
  workspaceId: 'young',
  projectId: 'young-p',
  requestsPerMinute: 1_000_000_000,
  monthlyQuota: 1_000_000_000_000,
  projectCap: null,
  now: Date.now(),
});
const oldSpaceUsed = () =>
  v8.getHeapSpaceStatistics().find((s) => s.space_name === 'old_space')!.space_used_size;

/** One turn of takes, each holding a request-sized payload until its result; their outcomes. */
function turn(): Promise<string[]> {
  return new Promise((resolve, reject) => {
    setImmediate(() => {
      const takes: Promise<string>[] = [];
      for (let k = 0; k < TAKES_PER_TURN; k++) {
        const held = { answer: `${'x'.repeat(4_000)}${k}`, parts: new Array<number>(100).fill(k) };
        takes.push(counters.take(request()).then((r) => (held.parts.length === 100 ? r.outcome : 'lost')));
      }
      Promise.all(takes).then(resolve, reject);
    });
  });
}

t.before(async () => {
  if (redis.status !== 'ready') await new Promise((resolve) => redis.once('ready', resolve));
});

t.test('2,000 turns of 25 takes: under 130 bytes per take reach the old generation', async (t) => {
  // Warm-up: the month counter seeded, the code compiled, the heap at its working size.
  for (let i = 0; i < 400; i++) await turn();
  let promoted = 0;
  let outcomes = 0;
  const takes = 2_000 * TAKES_PER_TURN;
  let before = oldSpaceUsed();
  for (let i = 0; i < 2_000; i++) {
    const results = await turn();
    outcomes += results.filter((o) => o === 'ok').length;
    const after = oldSpaceUsed();
    // A full collection shrinks the old space; only growth is promotion.
    if (after > before) promoted += after - before;
    before = after;
  }
  t.equal(outcomes, takes, 'every take was granted');
  const perTake = promoted / takes;
  t.ok(perTake < 130, `${perTake.toFixed(0)} bytes per take promoted (under 130)`);
  // Redis counted them all: 400 warm-up turns and these.
  const month = new Date().toISOString().slice(0, 7);
  t.equal(Number(await redis.get(`${prefix}q:young:${month}`)), 2_400 * TAKES_PER_TURN);
});

t.test('takes of three workspaces in one turn: three scripts, one write to the socket', async (t) => {
  const stream = redis.stream as unknown as {
    _write(...args: unknown[]): void;
    _writev(chunks: unknown[], ...rest: unknown[]): void;
  };
  const writes: number[] = [];
  const write = stream._write.bind(stream);
  const writev = stream._writev.bind(stream);
  stream._write = (...args) => {
    writes.push(1);
    write(...args);
  };
  stream._writev = (chunks, ...rest) => {
    writes.push(chunks.length);
    writev(chunks, ...rest);
  };
  t.teardown(() => {
    stream._write = write;
    stream._writev = writev;
  });
  // Seeded first, so that the turn below is one script each.
  const of = (workspaceId: string) => ({ ...request(), workspaceId, projectId: `${workspaceId}-p` });
  for (const w of ['w1', 'w2', 'w3']) await counters.take(of(w));
  writes.length = 0;
  const results = await Promise.all(['w1', 'w2', 'w3', 'w1'].map((w) => counters.take(of(w))));
  t.same(
    results.map((r) => [r.outcome, r.monthUsed]),
    [
      ['ok', 2],
      ['ok', 2],
      ['ok', 2],
      ['ok', 3],
    ],
  );
  t.same(writes, [3], 'one writev of three scripts (w1 twice is one script)');
});
