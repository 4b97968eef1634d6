/**
 * Generated DNS observation rounds for the as_of property test: names under reserved example
 * domains (RFC 2606, as the demo's) answering with real addresses of the committed feed excerpts,
 * one answer per name, record type and round, written in the observation format
 * (docs/observations-format.md). A round's lines are LINE_SPACING seconds apart, so a round lasts
 * exactly `roundSeconds(n)`: the tolerance decision 0033 allows on the DNS times that track the
 * last round. The scenarios: stable names, a move between providers, answers replaced each round
 * (seeded), a name failing transiently, one never answering, NXDOMAIN and back, a CNAME chain
 * changed, an AAAA record appearing and going, names sharing one address (paged reverse lookups),
 * addresses in AWS ranges that are dropped and added, on a churning Tor exit, in a mapping row
 * that changes AS or splits.
 */
import { Mulberry32 } from '../bench/observation-generator/prng.js';
import { TOR_STEADY } from './dated-feeds.js';

/** Seconds between two lines of a round. */
export const LINE_SPACING = 5;

type Outcome = 'positive' | 'nxdomain' | 'nodata' | 'timeout' | 'servfail';

interface Answer {
  outcome: Outcome;
  values: string[];
  cnames: string[];
}

const pos = (values: string[], cnames: string[] = []): Answer => ({ outcome: 'positive', values, cnames });
const NODATA: Answer = { outcome: 'nodata', values: [], cnames: [] };
const NX: Answer = { outcome: 'nxdomain', values: [], cnames: [] };
const TIMEOUT: Answer = { outcome: 'timeout', values: [], cnames: [] };
const SERVFAIL: Answer = { outcome: 'servfail', values: [], cnames: [] };

/** A name's answers for round r (0-based) of `rounds`. */
type Plan = (r: number, rng: Mulberry32) => { A: Answer; AAAA: Answer };

const steady =
  (a: Answer, aaaa: Answer = NODATA): Plan =>
  () => ({ A: a, AAAA: aaaa });

/** The address every "shared" name answers with (Cloudflare), the busiest reverse lookup. */
export const SHARED_V4 = '104.16.132.229';
export const SHARED_V6 = '2606:4700::6810:84e5';
const FASTLY_POOL = [
  '151.101.1.195',
  '151.101.65.195',
  '151.101.129.195',
  '151.101.193.195',
  '151.101.2.133',
];
const LINODE = '72.14.177.42';
const CLOUDFLARE_SHOP = ['104.21.48.7', '172.67.182.31'];

/**
 * The names of the rounds and their plans, given the number of rounds (0-based rounds).
 */
function plans(rounds: number): Array<[string, Plan]> {
  const third = Math.min(2, rounds - 1);
  const fourth = Math.min(3, rounds - 1);
  const late = Math.max(1, rounds - 1);
  const out: Array<[string, Plan]> = [
    [
      'stable.example',
      steady(pos(['23.228.249.10', '23.228.249.76']), pos(['2600:9000:3001:a400:9:6f0a:3c00:93a1'])),
    ],
    [
      'www.stable.example',
      steady(pos(['23.228.249.10', '23.228.249.76'], ['d111111abcdef8.cloudfront.net'])),
    ],
    [
      'moving.example',
      (r) => ({
        A: r < third ? pos([LINODE]) : pos(CLOUDFLARE_SHOP),
        AAAA: r < third ? pos(['2600:3c00::f03c:94ff:fe12:3456']) : pos(['2606:4700:3030::6815:3007']),
      }),
    ],
    // 120.52.22.96/27 (CloudFront) leaves the AWS list on day 2 and comes back later.
    ['dropped-range.example', steady(pos(['120.52.22.100']), pos(['2600:9000:3002:5c00:1f:e2b0:8dc0:93a1']))],
    // 15.181.240.0/21 joins the AWS list on day 2.
    ['added-range.example', (r) => ({ A: r === 0 ? NX : pos(['15.181.244.5']), AAAA: NODATA })],
    ['tor-exit.example', steady(pos([TOR_STEADY]))],
    [
      'flaky.example',
      (r) => ({
        A: r === 1 ? TIMEOUT : r === fourth ? SERVFAIL : pos(['34.35.12.7']),
        AAAA: r === 1 ? SERVFAIL : NODATA,
      }),
    ],
    ['failing.example', steady(TIMEOUT, SERVFAIL)],
    ['nx-back.example', (r) => ({ A: r >= fourth && r < late ? NX : pos(['24.144.100.12']), AAAA: NODATA })],
    [
      'www.cname.example',
      (r) => ({
        A: pos(
          ['104.16.133.229'],
          r < third
            ? ['cname.example.cdn.cloudflare.net']
            : ['edge.cname.example', 'cname.example.cdn.cloudflare.net'],
        ),
        AAAA: pos(
          ['2606:4700::6810:85e5'],
          r < third
            ? ['cname.example.cdn.cloudflare.net']
            : ['edge.cname.example', 'cname.example.cdn.cloudflare.net'],
        ),
      }),
    ],
    [
      'replaced.example',
      (_r, rng) => {
        const a = FASTLY_POOL[rng.int(FASTLY_POOL.length)]!;
        const b = FASTLY_POOL[rng.int(FASTLY_POOL.length)]!;
        return { A: pos(a === b ? [a] : [a, b]), AAAA: pos([`2a04:4e42::${(rng.int(4) + 1) * 100 + 23}`]) };
      },
    ],
    ['v6only.example', steady(NODATA, pos(['2600:1900:4280::1a']))],
    [
      'aaaa-toggle.example',
      (r) => ({
        A: pos(['5.101.98.20']),
        AAAA: r >= third && r < late ? pos(['2a03:b0c0:3:e0::1a:f001']) : NODATA,
      }),
    ],
    ['relay.example', steady(pos(['104.28.28.1']))],
    // 104.20.0.0 … 104.21.127.255 is a mapping row that splits on day 3.
    ['split-row.example', steady(pos(['104.20.1.1']))],
    ['gone.example', steady(NX, NX)],
    ['private.example', steady(pos(['10.20.30.40']))],
  ];
  // Names sharing one address, some leaving it: a reverse lookup of several pages.
  for (let i = 1; i <= 7; i++) {
    const leaves = i % 3 === 0 ? third : rounds;
    out.push([
      `shared-${i}.example`,
      (r) => ({
        A: r < leaves ? pos([SHARED_V4]) : pos(['104.21.48.7']),
        AAAA: r < leaves ? pos([SHARED_V6]) : NODATA,
      }),
    ]);
    out.push([`www.shared-${i}.example`, (r) => ({ A: r >= i % 4 ? pos([SHARED_V4]) : NX, AAAA: NODATA })]);
  }
  // Names whose answers change at random among a few real provider addresses.
  const pool = [
    '23.228.249.10',
    '15.181.232.17',
    '216.244.7.45',
    '34.35.12.8',
    '72.14.178.9',
    '24.144.100.13',
    SHARED_V4,
  ];
  for (let i = 1; i <= 6; i++) {
    out.push([
      `churn-${i}.example`,
      (_r, rng) => ({
        A: rng.next() < 0.1 ? TIMEOUT : pos([pool[rng.int(pool.length)]!]),
        AAAA: rng.next() < 0.5 ? NODATA : pos(['2606:4700:3034::ac43:b61f']),
      }),
    ]);
  }
  return out;
}

/** The names of the rounds (apex and www names as they are queried), and the registered domains. */
export function roundNames(rounds: number): string[] {
  return plans(rounds).map(([name]) => name);
}

/** The seed list (Tranco format) of the registered domains of the rounds. */
export function seedList(rounds: number): string {
  const domains = [...new Set(roundNames(rounds).map((n) => n.replace(/^www\./, '')))];
  return domains.map((d, i) => `${i + 1},${d}\n`).join('');
}

/** Lines per round (every name, A and AAAA). */
export function roundLines(rounds: number): number {
  return 2 * plans(rounds).length;
}

/** How long a round lasts: from its first line's time to its last's. */
export function roundSeconds(rounds: number): number {
  return (roundLines(rounds) - 1) * LINE_SPACING;
}

/** Round r (0-based) of `rounds`, its first query at `start` (epoch seconds): NDJSON text. */
export function roundFile(r: number, rounds: number, start: number, seed: number): string {
  const rng = new Mulberry32();
  let line = 0;
  const out: string[] = [];
  plans(rounds).forEach(([name, plan], i) => {
    rng.reseed(seed * 7919 + r * 104_729 + i);
    const answers = plan(r, rng);
    for (const type of ['A', 'AAAA'] as const) {
      const a = answers[type];
      const time = new Date((start + line++ * LINE_SPACING) * 1000).toISOString().replace('.000Z', 'Z');
      out.push(
        JSON.stringify({
          name,
          type,
          time,
          outcome: a.outcome,
          values: a.values,
          cnames: a.cnames,
          ttl: 300,
        }),
      );
    }
  });
  return `${out.join('\n')}\n`;
}

/** Every address any round may answer with (for the test's sample of IPs). */
export function roundAddresses(rounds: number, seed: number): string[] {
  const all = new Set<string>();
  for (let r = 0; r < rounds; r++) {
    for (const line of roundFile(r, rounds, 0, seed).trimEnd().split('\n'))
      for (const v of (JSON.parse(line) as { values: string[] }).values) all.add(v);
  }
  return [...all];
}
