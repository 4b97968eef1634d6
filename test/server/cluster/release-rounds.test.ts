/**
 * The primary's release rounds (server/cluster/release-rounds.ts): stage, hold, swap, each step
 * only once every worker answered the one before, and no swap where the workers would not serve
 * the same release after it.
 */
import t from 'tap';
import { ReleaseRounds } from '../../../server/cluster/release-rounds.js';
import type { ReleaseHold, ReleaseStage, ReleaseSwap } from '../../../server/cluster/messages.js';

type Sent = ReleaseStage | ReleaseHold | ReleaseSwap;

function rig(workers: string[], timeouts = { stageMs: 5_000, holdMs: 1_000 }) {
  const listening = new Set(workers);
  const sent: string[] = [];
  const rounds = new ReleaseRounds<string>(
    () => listening,
    (w: string, m: Sent) => sent.push(`${w} ${m.ipscope} ${m.round}`),
    timeouts,
  );
  const take = () => sent.splice(0);
  t.teardown(() => rounds.stop());
  return { rounds, listening, take };
}

const NEW = '20300101T000000Z';
const OLD = '20261126T111205Z';

t.test('stage, then hold once all staged, then swap once all hold', async (t) => {
  const { rounds, take } = rig(['a', 'b']);
  rounds.start();
  t.same(take(), ['a release-stage 1', 'b release-stage 1']);
  rounds.start();
  t.same(take(), [], 'no second round while one is under way');
  rounds.staged('a', { ipscope: 'release-staged', round: 1, id: NEW, next: NEW });
  t.same(take(), [], 'b has not staged: nobody holds yet');
  rounds.staged('b', { ipscope: 'release-staged', round: 1, id: NEW, next: NEW });
  t.same(take(), ['a release-hold 1', 'b release-hold 1']);
  rounds.held('b', 1);
  t.same(take(), [], 'a does not hold yet: nobody swaps');
  rounds.held('b', 1);
  t.same(take(), [], 'the same answer twice counts once');
  rounds.held('a', 1);
  t.same(take(), ['a release-swap 1', 'b release-swap 1']);
  rounds.start();
  t.same(take(), ['a release-stage 2', 'b release-stage 2'], 'the next round may start');
});

t.test('nothing new: no hold, no swap', async (t) => {
  const { rounds, take } = rig(['a', 'b']);
  rounds.start();
  take();
  rounds.staged('a', { ipscope: 'release-staged', round: 1, id: null, next: OLD });
  rounds.staged('b', { ipscope: 'release-staged', round: 1, id: null, next: OLD });
  t.same(take(), []);
});

t.test('CURRENT changed between two workers reading it: no swap, the next round swaps', async (t) => {
  const { rounds, take } = rig(['a', 'b']);
  rounds.start();
  take();
  // a read CURRENT before it changed, b after: a would go on serving OLD.
  rounds.staged('a', { ipscope: 'release-staged', round: 1, id: null, next: OLD });
  rounds.staged('b', { ipscope: 'release-staged', round: 1, id: NEW, next: NEW });
  t.same(take(), [], 'neither holds nor swaps');
  rounds.start();
  t.same(take(), ['a release-stage 2', 'b release-stage 2']);
  rounds.staged('a', { ipscope: 'release-staged', round: 2, id: NEW, next: NEW });
  rounds.staged('b', { ipscope: 'release-staged', round: 2, id: NEW, next: NEW });
  rounds.held('a', 2);
  rounds.held('b', 2);
  t.same(take(), ['a release-hold 2', 'b release-hold 2', 'a release-swap 2', 'b release-swap 2']);
});

t.test('an answer of an earlier round or step is ignored', async (t) => {
  const { rounds, take } = rig(['a']);
  rounds.start();
  take();
  rounds.held('a', 1);
  rounds.staged('a', { ipscope: 'release-staged', round: 0, id: NEW, next: NEW });
  t.same(take(), [], 'a hold answer before the hold, and a stage answer of round 0');
  rounds.staged('a', { ipscope: 'release-staged', round: 1, id: NEW, next: NEW });
  t.same(take(), ['a release-hold 1']);
});

t.test('a worker that exits or does not answer is not waited for', async (t) => {
  const { rounds, listening, take } = rig(['a', 'b', 'c'], { stageMs: 50, holdMs: 50 });
  rounds.start();
  take();
  rounds.staged('a', { ipscope: 'release-staged', round: 1, id: NEW, next: NEW });
  rounds.staged('b', { ipscope: 'release-staged', round: 1, id: NEW, next: NEW });
  listening.delete('c');
  rounds.gone('c');
  t.same(take(), ['a release-hold 1', 'b release-hold 1'], 'c exited while staging');
  rounds.held('a', 1);
  t.same(take(), []);
  await new Promise((resolve) => setTimeout(resolve, 80));
  t.same(take(), ['a release-swap 1', 'b release-swap 1'], 'b did not hold within 50 ms');
});

t.test('stopped: no round starts, a step under way goes no further', async (t) => {
  const { rounds, take } = rig(['a'], { stageMs: 20, holdMs: 20 });
  rounds.start();
  take();
  rounds.stop();
  rounds.staged('a', { ipscope: 'release-staged', round: 1, id: NEW, next: NEW });
  rounds.start();
  await new Promise((resolve) => setTimeout(resolve, 40));
  t.same(take(), []);
});
