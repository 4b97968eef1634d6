/**
 * The messages between the primary process of `server serve --workers N` and its workers, over
 * node:cluster's IPC channel (JSON). Every message of ours carries `ipscope`, so the channel can
 * also carry rate-limiter-flexible's cluster messages (the refused-key throttle) untouched.
 */
import type { TakeRequest, TakeResult, Ticket } from '../limits/counters.js';

/** Worker → primary: the counter operations of one batch, in the order they happened. */
export interface CounterBatch {
  ipscope: 'counters';
  /** The worker's batch number, from 1 up: the counts it gets back say up to which one they include. */
  seq: number;
  ops: CounterOp[];
}

/** The counters a lease's units were taken from (a Ticket without its `where`). */
export interface LeaseScope {
  workspaceId: string;
  projectId: string;
  month: string;
  window: number;
  /** Whether the project's own counter holds the units too (capped projects). */
  project: boolean;
}

export type CounterOp =
  /** One unit; with `lease` > 0, up to that many more units for the worker to hand out itself. */
  | { op: 'take'; id: number; request: TakeRequest; lease: number }
  /** Up to `units` units for the worker to hand out itself, before its lease runs out. */
  | { op: 'lend'; id: number; request: TakeRequest; units: number }
  /**
   * Units of a lease the worker handed out (each one a call answered or under way), sent before
   * those calls' responses leave; negative: handed out, then given back to the lease (the call was
   * refused after all). The primary's counts of units used include them from then on.
   */
  | { op: 'handed'; scope: LeaseScope; units: number }
  /** Units handed out by the worker and kept (the durable usage), summed per workspace and project. */
  | { op: 'keep'; workspaceId: string; projectId: string; month: string; units: number }
  /** A unit the primary handed out, given back (the call was refused after all). */
  | { op: 'give'; ticket: Ticket }
  /** Leased units the worker did not hand out: the counters get them back. */
  | { op: 'return'; scope: LeaseScope; units: number }
  /** The worker holds no lease of the recall `id` any more (its units came back before this). */
  | { op: 'recalled'; id: number };

/**
 * Primary → worker: the answers to the takes and lends of one batch. `lease`: units lent after
 * `result` (a take's own unit; for a lend, the counts before the units lent). The counts of a
 * result are units used: lent units not handed out yet are not in them.
 */
export interface CounterAnswers {
  ipscope: 'counter-answers';
  answers: Array<{ id: number; result?: TakeResult; lease?: number; error?: string }>;
}

/**
 * The units used (taken by calls, not merely lent to workers) of a workspace's minute window and
 * month, or of a capped project's month, as the primary counts them.
 */
export type UsedCount =
  | { kind: 'workspace'; id: string; window: number; month: string; minuteUsed: number; monthUsed: number }
  | { kind: 'project'; id: string; month: string; used: number };

/**
 * Primary → worker: the units used of the workspaces and projects the worker holds leases of,
 * after every batch that changed them (from any worker): `ack` is the worker's last batch they
 * include.
 */
export interface CounterCounts {
  ipscope: 'counter-counts';
  ack: number;
  counts: UsedCount[];
}

/**
 * Primary → worker: a limit of this workspace or project is about to refuse someone: give back
 * the units of every lease of either, then answer `recalled`.
 */
export interface CounterRecall {
  ipscope: 'counter-recall';
  id: number;
  workspaceId: string;
  projectId: string;
}

/** Primary → workers: open the release CURRENT names now, if it is new, and say which it is. */
export interface ReleaseStage {
  ipscope: 'release-stage';
  round: number;
}

/**
 * Worker → primary: the release staged in this round (null: nothing new), and the one this worker
 * would serve after a swap (the staged one, else the one it serves; null: none).
 */
export interface ReleaseStaged {
  ipscope: 'release-staged';
  round: number;
  id: string | null;
  next: string | null;
}

/**
 * Primary → workers: every worker has staged a new release: hold the requests that arrive from
 * now on (unanswered) and say so.
 */
export interface ReleaseHold {
  ipscope: 'release-hold';
  round: number;
}

/** Worker → primary: this worker holds its requests. */
export interface ReleaseHeld {
  ipscope: 'release-held';
  round: number;
}

/** Primary → workers: every worker holds: serve the staged release now, the held requests first. */
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

export type PrimaryMessage =
  CounterAnswers | CounterCounts | CounterRecall | ReleaseStage | ReleaseHold | ReleaseSwap | WorkerDrain;
export type WorkerMessage = CounterBatch | ReleaseStaged | ReleaseHeld | WorkerListening;

export function isOurs<T extends { ipscope: string }>(message: unknown): message is T {
  return typeof message === 'object' && message !== null && 'ipscope' in message;
}
