/**
 * Leases between the primary's counters (counter-host.ts over memory-counters.ts) and the counters
 * of `--workers N` workers (ipc-counters.ts), both real, joined by a channel that copies each
 * message through JSON on a later turn as node:cluster's IPC does. A worker hands out leased units
 * without a message; the last units of a limit are taken one at a time; a take is refused only once
 * every lease of its workspace came back; units not handed out come back when their minute ends
 * and when a worker stops; kept units reach the usage ledger summed.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { openAccountsStore } from '../../../accounts/index.js';
import { CounterHost } from '../../../server/cluster/counter-host.js';
import { IpcCounters, LEASE_UNITS, type IpcChannel } from '../../../server/cluster/ipc-counters.js';
import type { CounterBatch } from '../../../server/cluster/messages.js';
import {
  MINUTE_MS,
  monthOf,
  windowOf,
  type TakeRequest,
  type TakeResult,
} from '../../../server/limits/counters.js';
import { MemoryCounters } from '../../../server/limits/memory-counters.js';
import { UsageLedger } from '../../../server/limits/usage-ledger.js';
import { awaitMinuteRoom } from '../../helpers/limits.js';

const copy = <T>(message: T): T => JSON.parse(JSON.stringify(message)) as T;

/** A worker's counters joined to the host; `batches` is every message the worker sent. */
function worker(host: CounterHost) {
  const listeners = new Set<(message: unknown) => void>();
  const batches: CounterBatch[] = [];
  const peer = host.connect((message) => {
    const m = copy(message);
    setImmediate(() => {
      for (const listener of listeners) listener(m);
    });
  });
  const channel: IpcChannel = {
    send(message, callback) {
      batches.push(copy(message));
      const m = copy(message);
      setImmediate(() => {
        peer.handle(m);
        callback?.(null);
      });
      return true;
    },
    on: (_event, listener) => listeners.add(listener),
    off: (_event, listener) => listeners.delete(listener),
  };
  return { counters: new IpcCounters(channel), batches };
}

function request(over: Partial<TakeRequest> = {}): TakeRequest {
  return {
    workspaceId: 'w1',
    projectId: 'p1',
    requestsPerMinute: 1_000,
    monthlyQuota: 1_000_000,
    projectCap: null,
    now: Date.now(),
    ...over,
  };
}

/** As the meter does for a request: a leased unit without waiting, else a take through the primary. */
async function take(counters: IpcCounters, r: TakeRequest): Promise<TakeResult> {
  // Requests arrive on later turns of the event loop (where the worker's messages go out).
  await new Promise((resolve) => setImmediate(resolve));
  return counters.takeNow(r) ?? (await counters.take(r));
}

const ops = (batches: CounterBatch[], op: string) => batches.flatMap((b) => b.ops).filter((o) => o.op === op);

t.test('leased units need no round trip; the last ones are taken one at a time', async (t) => {
  const counters = new MemoryCounters({ ledger: null, load: async () => 0 });
  const host = new CounterHost(counters, { headroom: 200 });
  const a = worker(host);
  await awaitMinuteRoom(20);
  const results: TakeResult[] = [];
  for (let i = 0; i < 1_000; i++) results.push(await take(a.counters, request()));
  t.same(
    results.map((r) => r.outcome),
    Array(1_000).fill('ok'),
  );
  // One take of 1 + 128 units; a lease down to 64 asks for 128 more (5 times, up to 769 used), then
  // for the 31 that leave 200 free; the next lend gets none, and the last 200 are taken one at a time.
  t.equal(ops(a.batches, 'take').length, 1 + 200, 'takes through the primary');
  t.same(ops(a.batches, 'lend').length, 7, 'lends: 6 answered with units, 1 with none');
  // The 799 leased units are reported (`handed`, one op per turn here: each take has its own turn)
  // without waiting for any answer; the takes and lends above are the only round trips.
  const handed = ops(a.batches, 'handed');
  t.equal(
    handed.reduce((sum, o) => sum + (o.op === 'handed' ? o.units : 0), 0),
    1_000 - 201,
    'every leased unit reported once',
  );
  t.same(
    results.map((r) => r.minuteUsed),
    Array.from({ length: 1_000 }, (_, i) => i + 1),
    'alone, a worker reports the counts a single process would',
  );
  const refused = await take(a.counters, request());
  t.equal(refused.outcome, 'rate_limited');
  t.equal(refused.minuteUsed, 1_000);
  await a.counters.close();
});

t.test('a take is refused only after the other workers gave their leased units back', async (t) => {
  const counters = new MemoryCounters({ ledger: null, load: async () => 0 });
  const host = new CounterHost(counters, { headroom: 100 });
  const a = worker(host);
  const b = worker(host);
  await awaitMinuteRoom(20);
  const first = await take(a.counters, request());
  t.equal(first.outcome, 'ok');
  const lent = ops(a.batches, 'take').length;
  t.equal(lent, 1, 'one message took a unit and a lease');
  // b takes everything it can; a's lease of 64 units comes back when b would be refused.
  let served = 0;
  let last: TakeResult;
  for (;;) {
    last = await take(b.counters, request());
    if (last.outcome !== 'ok') break;
    served += 1;
  }
  t.equal(served + 1, 1_000, 'a limit of 1000 per minute served 1000, across both workers');
  t.equal(last.outcome, 'rate_limited');
  t.equal(ops(a.batches, 'return').length, 1, 'a gave its unused units back');
  t.same(ops(a.batches, 'return')[0], {
    op: 'return',
    scope: {
      workspaceId: 'w1',
      projectId: 'p1',
      month: monthOf(Date.now()),
      window: windowOf(Date.now()),
      project: false,
    },
    units: LEASE_UNITS,
  });
  t.equal(ops(a.batches, 'recalled').length >= 1, true, 'and answered the recall');
  t.equal((await take(a.counters, request())).outcome, 'rate_limited', 'a has nothing left either');
  await Promise.all([a.counters.close(), b.counters.close()]);
});

t.test('the quota of a capped project stays exact with leases', async (t) => {
  const counters = new MemoryCounters({ ledger: null, load: async () => 0 });
  const host = new CounterHost(counters, { headroom: 10 });
  const a = worker(host);
  const b = worker(host);
  await awaitMinuteRoom(20);
  const capped = (over: Partial<TakeRequest> = {}) =>
    request({ requestsPerMinute: 100_000, projectCap: 300, ...over });
  const results = await Promise.all(
    Array.from({ length: 400 }, (_, i) => take(i % 2 ? a.counters : b.counters, capped())),
  );
  const byOutcome = new Map<string, number>();
  for (const r of results) byOutcome.set(r.outcome, (byOutcome.get(r.outcome) ?? 0) + 1);
  t.same(Object.fromEntries(byOutcome), { ok: 300, project_cap_exceeded: 100 });
  await Promise.all([a.counters.close(), b.counters.close()]);
});

t.test('units not handed out come back when their minute ends, and when the worker stops', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'leases-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = openAccountsStore(path.join(dir, 'accounts.sqlite'));
  t.teardown(() => store.close());
  const ledger = new UsageLedger({ store, flushMs: 60_000 });
  const counters = new MemoryCounters({ ledger, load: async () => 0 });
  const host = new CounterHost(counters, { headroom: 0 });
  const a = worker(host);
  const window = await awaitMinuteRoom(20);
  const month = monthOf(window);
  for (let i = 0; i < 3; i++) {
    const r = await take(a.counters, request({ now: window + 1_000 }));
    t.equal(r.outcome, 'ok');
    a.counters.keep(r.ticket!);
  }
  t.equal(ops(a.batches, 'take').length, 1, 'one take, two leased units');
  // A take in the next minute gives the old lease's 62 free units back before it asks.
  const next = await take(a.counters, request({ now: window + MINUTE_MS + 1_000 }));
  t.equal(next.monthUsed, 4, 'the month counts the units handed out, not the lease');
  t.equal(next.minuteUsed, 1);
  const returns = ops(a.batches, 'return');
  t.same(
    returns.map((o) => (o.op === 'return' ? [o.scope.window, o.units] : [])),
    [[window, LEASE_UNITS - 2]],
  );
  // A leased unit given back goes to the lease: no message.
  const sent = a.batches.length;
  const given = await take(a.counters, request({ now: window + MINUTE_MS + 2_000 }));
  await a.counters.give(given.ticket!);
  a.counters.keep(next.ticket!);
  await new Promise((resolve) => setTimeout(resolve, 150));
  t.equal(a.batches.length, sent + 1, 'only the kept units went out, summed in one message');
  t.same(ops(a.batches, 'keep'), [{ op: 'keep', workspaceId: 'w1', projectId: 'p1', month, units: 4 }]);
  await a.counters.close();
  await new Promise((resolve) => setImmediate(resolve));
  const later = counters.takeNow(request({ now: window + MINUTE_MS + 3_000 }))!;
  t.equal(later.monthUsed, 5, 'the stopped worker gave its lease back: 4 kept units + this one');
  await ledger.close();
  t.equal(await store.getUsage('workspace', 'w1', month), 4, 'the kept units reached the accounts file');
});

t.test('limit headers count the units every worker handed out before', async (t) => {
  const counters = new MemoryCounters({ ledger: null, load: async () => 0 });
  const host = new CounterHost(counters, { headroom: 0 });
  const a = worker(host);
  const b = worker(host);
  await awaitMinuteRoom(20);
  const seen: Array<[number, number, number]> = [];
  for (let i = 0; i < 50; i++) {
    const r = await take(i % 2 === 0 ? a.counters : b.counters, request({ now: Date.now() }));
    t.equal(r.outcome, 'ok');
    // As a response does, wait until the primary has been told; then as a client does, a little more.
    await r.sent;
    for (let turn = 0; turn < 3; turn++) await new Promise((resolve) => setImmediate(resolve));
    seen.push([r.minuteUsed, r.monthUsed, r.projectUsed]);
  }
  t.same(
    seen.map(([minute]) => minute),
    Array.from({ length: 50 }, (_, i) => i + 1),
    'the minute count rises by one each time, whichever worker answers',
  );
  t.same(
    seen.map(([, month]) => month),
    Array.from({ length: 50 }, (_, i) => i + 1),
    'and the month count',
  );
  t.ok(ops(a.batches, 'take').length <= 2 && ops(b.batches, 'take').length <= 2, 'both served from leases');
  // Units lent and not handed out are not used: the primary's counts say 50.
  const refusedAt = counters.counted('w1', null, windowOf(Date.now()), monthOf(Date.now()));
  t.ok(refusedAt.minute > 50, `the counters hold the lent units too (${refusedAt.minute})`);
  await Promise.all([a.counters.close(), b.counters.close()]);
});
