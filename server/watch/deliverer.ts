/**
 * The delivery worker (docs/decisions/0034): claims due deliveries under a lease, sends each once
 * (send.ts), records the attempt with the next one's time from RETRY_SCHEDULE_MS, and e-mails the
 * workspace's owners when a day of failures disabled an endpoint. Any number of these, in any
 * number of processes, share one outbox: the lease gives each delivery to one of them at a time.
 */
import type { AccountsStore } from '../../accounts/index.js';
import type { ClaimedDelivery } from '../../accounts/watch-types.js';
import { SETTINGS } from '../../shared/config.js';
import type { Sender } from './send.js';

/** WEBHOOK_RETRY_SCHEDULE_MS's default, waits after failed attempts 1 to 7 (Standard Webhooks' schedule). */
export const RETRY_SCHEDULE_MS: readonly number[] =
  SETTINGS.WEBHOOK_RETRY_SCHEDULE_MS.schema.parse(undefined);
export const DISABLE_AFTER_MS = 86_400_000;
/** WEBHOOK_LEASE_MS's default. */
export const DELIVERY_LEASE_MS = SETTINGS.WEBHOOK_LEASE_MS.schema.parse(undefined);

export interface OwnerMail {
  send(mail: { to: string; subject: string; text: string }): Promise<void>;
}

export interface DelivererOptions {
  store: AccountsStore;
  sender: Sender;
  /** Names this process in leases and in the delivery log. */
  owner: string;
  mailer?: OwnerMail;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  clock?: () => Date;
  schedule?: readonly number[];
  disableAfterMs?: number;
  leaseMs?: number;
  /** Deliveries claimed (and sent concurrently) per round. */
  batch?: number;
}

export class Deliverer {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(private readonly options: DelivererOptions) {}

  private now(): Date {
    return this.options.clock?.() ?? new Date();
  }

  /** One round: claims what is due and attempts it; resolves with the number attempted. */
  async runOnce(): Promise<number> {
    const { store, owner } = this.options;
    const claimed = await store.claimDeliveries(
      owner,
      this.options.batch ?? 16,
      this.options.leaseMs ?? DELIVERY_LEASE_MS,
      this.now(),
    );
    await Promise.all(claimed.map((delivery) => this.attempt(delivery)));
    return claimed.length;
  }

  /** Rounds until nothing is due. */
  async drain(): Promise<number> {
    let total = 0;
    for (let n = await this.runOnce(); n > 0; n = await this.runOnce()) total += n;
    return total;
  }

  private async attempt(delivery: ClaimedDelivery): Promise<void> {
    const { store, sender } = this.options;
    const schedule = this.options.schedule ?? RETRY_SCHEDULE_MS;
    const result = await sender.send(
      delivery.url,
      delivery.eventId,
      delivery.payload,
      delivery.secrets,
      this.now(),
    );
    const wait = schedule[delivery.attempts];
    const next =
      result.ok || wait === undefined
        ? null
        : new Date(result.startedAt.getTime() + result.durationMs + wait);
    const { disabled } = await store.recordAttempt(
      delivery,
      result,
      next,
      this.options.disableAfterMs ?? DISABLE_AFTER_MS,
    );
    // The URL is logged, never the secrets or the body.
    this.options.log?.(result.ok ? 'webhook delivered' : 'webhook attempt failed', {
      event: delivery.eventId,
      endpoint: delivery.endpointId,
      attempt: delivery.attempts + 1,
      status: result.status,
      error: result.error,
    });
    if (disabled) await this.tellOwners(delivery);
  }

  private async tellOwners(delivery: ClaimedDelivery): Promise<void> {
    const { store, mailer } = this.options;
    const project = await store.findProject(delivery.projectId);
    if (!project || !mailer) return;
    const owners = (await store.listMembers(project.workspaceId)).filter((m) => m.role === 'owner');
    for (const owner of owners) {
      await mailer
        .send({
          to: owner.email,
          subject: `Webhook endpoint disabled: ${new URL(delivery.url).host}`,
          text:
            `Deliveries to ${delivery.url} (endpoint ${delivery.endpointId}, project "${project.name}") ` +
            `have failed for a day, so the endpoint was disabled. Its pending events wait: fix the ` +
            `receiver and enable the endpoint again in the console or with "npx server webhooks enable ${delivery.endpointId}".`,
        })
        .catch((error: Error) =>
          this.options.log?.('cannot e-mail a workspace owner', { error: error.message }),
        );
    }
  }

  /** Runs a round every `intervalMs` until stop(). */
  start(intervalMs: number): this {
    const tick = () => {
      if (this.stopped) return;
      this.running = this.runOnce().catch((error: Error) => {
        this.options.log?.('webhook round failed', { error: error.message });
        return 0;
      });
      void this.running.then((n) => {
        if (!this.stopped) this.timer = setTimeout(tick, n > 0 ? 0 : intervalMs);
      });
    };
    tick();
    return this;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}
