/**
 * The counters of a worker of `server serve --workers N` with the embedded defaults: the primary
 * process owns the one set of in-process counters (counter-host.ts), so limits, quotas and caps are
 * exact across workers. Each take is one question to the primary; the takes, keeps and gives of
 * one event-loop turn travel as one message and their answers as one message, in order.
 */
import type { Counters, TakeRequest, TakeResult, Ticket } from '../limits/counters.js';
import { isOurs, type CounterAnswers, type CounterBatch, type CounterOp } from './messages.js';

/** How long a take waits for the primary before the request answers 503. */
const TAKE_TIMEOUT_MS = 5_000;

export interface IpcChannel {
  send(message: CounterBatch, callback?: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

interface Pending {
  resolve(result: TakeResult): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
}

export class IpcCounters implements Counters {
  private ops: CounterOp[] = [];
  private scheduled = false;
  private nextId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly listener = (message: unknown) => {
    if (isOurs<CounterAnswers>(message) && message.ipscope === 'counter-answers') this.answered(message);
  };

  constructor(private readonly channel: IpcChannel) {
    channel.on('message', this.listener);
  }

  take(request: TakeRequest): Promise<TakeResult> {
    const id = this.nextId++;
    return new Promise<TakeResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`the primary process did not answer a take within ${TAKE_TIMEOUT_MS} ms`));
      }, TAKE_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer });
      this.queue({ op: 'take', id, request });
    });
  }

  async give(ticket: Ticket): Promise<void> {
    this.queue({ op: 'give', ticket });
  }

  keep(ticket: Ticket): void {
    this.queue({ op: 'keep', ticket });
  }

  async ping(): Promise<void> {}

  /** Sends what is queued and waits until it left this process. */
  async close(): Promise<void> {
    this.channel.off('message', this.listener);
    await this.flush();
  }

  private queue(op: CounterOp): void {
    this.ops.push(op);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private flush(): Promise<void> {
    this.scheduled = false;
    if (this.ops.length === 0) return Promise.resolve();
    const ops = this.ops;
    this.ops = [];
    // The callback runs once the message is written (or could not be).
    return new Promise((resolve) => {
      this.channel.send({ ipscope: 'counters', ops }, (error) => {
        if (error) this.failAll(ops, error);
        resolve();
      });
    });
  }

  private failAll(ops: CounterOp[], error: Error): void {
    for (const op of ops) {
      if (op.op !== 'take') continue;
      const p = this.pending.get(op.id);
      if (!p) continue;
      clearTimeout(p.timer);
      this.pending.delete(op.id);
      p.reject(error);
    }
  }

  private answered(message: CounterAnswers): void {
    for (const answer of message.answers) {
      const p = this.pending.get(answer.id);
      if (!p) continue;
      clearTimeout(p.timer);
      this.pending.delete(answer.id);
      if (answer.result) p.resolve(answer.result);
      else p.reject(new Error(answer.error ?? 'the primary process refused the take'));
    }
  }
}
