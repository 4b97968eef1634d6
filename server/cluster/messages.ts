/**
 * The messages between the primary process of `server serve --workers N` and its workers, over
 * node:cluster's IPC channel (JSON). Every message of ours carries `ipscope`, so the channel can
 * also carry rate-limiter-flexible's cluster messages (the refused-key throttle) untouched.
 */
import type { TakeRequest, TakeResult, Ticket } from '../limits/counters.js';

/** Worker → primary: the counter operations of one event-loop turn, in the order they happened. */
export interface CounterBatch {
  ipscope: 'counters';
  ops: CounterOp[];
}

export type CounterOp =
  | { op: 'take'; id: number; request: TakeRequest }
  | { op: 'keep'; ticket: Ticket }
  | { op: 'give'; ticket: Ticket };

/** Primary → worker: the answers to the takes of one batch. */
export interface CounterAnswers {
  ipscope: 'counter-answers';
  answers: Array<{ id: number; result?: TakeResult; error?: string }>;
}

/** Primary → workers: open the release CURRENT names now, if it is new, and say which it is. */
export interface ReleaseStage {
  ipscope: 'release-stage';
  round: number;
}

/** Worker → primary: the release staged in this round (null: nothing new). */
export interface ReleaseStaged {
  ipscope: 'release-staged';
  round: number;
  id: string | null;
}

/** Primary → workers: every worker has answered the round: serve the staged release now. */
export interface ReleaseSwap {
  ipscope: 'release-swap';
  round: number;
}

/** Worker → primary: listening (the address, for the one line the primary prints). */
export interface WorkerListening {
  ipscope: 'listening';
  url: string;
}

/** Primary → worker: stop taking requests, finish those in flight, exit. */
export interface WorkerDrain {
  ipscope: 'drain';
}

export type PrimaryMessage = CounterAnswers | ReleaseStage | ReleaseSwap | WorkerDrain;
export type WorkerMessage = CounterBatch | ReleaseStaged | WorkerListening;

export function isOurs<T extends { ipscope: string }>(message: unknown): message is T {
  return typeof message === 'object' && message !== null && 'ipscope' in message;
}
