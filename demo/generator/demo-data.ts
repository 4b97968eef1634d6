/**
 * The contents of the demo files: the seed list and one NDJSON observation file per round.
 */
import { DEMO_ROUNDS, ROUNDS } from './answers.js';
import { DEMO_DOMAINS } from './domains.js';

/** Seconds between two consecutive lines of a round. */
const LINE_SPACING_SECONDS = 5;

/** mulberry32: deterministic TTLs. */
function prng(seed: number): () => number {
  let state = seed | 0;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface DemoFiles {
  seed: string;
  rounds: string[];
}

/** The demo files' contents (pure: same output every call). */
export function buildDemoData(): DemoFiles {
  const seen = new Set<string>();
  for (const d of DEMO_DOMAINS) {
    if (seen.has(d.domain)) throw new Error(`duplicate demo domain ${d.domain}`);
    seen.add(d.domain);
    const labels = d.domain.split('.');
    const reserved =
      ['example.com', 'example.net', 'example.org'].includes(d.domain) ||
      (labels.length >= 2 && labels.at(-1) === 'example');
    if (!reserved || labels.length < 2) throw new Error(`${d.domain} is not under a reserved example domain`);
  }
  const seed = DEMO_DOMAINS.map((d, i) => `${i + 1},${d.domain}\n`).join('');
  const random = prng(20261001);
  const roundsOut: string[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const start = Date.parse(DEMO_ROUNDS[r]!);
    const lines: string[] = [];
    for (const d of DEMO_DOMAINS) {
      for (const [qname, plan] of [
        [d.domain, d.apex],
        [`www.${d.domain}`, d.www],
      ] as const) {
        for (const type of ['A', 'AAAA'] as const) {
          const answer = plan[type][r]!;
          const time = new Date(start + lines.length * LINE_SPACING_SECONDS * 1000)
            .toISOString()
            .replace('.000Z', 'Z');
          const line: Record<string, unknown> = {
            name: qname,
            type,
            time,
            outcome: answer.outcome,
            values: answer.values,
            cnames: answer.cnames,
          };
          if (answer.outcome === 'positive') line.ttl = 60 + Math.floor(random() * 240);
          else if (answer.outcome === 'nxdomain' || answer.outcome === 'nodata')
            line.ttl = 300 + Math.floor(random() * 600);
          lines.push(JSON.stringify(line));
        }
      }
    }
    roundsOut.push(`${lines.join('\n')}\n`);
  }
  return { seed, rounds: roundsOut };
}
