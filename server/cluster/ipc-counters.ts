/**
 * The counters of a worker of `server serve --workers N` with the embedded defaults: the primary
 * process owns the one set of in-process counters (counter-host.ts), so limits, quotas and caps are
 * exact across workers.
 *
 * A take the worker cannot answer itself is one question to the primary; the takes, gives and
 * returns of one event-loop turn travel as one message and their answers as one message. With a
 * take the worker asks for a lease of up to LEASE_UNITS more units of the same counters, which the
 * primary grants while the budget is far from its limits: the next takes of that workspace and
 * project in the same minute window are then answered here, without a message (`takeNow`). Kept
 * units are summed and sent every KEEP_FLUSH_MS. Units of a lease not handed out go back to the
 * primary when its minute window ends, when the limits of the plan change, when the primary
 * recalls them (before it refuses anyone) and when the worker stops.
 *
 * The limit headers count units used, whichever worker took them (used-views.ts): a unit handed
 * out from a lease is reported to the primary in the batch of its turn (`handed`); the primary
 * sends the new counts to every worker holding a lease of that workspace or project at once, and
 * the call's response waits until the primary has acknowledged that batch (the take's `sent`,
 * which the meter's commit and release return as their `done`). The other workers' counts went
 * out before that acknowledgement, on the same channels as the connections the primary hands them. So a request that follows another one's response
 * sees it counted, whichever worker answered it; requests under way on two workers at the same
 * time may miss each other's unit (at most the units other workers handed out within one IPC round).
 */
import {
  monthOf,
  windowOf,
  MINUTE_MS,
  type Counters,
  type TakeRequest,
  type TakeResult,
  type Ticket,
} from '../limits/counters.js';
import {
  isOurs,
  type CounterAnswers,
  type CounterBatch,
  type CounterCounts,
  type CounterOp,
  type CounterRecall,
  type LeaseScope,
} from './messages.js';
import { UsedViews } from './used-views.js';

/** How long a take waits for the primary before the request answers 503. */
const TAKE_TIMEOUT_MS = 5_000;
/** The most units a worker asks the primary to lend at a time. */
export const LEASE_UNITS = 128;
/** A lease down to this many free units asks for more, so that takes seldom wait for the primary. */
const LEASE_LOW = LEASE_UNITS / 2;
/** How often kept units go to the primary (its usage ledger writes them every USAGE_FLUSH_MS). */
const KEEP_FLUSH_MS = 100;

export interface IpcChannel {
  send(message: CounterBatch, callback?: (error: Error | null) => void): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
  off(event: 'message', listener: (message: unknown) => void): unknown;
}

interface Pending {
  resolve(result: TakeResult): void;
  reject(error: Error): void;
  timer: NodeJS.Timeout;
  request: TakeRequest;
  /** The batch it went out in (0: not sent yet). */
  seq: number;
  /** The lease key, when this take asked for a lease. */
  leaseKey?: string;
  /** A lend (askMore): no request waits for it. */
  lend?: true;
}

const ignore = () => {};

/** Units lent by the primary that this worker hands out itself. */
interface Lease {
  scope: LeaseScope;
  /** The ticket of every unit handed out from it (shared: tickets are read, never changed). */
  ticket: Ticket;
  /** The limits they were lent under: a plan that changes takes from the primary again. */
  requestsPerMinute: number;
  monthlyQuota: number;
  projectCap: number | null;
  /** Units not handed out yet. */
  free: number;
  /** The primary lent no more to this lease (its budget is near a limit): it asks no more. */
  dry: boolean;
}

/** Whether a lease of minute `window` and `month` serves a request under its limits. */
function fits(lease: Lease, window: number, month: string, request: TakeRequest): boolean {
  return (
    lease.scope.window === window &&
    lease.scope.month === month &&
    lease.requestsPerMinute === request.requestsPerMinute &&
    lease.monthlyQuota === request.monthlyQuota &&
    lease.projectCap === request.projectCap
  );
}

const leaseKeyOf = (workspaceId: string, projectId: string) => `${workspaceId}\n${projectId}`;

export class IpcCounters implements Counters {
  private ops: CounterOp[] = [];
  private scheduled = false;
  private nextId = 1;
  /** The number of the last batch sent. */
  private seq = 0;
  /** Units of each lease handed out (or given back) since the last batch. */
  private readonly handedUnits = new Map<Lease, number>();
  /**
   * Resolves once the primary has counted the batch carrying the units handed out this turn (and
   * told the other workers holding leases of them): its `counter-counts` with that batch's `ack`.
   */
  private nextSent: { promise: Promise<void>; resolve(): void } | null = null;
  /** Batches with units handed out, sent and not acknowledged yet: [seq, resolve] in order. */
  private readonly unacknowledged: Array<[number, () => void]> = [];
  /** What this worker knows of the units used. */
  private readonly views = new UsedViews();
  private readonly pending = new Map<number, Pending>();
  /** Takes (true) and lends (false) that timed out here, until their answers come. */
  private readonly expired = new Map<number, boolean>();
  private readonly leases = new Map<string, Lease>();
  /** Lease keys with a take asking for a lease in flight (one asks at a time). */
  private readonly asking = new Set<string>();
  private readonly kept = new Map<string, Extract<CounterOp, { op: 'keep' }>>();
  private keepTimer: NodeJS.Timeout | null = null;
  private windowTimer: NodeJS.Timeout | null = null;
  private readonly listener = (message: unknown) => {
    if (!isOurs<CounterAnswers | CounterCounts | CounterRecall>(message)) return;
    if (message.ipscope === 'counter-answers') this.answered(message);
    else if (message.ipscope === 'counter-counts') {
      this.views.apply(message.counts, message.ack);
      this.acknowledged(message.ack);
    } else if (message.ipscope === 'counter-recall') this.recalled(message);
  };

  constructor(private readonly channel: IpcChannel) {
    channel.on('message', this.listener);
  }

  /** A unit of a lease, when this worker holds one that fits the request. */
  takeNow(request: TakeRequest): TakeResult | undefined {
    const key = leaseKeyOf(request.workspaceId, request.projectId);
    const lease = this.leases.get(key);
    if (lease === undefined) return undefined;
    const window = windowOf(request.now);
    if (!fits(lease, window, monthOf(request.now), request)) {
      this.giveBack(key, lease);
      return undefined;
    }
    if (lease.free === 0) return undefined;
    if (lease.free <= LEASE_LOW && !lease.dry && !this.asking.has(key)) this.askMore(key, request);
    lease.free -= 1;
    const sent = this.hand(lease, 1);
    const used = this.views.used(lease.scope);
    return {
      outcome: 'ok',
      minuteUsed: used.minuteUsed,
      resetMs: window + MINUTE_MS - request.now,
      monthUsed: used.monthUsed,
      projectUsed: used.projectUsed,
      ticket: lease.ticket,
      sent,
    };
  }

  /**
   * Units of a lease handed out here (negative: given back to it): counted in this worker's view at
   * once, reported in this turn's batch; the promise resolves once the primary acknowledged it.
   */
  private hand(lease: Lease, units: number): Promise<void> {
    this.views.handed(lease.scope, units);
    this.handedUnits.set(lease, (this.handedUnits.get(lease) ?? 0) + units);
    if (this.nextSent === null) {
      let resolve!: () => void;
      const promise = new Promise<void>((r) => (resolve = r));
      this.nextSent = { promise, resolve };
    }
    this.schedule();
    return this.nextSent.promise;
  }

  take(request: TakeRequest): Promise<TakeResult> {
    const now = this.takeNow(request);
    if (now !== undefined) return Promise.resolve(now);
    const id = this.nextId++;
    const key = leaseKeyOf(request.workspaceId, request.projectId);
    const asks = !this.asking.has(key);
    if (asks) this.asking.add(key);
    return new Promise<TakeResult>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.settle(id);
        this.expired.set(id, true);
        reject(new Error(`the primary process did not answer a take within ${TAKE_TIMEOUT_MS} ms`));
      }, TAKE_TIMEOUT_MS);
      this.pending.set(id, { resolve, reject, timer, request, seq: 0, leaseKey: asks ? key : undefined });
      this.queue({ op: 'take', id, request, lease: asks ? LEASE_UNITS : 0 });
    });
  }

  /** Asks the primary for more units of a lease that runs low (no request waits for them). */
  private askMore(key: string, request: TakeRequest): void {
    const id = this.nextId++;
    this.asking.add(key);
    const timer = setTimeout(() => {
      this.settle(id);
      this.expired.set(id, false);
    }, TAKE_TIMEOUT_MS);
    this.pending.set(id, {
      resolve: ignore,
      reject: ignore,
      timer,
      request,
      seq: 0,
      leaseKey: key,
      lend: true,
    });
    this.queue({ op: 'lend', id, request, units: LEASE_UNITS });
  }

  async give(ticket: Ticket): Promise<void> {
    // A unit of a lease still held goes back to the lease: the primary counts it there already.
    const lease = this.leases.get(leaseKeyOf(ticket.workspaceId, ticket.projectId));
    if (
      lease !== undefined &&
      lease.scope.window === ticket.window &&
      lease.scope.month === ticket.month &&
      lease.scope.project === ticket.project
    ) {
      lease.free += 1;
      return this.hand(lease, -1);
    }
    this.queue({ op: 'give', ticket });
  }

  keep(ticket: Ticket): void {
    const key = `${ticket.workspaceId}\n${ticket.projectId}\n${ticket.month}`;
    const entry = this.kept.get(key);
    if (entry) entry.units += 1;
    else {
      const { workspaceId, projectId, month } = ticket;
      this.kept.set(key, { op: 'keep', workspaceId, projectId, month, units: 1 });
    }
    this.keepTimer ??= setTimeout(() => {
      this.keepTimer = null;
      this.queueKept();
    }, KEEP_FLUSH_MS);
  }

  async ping(): Promise<void> {}

  /** Gives back every lease, sends what is queued and waits until it left this process. */
  async close(): Promise<void> {
    this.channel.off('message', this.listener);
    for (const [key, lease] of this.leases) this.giveBack(key, lease);
    if (this.keepTimer) clearTimeout(this.keepTimer);
    if (this.windowTimer) clearTimeout(this.windowTimer);
    this.keepTimer = this.windowTimer = null;
    this.queueKept();
    await this.flush();
    // No acknowledgement is heard any more: the responses waiting for one leave now.
    this.acknowledged(Infinity);
  }

  private queueKept(): void {
    for (const op of this.kept.values()) this.queue(op);
    this.kept.clear();
  }

  /** The lease's free units go back to the primary; the lease is gone. */
  private giveBack(key: string, lease: Lease): void {
    this.leases.delete(key);
    if (lease.free > 0) this.queue({ op: 'return', scope: lease.scope, units: lease.free });
  }

  private queue(op: CounterOp): void {
    this.ops.push(op);
    this.schedule();
  }

  /** Sends this turn's operations at its end (one message a turn). */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private flush(): Promise<void> {
    this.scheduled = false;
    for (const [lease, units] of this.handedUnits) {
      if (units !== 0) this.ops.push({ op: 'handed', scope: lease.scope, units });
    }
    this.handedUnits.clear();
    const sent = this.nextSent;
    this.nextSent = null;
    if (this.ops.length === 0) {
      sent?.resolve();
      return Promise.resolve();
    }
    const ops = this.ops;
    this.ops = [];
    const seq = ++this.seq;
    this.views.sent(seq);
    for (const op of ops) {
      if (op.op === 'take' || op.op === 'lend') {
        const p = this.pending.get(op.id);
        if (p !== undefined) p.seq = seq;
      }
    }
    if (sent !== null) this.unacknowledged.push([seq, sent.resolve]);
    // The callback runs once the message is written (or could not be).
    return new Promise((resolve) => {
      this.channel.send({ ipscope: 'counters', seq, ops }, (error) => {
        if (error) {
          this.failAll(ops, error);
          // Never counted: no one waits for an answer that will not come.
          this.acknowledged(seq);
        }
        resolve();
      });
    });
  }

  /** The primary has counted this worker's batches up to `ack`. */
  private acknowledged(ack: number): void {
    while (this.unacknowledged.length > 0 && this.unacknowledged[0]![0] <= ack) {
      this.unacknowledged.shift()![1]();
    }
  }

  private settle(id: number): Pending | undefined {
    const p = this.pending.get(id);
    if (!p) return undefined;
    clearTimeout(p.timer);
    this.pending.delete(id);
    if (p.leaseKey !== undefined) this.asking.delete(p.leaseKey);
    return p;
  }

  private failAll(ops: CounterOp[], error: Error): void {
    for (const op of ops) if (op.op === 'take' || op.op === 'lend') this.settle(op.id)?.reject(error);
  }

  private answered(message: CounterAnswers): void {
    for (const answer of message.answers) {
      const p = this.settle(answer.id);
      if (!p) {
        // Timed out here: the units go back (a take's own one, and those lent with it).
        const ownUnit = this.expired.get(answer.id);
        this.expired.delete(answer.id);
        const ticket = answer.result?.ticket;
        const units = (answer.lease ?? 0) + (ownUnit && answer.result?.outcome === 'ok' ? 1 : 0);
        if (ticket && units > 0) this.queue({ op: 'return', scope: ticket, units });
        continue;
      }
      if (answer.lease && answer.result) this.leased(p.request, answer.result, answer.lease, p.seq);
      else if (p.lend) this.dried(p.request);
      if (answer.result) p.resolve(answer.result);
      else p.reject(new Error(answer.error ?? 'the primary process refused the take'));
    }
  }

  /** Units lent after `before` (its counts as the primary answered batch `seq`): a new lease, or more units of the one held. */
  private leased(request: TakeRequest, before: TakeResult, units: number, seq: number): void {
    const { workspaceId, projectId, month, window, project } = before.ticket!;
    const key = leaseKeyOf(workspaceId, projectId);
    const held = this.leases.get(key);
    if (held !== undefined && fits(held, window, month, request)) {
      held.free += units;
      held.dry = false;
      return;
    }
    if (held !== undefined) this.giveBack(key, held);
    const scope = { workspaceId, projectId, month, window, project };
    this.views.prune(window, month);
    this.views.seed(scope, before, seq);
    this.leases.set(key, {
      scope,
      ticket: { ...scope, where: 'memory' },
      requestsPerMinute: request.requestsPerMinute,
      monthlyQuota: request.monthlyQuota,
      projectCap: request.projectCap,
      free: units,
      dry: false,
    });
    // The leases of a window that ended go back then, also when no take comes to notice it.
    if (this.windowTimer === null) this.endWindowAt(window);
  }

  private endWindowAt(window: number): void {
    this.windowTimer = setTimeout(() => this.endWindow(), window + MINUTE_MS - Date.now() + 10);
    this.windowTimer.unref();
  }

  /** A lend answered with nothing: the lease it was for asks no more. */
  private dried(request: TakeRequest): void {
    const lease = this.leases.get(leaseKeyOf(request.workspaceId, request.projectId));
    if (lease !== undefined) lease.dry = true;
  }

  private endWindow(): void {
    this.windowTimer = null;
    const window = windowOf(Date.now());
    for (const [key, lease] of this.leases) if (lease.scope.window < window) this.giveBack(key, lease);
    if (this.leases.size > 0) this.endWindowAt(window);
  }

  private recalled(message: CounterRecall): void {
    for (const [key, lease] of this.leases) {
      if (lease.scope.workspaceId === message.workspaceId || lease.scope.projectId === message.projectId) {
        this.giveBack(key, lease);
      }
    }
    this.queue({ op: 'recalled', id: message.id });
  }
}
