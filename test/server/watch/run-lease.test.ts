/**
 * A computation may outlast one run lease (209 s at full scale against WATCH_RUN_LEASE_MS's
 * 120 s): the computer renews its lease meanwhile, so no other process takes the pair over, and
 * the diff runs on a worker thread (server/watch/compute-thread.ts), so the process's own thread
 * keeps turning. The pair is the second release of the real-feed sequence against the first,
 * computed with a lease of a tenth of the time it takes; another owner asks for it all along.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { threadId } from 'node:worker_threads';
import { openAccountsStore } from '../../../accounts/index.js';
import { computeEventsOffThread } from '../../../server/watch/compute-thread.js';
import { computeReleaseEvents } from '../../../server/watch/runs.js';
import { buildReleaseSequence } from '../../helpers/release-sequence.js';
import { EXPECTED, watchedEntries } from '../../helpers/watch-expected.js';

// One release sequence for every test here (each has an accounts store of its own).
const shared = fs.mkdtempSync(path.join(os.tmpdir(), 'run-lease-'));
t.teardown(() => fs.rmSync(shared, { recursive: true, force: true }));
const sequence = await buildReleaseSequence(shared);

/** An accounts store of the test's own with the watched entries, and the sequence's first two releases. */
async function watching(t: Test) {
  const store = openAccountsStore(path.join(t.testdir({}), 'accounts.sqlite'));
  t.teardown(() => store.close());
  const ws = await store.createWorkspace({ name: 'acme' });
  const project = await store.createProject({ workspaceId: ws.id, name: 'web' });
  await store.addWatchEntries(project.id, watchedEntries(), 100);
  const [first, second] = sequence.ids.map((id) => ({
    id,
    file: path.join(sequence.releasesDir, `${id}.sqlite`),
  }));
  return { store, project, first: first!, second: second! };
}

t.test('the run lease is renewed while the pair is computed off the serving thread', async (t) => {
  const { store, first, second } = await watching(t);

  // How long the pair takes here, computed once on its own (nothing stored).
  const started = performance.now();
  const events = await computeEventsOffThread({
    olderFile: first.file,
    newerFile: second.file,
    entries: await store.listWatchEntries(),
  });
  const tookMs = performance.now() - started;
  t.equal(events.length, EXPECTED.length, 'the thread computes every watched change');
  // In chunks of 5 (each sent once the last was taken): the same events, in the same order.
  const chunked = await computeEventsOffThread({
    olderFile: first.file,
    newerFile: second.file,
    entries: await store.listWatchEntries(),
    chunk: 5,
  });
  t.same(
    chunked.map((e) => e.id),
    events.map((e) => e.id),
    `${Math.ceil(EXPECTED.length / 5)} chunks of at most 5 bring the same events`,
  );

  t.same(await computeReleaseEvents(store, sequence.releasesDir, first, 'a'), { status: 'started_chain' });
  const leaseMs = Math.max(20, Math.floor(tookMs / 10));
  t.ok(
    tookMs >= 3 * leaseMs,
    `the computation (${tookMs.toFixed(0)} ms) outlasts the lease (${leaseMs} ms) 3 times`,
  );

  // While `a` computes: `b` asks every few ms, and the gaps between this thread's ticks are kept.
  let done = false;
  const answers = new Set<string>();
  let widestGapMs = 0;
  let last = performance.now();
  const ticker = setInterval(() => {
    const at = performance.now();
    widestGapMs = Math.max(widestGapMs, at - last);
    last = at;
  }, 2);
  const computing = performance.now();
  const computation = computeReleaseEvents(store, sequence.releasesDir, second, 'a', { leaseMs });
  // `b` asks once `a` holds the lease, until `a` is done.
  const leased = async () =>
    (await store.listWatchRuns()).some((r) => r.release === second.id && r.leaseOwner === 'a');
  while (!(await leased())) await new Promise((resolve) => setTimeout(resolve, 1));
  const asking = (async () => {
    while (!done) {
      const answer = await store.claimWatchRun(second.id, 'b', leaseMs);
      answers.add(typeof answer === 'string' ? answer : `claimed after ${answer.previousRelease}`);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  const outcome = await computation;
  const computedMs = performance.now() - computing;
  done = true;
  await asking;
  clearInterval(ticker);

  t.match(outcome, { status: 'computed', events: EXPECTED.length, inserted: EXPECTED.length });
  t.ok(computedMs >= 3 * leaseMs, `computed in ${computedMs.toFixed(0)} ms, past 3 leases of ${leaseMs} ms`);
  t.same([...answers], ['held'], 'the other owner found the lease held all along');
  t.equal(await store.claimWatchRun(second.id, 'b', leaseMs), 'skip', 'and the run done after');
  t.same(
    (await store.listWatchRuns()).map((r) => [r.release, r.doneAt !== null, r.events]),
    [
      [first.id, true, 0],
      [second.id, true, EXPECTED.length],
    ],
  );
  t.ok(
    widestGapMs < computedMs / 3,
    `this thread (${threadId}) kept turning: widest gap ${widestGapMs.toFixed(0)} ms of ${computedMs.toFixed(0)} ms`,
  );
});

t.test('a thread that cannot open a release rejects with the reason', async (t) => {
  const dir = t.testdir({});
  await t.rejects(
    computeEventsOffThread({
      olderFile: path.join(dir, 'gone.sqlite'),
      newerFile: path.join(dir, 'gone-too.sqlite'),
      entries: [],
    }),
    { message: /^watch events thread: cannot open release .*gone\.sqlite/ },
  );
});

t.test(
  'a lease another process took over while this one computed: lost, the events left to it',
  async (t) => {
    const { store, project, first, second } = await watching(t);
    t.same(await computeReleaseEvents(store, sequence.releasesDir, first, 'a'), { status: 'started_chain' });
    const leaseMs = 20;
    const computation = computeReleaseEvents(store, sequence.releasesDir, second, 'a', { leaseMs });
    const leased = async () =>
      (await store.listWatchRuns()).some((r) => r.release === second.id && r.leaseOwner === 'a');
    while (!(await leased())) await new Promise((resolve) => setTimeout(resolve, 1));
    // `b` asks as of a moment past a's lease (a stalled heartbeat, a clock ahead): it takes the run.
    const takeover = await store.claimWatchRun(second.id, 'b', 60_000, new Date(Date.now() + 10 * leaseMs));
    t.same(takeover, { previousRelease: first.id }, 'b holds the run now');
    t.same(await computation, { status: 'lost', previous: first.id, renewalErrors: 0 });
    t.same(
      await store.listEvents({ projectId: project.id, limit: 1000 }),
      [],
      'a inserted none of the events',
    );
    t.same(
      (await store.listWatchRuns()).map((r) => [r.release, r.leaseOwner, r.doneAt !== null]),
      [
        [first.id, null, true],
        [second.id, 'b', false],
      ],
      'the run is b’s, not done',
    );
    const outcome = await computeReleaseEvents(store, sequence.releasesDir, second, 'b', {
      now: () => new Date(Date.now() + 10 * leaseMs),
    });
    t.match(outcome, { status: 'computed', events: EXPECTED.length, inserted: EXPECTED.length });
  },
);
