/**
 * The fast lane's writes wait for the end of their event-loop turn (server/http/turn-writes.ts): none
 * runs while the turn goes on, all run in order right after it, and the 64th waiting one writes
 * them all at once.
 */
import t from 'tap';
import { createTurnWrites } from '../../server/http/turn-writes.js';

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

t.test('writes run in order at the end of the turn, not before', async (t) => {
  const turn = createTurnWrites();
  const done: number[] = [];
  for (let i = 0; i < 5; i++) turn.add(() => done.push(i));
  t.same(done, [], 'nothing written during the turn');
  await Promise.resolve();
  t.same(done, [], 'nor after the microtasks of the turn');
  await nextTurn();
  t.same(done, [0, 1, 2, 3, 4], 'all five, in order, once the turn ended');
  turn.add(() => done.push(5));
  await nextTurn();
  t.same(done, [0, 1, 2, 3, 4, 5], 'a later turn is written at its own end');
});

t.test('64 waiting: written at once', async (t) => {
  const turn = createTurnWrites();
  const done: number[] = [];
  for (let i = 0; i < 63; i++) turn.add(() => done.push(i));
  t.equal(done.length, 0, '63 wait');
  turn.add(() => done.push(63));
  t.equal(done.length, 64, 'the 64th writes all of them');
  t.same(done.slice(0, 3), [0, 1, 2], 'in order');
  turn.add(() => done.push(64));
  t.equal(done.length, 64, 'the next one waits again');
  await nextTurn();
  t.equal(done.length, 65, 'and is written at the end of the turn');
  await nextTurn();
  t.equal(done.length, 65, 'nothing is written twice');
});
