/**
 * How many sign-in links and codes one address and one client may ask for per window. The counts
 * are shared by every process of the deployment (server/limits/window-limiter.ts: the primary of
 * `--workers N`, or Redis across replicas), so N workers or replicas do not multiply the limits.
 */
import { windowLimiter, type SharedStore, type WindowLimiter } from '../server/limits/window-limiter.js';

export class SendLimiter {
  private readonly perAddress: WindowLimiter;
  private readonly perClient: WindowLimiter;

  constructor(
    limits: { perAddress: number; perClient: number },
    windowMs: number,
    store: SharedStore = { kind: 'process' },
  ) {
    const durationS = Math.ceil(windowMs / 1000);
    this.perAddress = windowLimiter(store, { name: 'send-address', points: limits.perAddress, durationS });
    this.perClient = windowLimiter(store, { name: 'send-client', points: limits.perClient, durationS });
  }

  /** Counts one send for the address and the client; false (nothing counted) when either is over. */
  async take(address: string, client: string): Promise<boolean> {
    if (!(await this.perAddress.consume(address)).ok) return false;
    if ((await this.perClient.consume(client)).ok) return true;
    await this.perAddress.reward(address);
    return false;
  }
}
