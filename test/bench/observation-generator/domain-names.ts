/**
 * Synthetic registered domains, unique and valid, by rank.
 */
import { Mulberry32, mix32 } from './prng.js';

// Lowercase ASCII letters only (no digits, no hyphens): the patterns below rely on it for uniqueness.
const WORDS = `
  acme alpha amber anchor apple arrow atlas aurora autumn axis badge bamboo banner basil beacon
  bear berry birch bison blade bloom blue bolt book boost brave bridge bright brook buffalo cactus
  camel canyon capital cargo castle cedar chart cherry cinema circle city clear cliff cloud clover
  coast cobalt comet coral cosmic cotton craft crane crest crystal cube daily dawn delta desert
  digital dragon dream drift eagle earth echo edge ember emerald engine epic falcon fern field
  finch flame fleet flint flora focus forest forge fox fresh frost galaxy garden gate giant
  glacier globe gold granite graph green grove harbor hawk hazel helix hill hive horizon hub iris
  iron island ivory jade jasmine jet jungle juniper karma kernel kite lake lantern laser leaf
  legend lemon level light lime linen lion logic lotus lunar magnet maple marble market meadow
  media mesa metro mint mirror mobile moon mosaic motion mountain nest net noble north nova oak
  oasis ocean olive omega onyx orbit orchid otter panda paper peak pearl pepper phoenix pilot pine
  pixel planet plaza polar prairie prime prism pulse quartz quest radar rain raven reef ridge
  river robin rocket rose ruby sage salt sand sapphire scout shadow shell shore signal silver sky
  snow solar sonic spark sphere spring spruce square star stone storm stream summit sun swift
  tango terra thunder tide tiger timber topaz tower trail travel tribe tulip tundra union urban
  valley vector velvet venture vertex violet vision vista volt wave willow wind wolf wonder world
  yarn zen zenith zephyr zinc news shop store tech games health finance sports music photo
`
  .split(/\s+/)
  .filter((w) => w.length > 0);
const TLDS = ['com', 'net', 'org', 'io', 'co', 'de', 'info', 'app', 'dev', 'me', 'fr', 'nl'];
const LETTERS = 'abcdefghijklmnopqrstuvwxyz';

/** A multiplier coprime with n (n > 1), so that k -> (k * a + b) mod n is a permutation. */
function coprimeMultiplier(n: number, rng: Mulberry32): number {
  const gcd = (x: number, y: number): number => (y === 0 ? x : gcd(y, x % y));
  let a = 1 + rng.int(Math.max(1, n - 1));
  while (gcd(a, n) !== 1) a = (a % (n - 1)) + 1;
  return a;
}

/**
 * Unique, valid registered domains by rank. Four patterns that can never collide because they
 * differ in whether the label holds a hyphen and/or a digit:
 *   `word.tld` (top ranks), `word-word.tld`, `word123.tld`, `d0000123-k.tld`.
 * The first three walk a scrambled enumeration of their combinations (an affine permutation), so
 * each combination is used at most once; when one runs out the generator falls back to the last.
 */
export class DomainNames {
  private readonly words: string[];
  private readonly single: { capacity: number; a: number; b: number; next: number };
  private readonly pair: { capacity: number; a: number; b: number; next: number };
  private readonly numbered: { capacity: number; a: number; b: number; next: number };
  readonly topCount: number;

  constructor(seed: number) {
    const rng = new Mulberry32();
    rng.reseed(mix32(seed, -7));
    const words = [...new Set(WORDS)];
    for (let i = words.length - 1; i > 0; i--) {
      const j = rng.int(i + 1);
      [words[i], words[j]] = [words[j]!, words[i]!];
    }
    this.words = words;
    const w = words.length;
    const make = (capacity: number) => ({
      capacity,
      a: coprimeMultiplier(capacity, rng),
      b: rng.int(capacity),
      next: 0,
    });
    this.single = make(w * TLDS.length);
    this.pair = make(w * w * TLDS.length);
    this.numbered = make(w * 999 * TLDS.length);
    this.topCount = Math.floor(this.single.capacity / 2);
  }

  private take(p: { capacity: number; a: number; b: number; next: number }): number | null {
    if (p.next >= p.capacity) return null;
    const k = p.next++;
    return (k * p.a + p.b) % p.capacity;
  }

  /** The domain of `rank` (1-based); `u` and `letter` come from the domain's PRNG stream. */
  name(rank: number, u: number, letter: number): string {
    const w = this.words.length;
    const t = TLDS.length;
    if (rank <= this.topCount) {
      const k = this.take(this.single);
      if (k !== null) return `${this.words[k % w]}.${TLDS[Math.floor(k / w)]}`;
    } else if (u < 0.45) {
      const k = this.take(this.pair);
      if (k !== null) {
        return `${this.words[k % w]}-${this.words[Math.floor(k / w) % w]}.${TLDS[Math.floor(k / (w * w))]}`;
      }
    } else if (u < 0.7) {
      const k = this.take(this.numbered);
      if (k !== null) {
        const n = 1 + (Math.floor(k / w) % 999);
        return `${this.words[k % w]}${n}.${TLDS[Math.floor(k / (w * 999))]}`;
      }
    }
    return `d${String(rank).padStart(7, '0')}-${LETTERS[letter % 26]}.${TLDS[letter % t]}`;
  }
}
