/**
 * The addresses of the MMDB peer section (bench-peer.ts, issue 35): uniform random public IPv4
 * addresses, the workload the issue measured the peer on (a user's stream of arbitrary addresses,
 * most of which this service never saw in DNS), rather than the addresses of `ip_summary` that the
 * REST scenarios draw. Each address is a draw of 32 bits from a seeded PRNG (the generator's
 * Mulberry32), kept
 * unless `findIpBogon` calls it a bogon (a bogon `lookup_ip` is answered but not billed, so it
 * would not be metered) and unless it was drawn already: the same list in every run.
 */
import { findIpBogon } from '../../shared/bogons.js';
import { formatIpv4 } from '../../shared/ip.js';
import { Mulberry32 } from './observation-generator/prng.js';

/** Addresses in the peer section without --peer-addresses (the 100,000). */
export const PEER_ADDRESSES = 100_000;

/** `count` distinct public IPv4 addresses, drawn uniformly with `seed`. */
export function randomPublicIpv4(count: number, seed = 35): string[] {
  const random = new Mulberry32();
  random.reseed(seed);
  const seen = new Set<number>();
  const out: string[] = [];
  while (out.length < count) {
    const n = random.int(2 ** 32);
    if (seen.has(n)) continue;
    seen.add(n);
    if (findIpBogon({ version: 4, value: BigInt(n) }) !== null) continue;
    out.push(formatIpv4(n));
  }
  return out;
}
