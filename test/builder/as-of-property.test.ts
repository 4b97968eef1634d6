/**
 * Issue 33's property (docs/decisions/0033-as-of.md): for every moment T since the first release,
 * every lookup with as_of=T from the newest release answers what the release current at T (the
 * newest with built_at ≤ T) answered at T, but for the `release` block and `coverage.as_of`; the
 * DNS times that track the last round may differ by at most the round's duration.
 *
 * Eight releases are built from a generated history (test/helpers/dated-history.ts: dated variants
 * of the real feed excerpts, generated rounds), each at its own moment; at every release's built_at,
 * the second before it, every import and round instant, the end of every round, midpoints and 20
 * seeded random moments, the lookups of a sample of keys are compared: IPs (changed ranges, Tor
 * exits that churn, mapping rows that changed, domains on them, bogons, unrouted), domains
 * (changed, failing, CNAME chains, unchanged, not observed), AS numbers, lists followed page by
 * page with small limits, fences. A failure names the lookup, the key, T and each field's two values.
 * AS_OF_REPORT=<file> writes every failure there as NDJSON.
 */
import t from 'tap';
import fs from 'node:fs';
import * as queries from '../../shared/queries/index.js';
import type { Release } from '../../shared/queries/index.js';
import { timeFence } from '../../shared/queries/time-fence.js';
import { toIso } from '../../shared/time.js';
import {
  allPages,
  outcome,
  outcomeDifferences,
  type Difference,
  type Outcome,
} from '../helpers/as-of-compare.js';
import { datedHistory, HISTORY_START } from '../helpers/dated-history.js';
import { buildDatedReleases, type BuiltRelease } from '../helpers/dated-releases.js';
import { Mulberry32 } from '../bench/observation-generator/prng.js';

type Params = Record<string, unknown>;
type AsOfQuery = (release: Release, params: Params, asOf: string, now?: number) => Record<string, unknown>;
type Query = (release: Release, params: Params, now?: number) => Record<string, unknown>;

/** The query functions, current and as-of (the latter from the query half of issue 33). */
const q = queries as unknown as Record<string, Query | AsOfQuery | undefined>;
const AS_OF_NAMES = [
  'lookupIpAsOf',
  'ipDomainsAsOf',
  'domainHistoryAsOf',
  'domainHostingAsOf',
  'lookupAsnAsOf',
];

const DAY = 86_400;

/** One lookup of one key: how to ask the old release and how to ask as of T. */
interface Lookup {
  name: string;
  key: string;
  old(release: Release, T: number): Outcome;
  asOf(release: Release, T: number): Outcome;
}

function lookups(keys: { ips: string[]; domains: string[]; asns: string[] }): Lookup[] {
  const current = (n: string) => q[n] as Query;
  const asOf = (n: string) => q[`${n}AsOf`] as AsOfQuery;
  const iso = (T: number) => toIso(T);
  /** A one-call lookup: the same params both ways (domainHistory's age is computed at T). */
  const single = (name: string, fn: string, key: string, params: Params): Lookup => ({
    name,
    key,
    old: (r, T) => outcome(() => current(fn)(r, params, T)),
    asOf: (r, T) => outcome(() => asOf(fn)(r, params, iso(T))),
  });
  /** A paged lookup followed to its end with `limit`, the items of every page concatenated. */
  const paged = (name: string, fn: string, key: string, params: Params, items: string): Lookup => ({
    name,
    key,
    old: (r, T) => outcome(() => allPages((cursor) => current(fn)(r, { ...params, cursor }, T), items)),
    asOf: (r, T) => outcome(() => allPages((cursor) => asOf(fn)(r, { ...params, cursor }, iso(T)), items)),
  });
  const window = timeFence({ from: HISTORY_START + DAY, to: HISTORY_START + 3 * DAY + 7200 });
  const strict = timeFence({ from: HISTORY_START + DAY, to: HISTORY_START + 3 * DAY + 7200, strict: true });
  const out: Lookup[] = [];
  for (const ip of keys.ips) {
    out.push(single('lookup_ip', 'lookupIp', ip, { ip }));
    out.push(paged('ip_domains', 'ipDomains', ip, { ip, includeEnded: false, limit: 1000 }, 'items'));
    out.push(
      paged(
        'ip_domains include_ended limit 2',
        'ipDomains',
        ip,
        { ip, includeEnded: true, limit: 2 },
        'items',
      ),
    );
    out.push(
      paged(
        'ip_domains from/to',
        'ipDomains',
        ip,
        { ip, includeEnded: true, limit: 3, fence: window },
        'items',
      ),
    );
    out.push(
      paged(
        'ip_domains strict',
        'ipDomains',
        ip,
        { ip, includeEnded: true, limit: 1000, fence: strict },
        'items',
      ),
    );
  }
  for (const domain of keys.domains) {
    out.push(single('domain_history', 'domainHistory', domain, { domain, limit: 1000 }));
    out.push(paged('domain_history limit 2', 'domainHistory', domain, { domain, limit: 2 }, 'intervals'));
    out.push(
      paged(
        'domain_history from/to',
        'domainHistory',
        domain,
        { domain, limit: 3, fence: window },
        'intervals',
      ),
    );
    out.push(
      paged(
        'domain_history strict',
        'domainHistory',
        domain,
        { domain, limit: 1000, fence: strict },
        'intervals',
      ),
    );
    out.push(single('domain_hosting', 'domainHosting', domain, { domain }));
  }
  for (const asn of keys.asns) {
    out.push(single('lookup_asn', 'lookupAsn', asn, { asn, limit: 100 }));
    out.push(paged('lookup_asn limit 1', 'lookupAsn', asn, { asn, limit: 1 }, 'ranges'));
  }
  return out;
}

/** The moments T checked: exact instants of the history, the second before each release, ends of rounds, midpoints, random ones. */
function moments(
  history: ReturnType<typeof datedHistory>,
  built: BuiltRelease[],
): { all: number[]; exact: Set<number> } {
  const first = built[0]!.builtAt;
  const last = built.at(-1)!.builtAt;
  const set = new Set<number>();
  for (const e of history.events) {
    set.add(e.at);
    if (e.kind === 'release') set.add(e.at - 1);
    if (e.kind === 'round') set.add(e.end);
  }
  const exact = new Set(set);
  const sorted = [...set].sort((a, b) => a - b);
  for (let i = 1; i < sorted.length; i++) set.add(Math.floor((sorted[i - 1]! + sorted[i]!) / 2));
  const rng = new Mulberry32();
  rng.reseed(20261001);
  for (let i = 0; i < 20; i++) set.add(first + rng.int(last + 2 * DAY - first));
  set.add(last + DAY);
  return { all: [...set].filter((T) => T >= first && T * 1000 <= Date.now()).sort((a, b) => a - b), exact };
}

interface Failure {
  lookup: string;
  key: string;
  T: string;
  current: string;
  differences: Difference[];
}

t.test('as_of from the newest release answers what the release current then answered', async (t) => {
  const missing = AS_OF_NAMES.filter((n) => typeof q[n] !== 'function');
  if (missing.length > 0) {
    t.fail(`shared/queries/index.ts does not export ${missing.join(', ')} (issue 33's query half)`);
    return;
  }
  const history = datedHistory();
  const dir = t.testdir({});
  const built = await buildDatedReleases(history, dir);
  t.ok(built.length >= 5, `${built.length} releases`);
  const opened = built.map((b) => queries.openRelease(b.file));
  t.teardown(() => opened.forEach((r) => r.close()));
  opened.forEach((r, i) =>
    t.equal(
      r.builtAtEpoch,
      built[i]!.builtAt,
      `release ${r.id} built at its moment ${toIso(built[i]!.builtAt)}`,
    ),
  );
  const newest = opened.at(-1)!;
  const all = lookups(history);
  const failures: Failure[] = [];
  const checked = new Map<string, number>();
  const { all: ts, exact } = moments(history, built);
  // Every lookup at the exact instants of the history; a third of them (in turn) at the others.
  ts.forEach((T, m) => {
    const index = built.findLastIndex((b) => b.builtAt <= T);
    const then = opened[index]!;
    all.forEach((lookup, i) => {
      if (!exact.has(T) && i % 3 !== m % 3) return;
      const diffs = outcomeDifferences(lookup.old(then, T), lookup.asOf(newest, T), history.roundSeconds);
      checked.set(lookup.name, (checked.get(lookup.name) ?? 0) + 1);
      if (diffs.length > 0)
        failures.push({
          lookup: lookup.name,
          key: lookup.key,
          T: toIso(T),
          current: then.id,
          differences: diffs,
        });
    });
  });
  // Not vacuous: the older releases' answers differ from the newest's own (without as_of).
  let changed = 0;
  built.slice(0, -1).forEach((b, i) => {
    for (const lookup of all) {
      const diffs = outcomeDifferences(lookup.old(opened[i]!, b.builtAt), lookup.old(newest, b.builtAt), 0);
      if (diffs.length > 0) changed++;
    }
  });
  t.ok(
    changed > all.length,
    `${changed} of ${all.length * (built.length - 1)} older answers differ from the newest release's`,
  );
  if (process.env.AS_OF_REPORT)
    fs.writeFileSync(process.env.AS_OF_REPORT, failures.map((f) => JSON.stringify(f)).join('\n') + '\n');
  const byLookup = new Map<string, number>();
  for (const f of failures) byLookup.set(f.lookup, (byLookup.get(f.lookup) ?? 0) + 1);
  t.comment(
    `${ts.length} moments, ${[...checked.values()].reduce((a, b) => a + b, 0)} comparisons (${[...checked]
      .map(([k, n]) => `${k} ${n}`)
      .join(', ')})`,
  );
  t.equal(failures.length, 0, 'every as-of answer equals the answer of the release current then', {
    byLookup: Object.fromEntries(byLookup),
    first: failures.slice(0, 30).map((f) => ({ ...f, differences: f.differences.slice(0, 6) })),
  });
  await t.test('as_of outside the history is refused: as_of_out_of_range', async (t) => {
    const first = built[0]!.builtAt;
    const moments: Array<[string, string]> = [
      [toIso(first - 1), 'the second before the first release'],
      ['2026-09-30', 'a date before the first release'],
      [toIso(Math.floor(Date.now() / 1000) + 3600), 'an hour in the future'],
      ['2030-01-01', 'a date in the future'],
      ['yesterday', 'malformed'],
      ['2026-10-01T25:00:00Z', 'malformed (hour 25)'],
      ['2026-02-30', 'malformed (no such date)'],
      ['', 'empty'],
    ];
    const calls: Array<[string, (asOf: string) => unknown]> = [
      ['lookup_ip', (a) => (q.lookupIpAsOf as AsOfQuery)(newest, { ip: '23.228.249.10' }, a)],
      [
        'ip_domains',
        (a) =>
          (q.ipDomainsAsOf as AsOfQuery)(newest, { ip: '23.228.249.10', includeEnded: false, limit: 10 }, a),
      ],
      [
        'domain_history',
        (a) => (q.domainHistoryAsOf as AsOfQuery)(newest, { domain: 'stable.example', limit: 10 }, a),
      ],
      ['domain_hosting', (a) => (q.domainHostingAsOf as AsOfQuery)(newest, { domain: 'stable.example' }, a)],
      ['lookup_asn', (a) => (q.lookupAsnAsOf as AsOfQuery)(newest, { asn: '16509', limit: 10 }, a)],
    ];
    for (const [name, call] of calls) {
      for (const [asOf, what] of moments) {
        const result = outcome(() => call(asOf));
        t.same(result, { error: 'as_of_out_of_range' }, `${name} as_of=${JSON.stringify(asOf)} (${what})`);
      }
      // The first release's own second is inside the history.
      t.notOk(
        'error' in outcome(() => call(toIso(first))),
        `${name} at the first release's built_at answers`,
      );
    }
  });
});
