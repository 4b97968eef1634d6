/**
 * How many sign-in links and codes one address and one client may ask for per window. In this
 * process's memory: a replica set multiplies the limits by its size, which still stops mail bombing.
 */
export class SendLimiter {
  private readonly sent = new Map<string, number[]>();

  constructor(
    private readonly limits: { perAddress: number; perClient: number },
    private readonly windowMs: number,
  ) {}

  /** Counts one send for the address and the client; false (nothing counted) when either is over. */
  take(address: string, client: string, now = Date.now()): boolean {
    const a = this.recent(`address\u0000${address}`, now);
    const c = this.recent(`client\u0000${client}`, now);
    if (a.length >= this.limits.perAddress || c.length >= this.limits.perClient) return false;
    a.push(now);
    c.push(now);
    return true;
  }

  private recent(key: string, now: number): number[] {
    const times = (this.sent.get(key) ?? []).filter((t) => now - t < this.windowMs);
    if (times.length === 0) this.sent.delete(key);
    else this.sent.set(key, times);
    if (this.sent.size > 100_000) this.sent.clear(); // bounded memory under a flood of addresses
    const kept = this.sent.get(key) ?? [];
    this.sent.set(key, kept);
    return kept;
  }
}
