/**
 * Addresses of the synthetic answers: formatted like real ones, drawn inside a provider's
 * published prefixes, or outside every list that could be found (plus a few private ones).
 */
import type { FeedRanges } from './feed-ranges.js';
import type { IntervalSet, IntervalSet4, Prefix4, Prefix6 } from './prefixes.js';
import { v6Value } from './prefixes.js';
import type { Mulberry32 } from './prng.js';
import {
  PRIVATE,
  PRIVATE_WEIGHT,
  UNLISTED,
  UNLISTED_V4_SLASH8,
  UNLISTED_V6_FIRST_GROUPS,
  UNLISTED_WEIGHT,
  type Provider,
} from './providers.js';

function formatV4(n: number): string {
  return `${n >>> 24}.${(n >>> 16) & 255}.${(n >>> 8) & 255}.${n & 255}`;
}

/** RFC 5952 text of eight 16-bit groups (same result as shared/ip.ts formatValue, without bigint). */
export function formatV6Groups(groups: readonly number[]): string {
  let bestStart = -1;
  let bestLength = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  if (bestLength < 2) return groups.map((g) => g.toString(16)).join(':');
  const head = groups.slice(0, bestStart).map((g) => g.toString(16));
  const tail = groups.slice(bestStart + bestLength).map((g) => g.toString(16));
  return `${head.join(':')}::${tail.join(':')}`;
}

/** A host address inside a prefix, shaped like real ones (zero middle groups, random interface id). */
function drawV6(prefix: Prefix6, rng: Mulberry32): string {
  const groups = prefix.groups.slice();
  for (let g = 0; g < 8; g++) {
    const hostStart = Math.max(prefix.length, g * 16);
    const bits = g * 16 + 16 - hostStart;
    if (bits <= 0) continue;
    const mask = bits >= 16 ? 0xffff : (1 << bits) - 1;
    let value: number;
    if (bits === 16 && (g === 4 || g === 5)) value = rng.next() < 0.85 ? 0 : rng.int(0x10000);
    else if (bits === 16 && g === 6) value = rng.next() < 0.5 ? 0 : rng.int(0x10000);
    else if (bits === 16 && g === 7) value = 1 + rng.int(0xffff);
    else if (g >= 2 && g <= 3 && rng.next() < 0.3) value = rng.int(16);
    else value = rng.int(0x10000);
    groups[g] = (groups[g]! & ~mask & 0xffff) | (value & mask);
  }
  return formatV6Groups(groups);
}

function drawV4(prefix: Prefix4, pool: number, rng: Mulberry32): string {
  if (prefix.size <= 2) return formatV4(prefix.base + rng.int(prefix.size));
  const room = Math.min(prefix.size - 2, pool);
  return formatV4(prefix.base + 1 + rng.int(room));
}

/** How many addresses an answer carries: 1 to 4. */
function answerSize(rng: Mulberry32): number {
  const u = rng.next();
  return u < 0.45 ? 1 : u < 0.75 ? 2 : u < 0.85 ? 3 : 4;
}

/** Answers drawn for the names, from one PRNG stream (the current domain's). */
export class AddressDrawer {
  private readonly providers: Provider[];
  private readonly listedV4: IntervalSet4;
  private readonly listedV6: IntervalSet;
  private readonly totalWeight: number;

  constructor(
    private readonly rng: Mulberry32,
    ranges: Pick<FeedRanges, 'providers' | 'listedV4' | 'listedV6'>,
  ) {
    this.providers = ranges.providers;
    this.listedV4 = ranges.listedV4;
    this.listedV6 = ranges.listedV6;
    this.totalWeight =
      this.providers.reduce((sum, p) => sum + p.weight, 0) + UNLISTED_WEIGHT + PRIVATE_WEIGHT;
  }

  /** A provider index for a new name, by weight (or UNLISTED, PRIVATE). */
  pickProvider(): number {
    let u = this.rng.next() * this.totalWeight;
    for (let i = 0; i < this.providers.length; i++) {
      u -= this.providers[i]!.weight;
      if (u < 0) return i;
    }
    return u < UNLISTED_WEIGHT ? UNLISTED : PRIVATE;
  }

  private unlistedV4(): string {
    for (;;) {
      const n =
        UNLISTED_V4_SLASH8[this.rng.int(UNLISTED_V4_SLASH8.length)]! * 0x1000000 + this.rng.int(0x1000000);
      const last = n & 255;
      if (last === 0 || last === 255 || this.listedV4.has(n)) continue;
      return formatV4(n);
    }
  }

  private unlistedV6(): string {
    for (;;) {
      const groups = [
        this.rng.pick(UNLISTED_V6_FIRST_GROUPS),
        this.rng.int(0x10000),
        this.rng.int(0x10000),
        this.rng.int(0x100),
        0,
        0,
        0,
        1 + this.rng.int(0xffff),
      ];
      if (groups[0] === 0x2003) groups[1] = groups[1]! & 0x1fff;
      if (this.listedV6.has(v6Value(groups))) continue;
      return formatV6Groups(groups);
    }
  }

  /** The addresses of one answer of a name on `provider` (none for IPv6 where it has no ranges). */
  drawSet(provider: number, family: 4 | 6): string[] {
    const p = provider >= 0 ? this.providers[provider]! : null;
    if (family === 6 && (provider === PRIVATE || (p && p.v6.length === 0))) return [];
    const count = provider === PRIVATE ? 1 + this.rng.int(2) : answerSize(this.rng);
    const out: string[] = [];
    for (let attempt = 0; out.length < count && attempt < count * 8; attempt++) {
      let address: string;
      if (provider === PRIVATE) address = formatV4(0x0a000000 + 1 + this.rng.int(0xfffffe));
      else if (!p) address = family === 4 ? this.unlistedV4() : this.unlistedV6();
      else if (family === 4) address = drawV4(this.rng.pick(p.v4), p.pool, this.rng);
      else address = drawV6(this.rng.pick(p.v6), this.rng);
      if (!out.includes(address)) out.push(address);
    }
    return out;
  }
}
