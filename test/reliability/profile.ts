/**
 * The sizes of the reliability tests: short in `make test` (bounded time on a loaded machine),
 * long in `make soak` (RELIABILITY=soak): 10 minutes of swaps under 100 keep-alive connections
 * (twice the 50 wrk connections of `make bench-api`), 200 builder kills, 20 server kills.
 */
const soak = process.env.RELIABILITY === 'soak';

function int(name: string, fallback: number): number {
  const value = process.env[name];
  if (value === undefined || value === '') return fallback;
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, not ${value}`);
  return n;
}

export const PROFILE = {
  name: soak ? 'soak' : 'test',
  /** Release swaps under load: how long, how many connections, a swap every swapMs. */
  swapSeconds: int('RELIABILITY_SWAP_SECONDS', soak ? 600 : 8),
  swapConnections: int('RELIABILITY_CONNECTIONS', soak ? 100 : 8),
  swapMs: int('RELIABILITY_SWAP_MS', soak ? 5000 : 400),
  /** SIGKILLs of `builder release` at random moments. */
  builderKills: int('RELIABILITY_BUILDER_KILLS', soak ? 200 : 20),
  /** SIGKILLs of a metered server under load (counted-usage loss). */
  serverKills: int('RELIABILITY_SERVER_KILLS', soak ? 20 : 3),
};
