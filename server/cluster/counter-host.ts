/**
 * The primary side of ipc-counters.ts: one set of in-process counters (memory-counters.ts, with
 * the usage ledger that writes kept units to the accounts store) answering every worker. A batch
 * is applied in its order; takes of counters already in memory answer without waiting, so one
 * worker's batch never waits behind another's.
 */
import type { Counters, TakeResult } from '../limits/counters.js';
import type { CounterAnswers, CounterBatch } from './messages.js';

export class CounterHost {
  constructor(private readonly counters: Counters) {}

  /** Applies a worker's batch; `reply` gets the answers to its takes (once, when all are known). */
  handle(batch: CounterBatch, reply: (answers: CounterAnswers) => void): void {
    const answers: CounterAnswers['answers'] = [];
    const waiting: Array<Promise<void>> = [];
    for (const op of batch.ops) {
      if (op.op === 'keep') this.counters.keep(op.ticket);
      else if (op.op === 'give') void this.counters.give(op.ticket);
      else {
        const now = this.counters.takeNow?.(op.request);
        if (now !== undefined) answers.push({ id: op.id, result: now });
        else {
          const answer: { id: number; result?: TakeResult; error?: string } = { id: op.id };
          answers.push(answer);
          waiting.push(
            this.counters.take(op.request).then(
              (result) => void (answer.result = result),
              (error: Error) => void (answer.error = error.message),
            ),
          );
        }
      }
    }
    if (answers.length === 0) return;
    if (waiting.length === 0) reply({ ipscope: 'counter-answers', answers });
    else void Promise.all(waiting).then(() => reply({ ipscope: 'counter-answers', answers }));
  }
}
