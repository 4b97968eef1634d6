/**
 * Watches in a running server process (docs/decisions/0034): every round it looks at the release
 * the process serves and, when it is one it has not handled, computes that release's events
 * under the run lease (runs.ts: whichever process of the deployment takes the lease computes, the
 * others skip), then runs the delivery worker (deliverer.ts) whose row lease gives each due
 * delivery to one process at a time. Every process (a single server, each worker of
 * `--workers N`, each replica) runs one: nothing is elected, the two leases decide.
 *
 * The computation runs on a worker thread with its own handles of both release files
 * (compute-thread.ts): the serving thread keeps answering, and a swap and the old handle's close
 * meanwhile cannot cut it short.
 */
import os from 'node:os';
import path from 'node:path';
import type { AccountsStore } from '../../accounts/index.js';
import type { Release } from '../../shared/queries/index.js';
import { DELIVERY_LEASE_MS, Deliverer, type OwnerMail } from './deliverer.js';
import { computeReleaseEvents, type RunOutcome } from './runs.js';
import { createSender, timeoutsWithin, type Sender } from './send.js';
import type { GuardOptions } from './ssrf.js';

export interface WatchServiceOptions {
  store: AccountsStore;
  releasesDir: string;
  /** The release this process serves now. */
  current: () => Release | null;
  /** WEBHOOK_DELIVERY: false computes events (the change feed) but sends nothing. */
  deliver: boolean;
  /** WEBHOOK_POLL_MS: the pause between rounds when nothing was due. */
  intervalMs: number;
  guard: GuardOptions;
  mailer?: OwnerMail;
  log: (level: 'info' | 'warn', message: string, fields?: Record<string, unknown>) => void;
  /** WEBHOOK_RETRY_SCHEDULE_MS (default: deliverer.ts's RETRY_SCHEDULE_MS). */
  schedule?: readonly number[];
  /** WEBHOOK_LEASE_MS: a claimed delivery's lease (default DELIVERY_LEASE_MS). */
  leaseMs?: number;
  /** WATCH_RUN_LEASE_MS: a release computation's lease (default runs.ts's RUN_LEASE_MS). */
  runLeaseMs?: number;
  /** A seam for tests. */
  sender?: Sender;
}

export class WatchService {
  /** Names this process in both leases and the delivery log. */
  readonly owner = `${os.hostname()}:${process.pid}`;
  private readonly deliverer: Deliverer | null;
  private readonly sender: Sender | null;
  /** The last release handled (computed here or by another process, or skipped). */
  private handled: string | null = null;
  private timer: NodeJS.Timeout | null = null;
  private round: Promise<void> | null = null;
  private stopped = false;

  constructor(private readonly options: WatchServiceOptions) {
    const leaseMs = options.leaseMs ?? DELIVERY_LEASE_MS;
    this.sender = options.deliver
      ? (options.sender ?? createSender(options.guard, timeoutsWithin(leaseMs)))
      : null;
    this.deliverer =
      this.sender === null
        ? null
        : new Deliverer({
            store: options.store,
            sender: this.sender,
            owner: this.owner,
            mailer: options.mailer,
            schedule: options.schedule,
            leaseMs,
            log: (message, fields) =>
              options.log(message === 'webhook delivered' ? 'info' : 'warn', message, fields),
          });
  }

  /** The last release this process handled (its events computed here or by another process). */
  get handledRelease(): string | null {
    return this.handled;
  }

  /**
   * Computes the events of the release served now, once per release and process. While another
   * process holds the run's lease the release is not handled yet: that process may die before it
   * finishes, and the next round takes the lease once it expired.
   */
  async computeCurrent(): Promise<RunOutcome | null> {
    const id = this.options.current()?.id ?? null;
    if (id === null || id === this.handled) return null;
    const release = { id, file: path.join(this.options.releasesDir, `${id}.sqlite`) };
    const outcome = await computeReleaseEvents(
      this.options.store,
      this.options.releasesDir,
      release,
      this.owner,
      {
        leaseMs: this.options.runLeaseMs,
      },
    );
    if (outcome.status === 'held') return outcome;
    this.handled = id;
    if (outcome.status === 'computed')
      this.options.log('info', `watch events of release ${id} computed`, { release: id, ...outcome });
    else if (outcome.status === 'lost')
      this.options.log(
        'warn',
        `watch events of release ${id}: the run's lease went to another process while this one computed (it computes them)`,
        { release: id, previous: outcome.previous, renewalErrors: outcome.renewalErrors },
      );
    else if (outcome.status === 'missing_previous')
      this.options.log(
        'warn',
        `watch events of release ${id} not computed: the previous release ${outcome.previous} is not in ${this.options.releasesDir}`,
        { release: id, previous: outcome.previous },
      );
    return outcome;
  }

  private async once(): Promise<number> {
    try {
      await this.computeCurrent();
    } catch (error) {
      // handled stays: the next round tries again (the lease expires if this process held it).
      this.options.log('warn', 'watch events not computed', { error: (error as Error).message });
    }
    if (this.deliverer === null || this.stopped) return 0;
    try {
      return await this.deliverer.runOnce();
    } catch (error) {
      this.options.log('warn', 'webhook round failed', { error: (error as Error).message });
      return 0;
    }
  }

  /** Rounds until stop(): at once again while deliveries were due, else after intervalMs. */
  start(): this {
    const tick = () => {
      if (this.stopped) return;
      const round = this.once();
      this.round = round.then(() => {});
      void round.then((n) => {
        if (!this.stopped) this.timer = setTimeout(tick, n > 0 ? 0 : this.options.intervalMs).unref();
      });
    };
    tick();
    return this;
  }

  /** Waits for the round in progress (an attempt lasts 15 s at most), then closes the sender. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.round;
    await this.sender?.close();
  }
}
