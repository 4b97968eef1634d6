/**
 * How the primary of `server serve --workers N` leads its workers from one release to the next
 * (docs/decisions/0019), in three steps: every worker opens the new release ("stage"); once all
 * have, every worker holds the requests it receives ("hold"); once all hold, all serve the new
 * release, the held requests first ("swap"). So no worker answers from the old release after any
 * worker answered from the new one: a request sent after a new answer finds its worker holding or
 * swapped. The hold lasts one IPC round trip.
 *
 * A worker that does not answer a step in time is not waited for. Workers that would serve
 * different releases after the swap (CURRENT changed between two workers' reading of it) do not
 * swap: the next round finds them agreeing.
 */
import type { ReleaseHold, ReleaseStage, ReleaseStaged, ReleaseSwap } from './messages.js';

/** How long the primary waits for every worker to stage a release before the others go on. */
const STAGE_TIMEOUT_MS = 5_000;
/** How long the primary waits for every worker to hold its requests before the others swap. */
const HOLD_TIMEOUT_MS = 1_000;

type Step = 'stage' | 'hold';

interface Round<W> {
  round: number;
  step: Step;
  waiting: Set<W>;
  /** Whether some worker staged a new release. */
  any: boolean;
  /** The releases the workers would serve after the swap. */
  next: Set<string | null>;
  timer: NodeJS.Timeout;
}

export class ReleaseRounds<W> {
  private round = 0;
  private open: Round<W> | null = null;
  private stopped = false;

  constructor(
    /** The workers listening now. */
    private readonly workers: () => ReadonlySet<W>,
    private readonly send: (worker: W, message: ReleaseStage | ReleaseHold | ReleaseSwap) => void,
    private readonly timeouts = { stageMs: STAGE_TIMEOUT_MS, holdMs: HOLD_TIMEOUT_MS },
  ) {}

  /** Starts a round (every poll, and when a restarted worker listens), unless one is under way. */
  start(): void {
    if (this.open || this.stopped || this.workers().size === 0) return;
    this.round += 1;
    this.begin('stage');
  }

  staged(worker: W, message: ReleaseStaged): void {
    const open = this.answer(worker, message.round, 'stage');
    if (!open) return;
    if (message.id !== null) open.any = true;
    open.next.add(message.next);
    if (open.waiting.size === 0) this.advance();
  }

  held(worker: W, round: number): void {
    const open = this.answer(worker, round, 'hold');
    if (open && open.waiting.size === 0) this.advance();
  }

  /** A worker exited: the round does not wait for it. */
  gone(worker: W): void {
    if (this.open?.waiting.delete(worker) && this.open.waiting.size === 0) this.advance();
  }

  /** Stops: no more rounds or steps (the primary is draining its workers). */
  stop(): void {
    this.stopped = true;
    if (this.open) clearTimeout(this.open.timer);
    this.open = null;
  }

  private answer(worker: W, round: number, step: Step): Round<W> | null {
    const open = this.open;
    if (!open || open.round !== round || open.step !== step || !open.waiting.delete(worker)) return null;
    return open;
  }

  private begin(step: Step): void {
    const workers = this.workers();
    this.open = {
      round: this.round,
      step,
      waiting: new Set(workers),
      any: false,
      next: new Set(),
      timer: setTimeout(
        () => this.advance(),
        step === 'stage' ? this.timeouts.stageMs : this.timeouts.holdMs,
      ),
    };
    const ipscope = step === 'stage' ? 'release-stage' : 'release-hold';
    for (const w of workers) this.send(w, { ipscope, round: this.round });
  }

  private advance(): void {
    const open = this.open;
    if (!open) return;
    clearTimeout(open.timer);
    this.open = null;
    if (open.step === 'stage') {
      if (open.any && open.next.size === 1) this.begin('hold');
    } else {
      for (const w of this.workers()) this.send(w, { ipscope: 'release-swap', round: open.round });
    }
  }
}
