/**
 * The primary side of ipc-counters.ts: one set of in-process counters (memory-counters.ts, with
 * the usage ledger that writes kept units to the accounts store) answering every worker.
 *
 * A take may lend the worker more units of the same counters (a lease), which the worker then hands
 * out itself without asking: the counters count them from the moment they are lent, so no limit is
 * ever passed. Units are lent only while more than `headroom` stay free, so the last units of every
 * budget are taken one at a time, in the order the takes arrive. Before a take is refused, every
 * worker holding a lease of that workspace or project is asked to give its units back (a recall),
 * and the take is tried again: a limit of L serves exactly L, whichever workers the requests reach.
 *
 * The limit headers report units *used*: counted ones less those lent and not handed out yet
 * (lent-units.ts). A worker says which units of its leases it handed out (`handed`) in the batch
 * it sends before the responses of those calls leave; after every batch that changed what is used
 * of a workspace or project, each worker holding a lease of it gets the new counts
 * (`counter-counts`, with the last batch of its own they include), so the next response of any
 * worker counts the units every other worker had handed out by then (docs/operations.md, "Workers").
 */
import type { MemoryCounters } from '../limits/memory-counters.js';
import { MINUTE_MS, monthOf, windowOf, type TakeRequest, type TakeResult } from '../limits/counters.js';
import { LentUnits, counterKeys, type PeerLent } from './lent-units.js';
import type {
  CounterAnswers,
  CounterBatch,
  CounterCounts,
  CounterOp,
  CounterRecall,
  LeaseScope,
  UsedCount,
} from './messages.js';

/** How long a recall waits for a worker's answer; one that does not answer keeps its units. */
const RECALL_TIMEOUT_MS = 1_000;

export interface CounterHostOptions {
  /** Leased units are lent only while more than this many of each limit stay free. */
  headroom: number;
}

/** One worker as the host sees it: what it sends in, where the answers and recalls go. */
export interface CounterPeer {
  handle(batch: CounterBatch): void;
  /** The worker is gone: its leases stay counted (how many it handed out is unknown). */
  closed(): void;
}

type HostMessage = CounterAnswers | CounterCounts | CounterRecall;

interface PeerState {
  send(message: HostMessage): void;
  /** Workspaces and projects this worker may hold leased units of. */
  workspaces: Set<string>;
  projects: Set<string>;
  recalls: Map<number, () => void>;
  /** Its lent units not handed out yet. */
  lent: PeerLent;
  /** Its last batch applied. */
  seq: number;
}

type Answer = CounterAnswers['answers'][number];

/** The workspaces (with their window and month) and capped projects whose used units changed. */
interface Changed {
  workspaces: Map<string, { window: number; month: string }>;
  projects: Map<string, string>;
}

type Scoped = Pick<LeaseScope, 'workspaceId' | 'projectId' | 'window' | 'month' | 'project'>;

function scopeOf(request: TakeRequest): Scoped {
  return {
    workspaceId: request.workspaceId,
    projectId: request.projectId,
    window: windowOf(request.now),
    month: monthOf(request.now),
    project: request.projectCap !== null,
  };
}

export class CounterHost {
  private readonly peers = new Set<PeerState>();
  private readonly lent = new LentUnits();
  private nextRecall = 1;
  /** Recalls not answered yet: a take refused meanwhile waits for them too. */
  private readonly recalling = new Set<Promise<void>>();

  constructor(
    private readonly counters: MemoryCounters,
    private readonly options: CounterHostOptions,
  ) {}

  connect(send: (message: HostMessage) => void): CounterPeer {
    const peer: PeerState = {
      send,
      workspaces: new Set(),
      projects: new Set(),
      recalls: new Map(),
      lent: new Map(),
      seq: 0,
    };
    this.peers.add(peer);
    return {
      handle: (batch) => this.handle(peer, batch),
      closed: () => {
        this.peers.delete(peer);
        for (const done of peer.recalls.values()) done();
        peer.recalls.clear();
        this.lent.drop(peer.lent);
      },
    };
  }

  /**
   * Applies a batch in its order. The answers known at once go back in one message, then the new
   * counts; each take that waits (a counter to load, a recall) is answered alone when it is known.
   * So a lease always reaches its worker before any recall the host sends after lending it.
   */
  private handle(peer: PeerState, batch: CounterBatch): void {
    const answers: Answer[] = [];
    const later: Array<{ op: Extract<CounterOp, { op: 'take' }>; now: TakeResult | undefined }> = [];
    const changed: Changed = { workspaces: new Map(), projects: new Map() };
    let handed = false;
    for (const op of batch.ops) {
      switch (op.op) {
        case 'keep':
          this.counters.keepUnits(op.workspaceId, op.projectId, op.month, op.units);
          break;
        case 'give':
          void this.counters.give(op.ticket);
          this.mark(changed, op.ticket);
          break;
        case 'handed':
          handed = true;
          this.lent.change(peer.lent, op.scope, -op.units);
          this.mark(changed, op.scope);
          break;
        case 'return':
          this.counters.giveUnits(op.scope, op.units);
          this.lent.change(peer.lent, op.scope, -op.units);
          this.mark(changed, op.scope);
          break;
        case 'recalled': {
          const done = peer.recalls.get(op.id);
          peer.recalls.delete(op.id);
          done?.();
          break;
        }
        case 'lend': {
          const before = this.used(op.request);
          const lent = this.lendTo(peer, op.request, op.units);
          answers.push(lent ? { id: op.id, result: before, lease: lent.units } : { id: op.id });
          break;
        }
        case 'take': {
          const now = this.counters.takeNow(op.request);
          if (now !== undefined && now.outcome === 'ok') {
            answers.push(this.answer(peer, op.id, op.request, now, op.lease));
            this.mark(changed, scopeOf(op.request));
            break;
          }
          later.push({ op, now });
        }
      }
    }
    peer.seq = batch.seq;
    // Sent before any recall that the takes below may send.
    if (answers.length > 0) peer.send({ ipscope: 'counter-answers', answers });
    const told = this.sendCounts(changed);
    // Units handed out wait for this batch to be counted and told to the other workers: the
    // sender hears so, with its counts or, if it got none, alone (ipc-counters.ts, `sent`).
    if (handed && !told.has(peer)) {
      peer.send({ ipscope: 'counter-counts', ack: peer.seq, counts: [] });
    }
    for (const { op, now } of later) {
      this.takeRecalling(op.request, now).then(
        (result) => {
          peer.send({
            ipscope: 'counter-answers',
            answers: [this.answer(peer, op.id, op.request, result, op.lease)],
          });
          const again: Changed = { workspaces: new Map(), projects: new Map() };
          this.mark(again, scopeOf(op.request));
          this.sendCounts(again);
        },
        (error: Error) =>
          peer.send({ ipscope: 'counter-answers', answers: [{ id: op.id, error: error.message }] }),
      );
    }
  }

  /** The answer to a take: its result in units used, and units lent after it when asked for. */
  private answer(
    peer: PeerState,
    id: number,
    request: TakeRequest,
    result: TakeResult,
    lease: number,
  ): Answer {
    const used = this.asUsed(request, result);
    const lent = result.outcome === 'ok' && lease > 0 ? this.lendTo(peer, request, lease) : undefined;
    return lent === undefined ? { id, result: used } : { id, result: used, lease: lent.units };
  }

  /** A result of the counters with the lent units not handed out yet left out. */
  private asUsed(request: TakeRequest, result: TakeResult): TakeResult {
    const keys = counterKeys(scopeOf(request));
    return {
      ...result,
      minuteUsed: result.minuteUsed - this.lent.of(keys.minute),
      monthUsed: result.monthUsed - this.lent.of(keys.month),
      projectUsed: result.projectUsed - this.lent.of(keys.project),
    };
  }

  /** The units used of the request's counters now, as a take's result before it. */
  private used(request: TakeRequest): TakeResult {
    const scope = scopeOf(request);
    const counted = this.counters.counted(
      scope.workspaceId,
      scope.project ? scope.projectId : null,
      scope.window,
      scope.month,
    );
    return this.asUsed(request, {
      outcome: 'ok',
      minuteUsed: counted.minute,
      resetMs: scope.window + MINUTE_MS - request.now,
      monthUsed: counted.month,
      projectUsed: counted.project,
      ticket: { ...scope, where: 'memory' },
    });
  }

  /** Units lent to the worker, which is then asked for them before anyone of theirs is refused. */
  private lendTo(peer: PeerState, request: TakeRequest, units: number) {
    const lent = this.counters.lend(request, units, this.options.headroom);
    if (lent !== undefined) {
      peer.workspaces.add(request.workspaceId);
      peer.projects.add(request.projectId);
      this.lent.change(peer.lent, lent.before.ticket!, lent.units);
    }
    return lent;
  }

  private mark(changed: Changed, scope: Scoped): void {
    changed.workspaces.set(scope.workspaceId, { window: scope.window, month: scope.month });
    if (scope.project) changed.projects.set(scope.projectId, scope.month);
  }

  /** The units used of what changed, to every worker holding a lease of it; the workers told. */
  private sendCounts(changed: Changed): Set<PeerState> {
    const told = new Set<PeerState>();
    if (changed.workspaces.size === 0 && changed.projects.size === 0) return told;
    const workspaces: UsedCount[] = [];
    for (const [id, { window, month }] of changed.workspaces) {
      const counted = this.counters.counted(id, null, window, month);
      const keys = counterKeys({ workspaceId: id, projectId: '', window, month, project: false });
      workspaces.push({
        kind: 'workspace',
        id,
        window,
        month,
        minuteUsed: counted.minute - this.lent.of(keys.minute),
        monthUsed: counted.month - this.lent.of(keys.month),
      });
    }
    const projects: UsedCount[] = [];
    for (const [id, month] of changed.projects) {
      const counted = this.counters.counted('', id, 0, month);
      const keys = counterKeys({ workspaceId: '', projectId: id, window: 0, month, project: true });
      projects.push({ kind: 'project', id, month, used: counted.project - this.lent.of(keys.project) });
    }
    for (const peer of this.peers) {
      const counts = [
        ...workspaces.filter((c) => peer.workspaces.has(c.id)),
        ...projects.filter((c) => peer.projects.has(c.id)),
      ];
      if (counts.length > 0) {
        peer.send({ ipscope: 'counter-counts', ack: peer.seq, counts });
        told.add(peer);
      }
    }
    return told;
  }

  /** The take (`first`: its answer without waiting, if there was one); refused only once no worker holds a lease of it. */
  private async takeRecalling(request: TakeRequest, first: TakeResult | undefined): Promise<TakeResult> {
    let result = first ?? (await this.counters.take(request));
    // A recall gives units back; new ones are not lent this close to a limit, so this ends.
    for (let i = 0; i < 3 && result.outcome !== 'ok'; i++) {
      if (!(await this.recall(request.workspaceId, request.projectId))) break;
      result = await this.counters.take(request);
    }
    return result;
  }

  /**
   * Asks every worker that may hold units of the workspace or project for them, and waits for
   * their answers and for any recall still under way; false: no unit can come back.
   */
  private async recall(workspaceId: string, projectId: string): Promise<boolean> {
    const holders = [...this.peers].filter((p) => p.workspaces.has(workspaceId) || p.projects.has(projectId));
    if (holders.length === 0 && this.recalling.size === 0) return false;
    if (holders.length > 0) {
      const asked = Promise.all(holders.map((peer) => this.recallFrom(peer, workspaceId, projectId)));
      const done = asked.then(() => void this.recalling.delete(done));
      this.recalling.add(done);
    }
    await Promise.all(this.recalling);
    return true;
  }

  private recallFrom(peer: PeerState, workspaceId: string, projectId: string): Promise<void> {
    // The worker gives back every lease of either, so it holds none of them after its answer.
    peer.workspaces.delete(workspaceId);
    peer.projects.delete(projectId);
    const id = this.nextRecall++;
    return new Promise<void>((resolve) => {
      const timer = setTimeout(() => {
        peer.recalls.delete(id);
        resolve();
      }, RECALL_TIMEOUT_MS);
      peer.recalls.set(id, () => {
        clearTimeout(timer);
        resolve();
      });
      peer.send({ ipscope: 'counter-recall', id, workspaceId, projectId });
    });
  }
}
