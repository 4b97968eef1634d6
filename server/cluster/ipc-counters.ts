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
 * The limit headers of a unit handed out from a lease count the worker's own takes on top of the
 * primary's counts when it lent them; the other workers' takes since then show with the next lease.
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
  type CounterOp,
  type CounterRecall,
  type LeaseScope,
} from './messages.js';

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
  /** The units lent, one block per lend, handed out in order (each block's counts are its own). */
  blocks: Block[];
}

/** Units lent at once: the counts of the last one handed out (the limit headers), and how many are left. */
interface Block {
  minuteUsed: number;
  monthUsed: number;
  projectUsed: number;
  free: number;
}

const counts = ({ minuteUsed, monthUsed, projectUsed }: TakeResult) => ({
  minuteUsed,
  monthUsed,
  projectUsed,
});

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
    if (!isOurs<CounterAnswers | CounterRecall>(message)) return;
    if (message.ipscope === 'counter-answers') this.answered(message);
    else if (message.ipscope === 'counter-recall') this.recalled(message);
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
    let block = lease.blocks[0]!;
    if (block.free === 0) {
      lease.blocks.shift();
      block = lease.blocks[0]!;
    }
    block.free -= 1;
    block.minuteUsed += 1;
    block.monthUsed += 1;
    if (lease.scope.project) block.projectUsed += 1;
    return {
      outcome: 'ok',
      minuteUsed: block.minuteUsed,
      resetMs: window + MINUTE_MS - request.now,
      monthUsed: block.monthUsed,
      projectUsed: block.projectUsed,
      ticket: lease.ticket,
    };
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
      this.pending.set(id, { resolve, reject, timer, request, leaseKey: asks ? key : undefined });
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
    this.pending.set(id, { resolve: ignore, reject: ignore, timer, request, leaseKey: key, lend: true });
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
      const block = lease.blocks[0]!;
      block.free += 1;
      block.minuteUsed = Math.max(0, block.minuteUsed - 1);
      block.monthUsed = Math.max(0, block.monthUsed - 1);
      if (lease.scope.project) block.projectUsed = Math.max(0, block.projectUsed - 1);
      return;
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
      if (answer.lease && answer.result) this.leased(p.request, answer.result, answer.lease);
      else if (p.lend) this.dried(p.request);
      if (answer.result) p.resolve(answer.result);
      else p.reject(new Error(answer.error ?? 'the primary process refused the take'));
    }
  }

  /** Units lent, counted after `before`: a new lease, or more units of the one held. */
  private leased(request: TakeRequest, before: TakeResult, units: number): void {
    const { workspaceId, projectId, month, window, project } = before.ticket!;
    const key = leaseKeyOf(workspaceId, projectId);
    const held = this.leases.get(key);
    if (held !== undefined && fits(held, window, month, request)) {
      held.free += units;
      held.dry = false;
      held.blocks.push({ ...counts(before), free: units });
      return;
    }
    if (held !== undefined) this.giveBack(key, held);
    const scope = { workspaceId, projectId, month, window, project };
    this.leases.set(key, {
      scope,
      ticket: { ...scope, where: 'memory' },
      requestsPerMinute: request.requestsPerMinute,
      monthlyQuota: request.monthlyQuota,
      projectCap: request.projectCap,
      free: units,
      dry: false,
      blocks: [{ ...counts(before), free: units }],
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
