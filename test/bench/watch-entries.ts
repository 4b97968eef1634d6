/**
 * bench-watch's watchlists (issue 34): every project's entries drawn, seeded, from what really
 * changed between the two releases, as `builder diff` computes it (builder/diff.ts): domains whose
 * networks changed or whose addresses did, addresses that gained or lost their domains, prefixes
 * (published ranges that came or went, routes that came, went or changed AS, and the /24 or /48
 * around a changed address), AS numbers (of those routes and of the changed domains' networks).
 * Each project draws its own mix (MIX) without repeats; every subject goes through
 * `parseWatchSubject`, as one typed into the console does.
 */
import { diffReleases, type Change, type DiffSummary } from '../../builder/diff.js';
import { formatCidr, parseCidr } from '../../shared/ip.js';
import { openRelease } from '../../shared/queries/index.js';
import type { WatchKind } from '../../accounts/watch-types.js';
import { parseWatchSubject } from '../../server/watch/subjects.js';
import { Mulberry32, mix32 } from './observation-generator/prng.js';

/** Shares of a project's entries by kind. */
export const MIX: ReadonlyArray<[WatchKind, number]> = [
  ['domain', 0.4],
  ['ip', 0.25],
  ['prefix', 0.2],
  ['asn', 0.15],
];

export type DrawnEntry = { kind: WatchKind; subject: string };

export interface DrawnWatchlists {
  projects: DrawnEntry[][];
  /** Distinct changed subjects per kind the entries were drawn from. */
  pools: Record<WatchKind, number>;
  changes: DiffSummary;
  seconds: number;
}

interface Network {
  asn: number | null;
}

/** The subjects of the pair's changes, per kind, in the diff's order. */
async function changedSubjects(
  olderFile: string,
  newerFile: string,
): Promise<{ pools: Record<WatchKind, string[]>; changes: DiffSummary }> {
  const sets: Record<WatchKind, Set<string>> = {
    domain: new Set(),
    ip: new Set(),
    prefix: new Set(),
    asn: new Set(),
  };
  const add = (text: string | number | null | undefined, kind: WatchKind) => {
    if (text === null || text === undefined) return;
    const parsed = parseWatchSubject(String(text));
    if (parsed.ok && parsed.kind === kind) sets[kind].add(parsed.subject);
  };
  const around = (ip: string) => {
    const cidr = parseCidr(`${ip}/${ip.includes(':') ? 48 : 24}`);
    if (cidr) add(formatCidr(cidr), 'prefix');
  };
  const older = openRelease(olderFile);
  const newer = openRelease(newerFile);
  try {
    const changes = await diffReleases(older, newer, (c: Change) => {
      switch (c.change) {
        case 'range_added':
        case 'range_gone':
          add(c.prefix as string, 'prefix');
          return;
        case 'route_added':
        case 'route_gone':
          add(c.route as string, 'prefix');
          add(c.asn as number | null, 'asn');
          return;
        case 'route_asn_changed':
          add(c.route as string, 'prefix');
          add(c.old_asn as number | null, 'asn');
          add(c.new_asn as number | null, 'asn');
          return;
        case 'domain_moved':
        case 'domain_started':
        case 'domain_ended':
          add(c.domain as string, 'domain');
          for (const n of [...((c.old_networks ?? []) as Network[]), ...((c.networks ?? []) as Network[])])
            add(n.asn, 'asn');
          return;
        case 'ip_gained_domains':
        case 'ip_lost_domains':
          add(c.ip as string, 'ip');
          around(c.ip as string);
          for (const d of (c.sample ?? c.old_sample ?? []) as string[]) add(d, 'domain');
          return;
      }
    });
    const pools = Object.fromEntries(Object.entries(sets).map(([kind, set]) => [kind, [...set]])) as Record<
      WatchKind,
      string[]
    >;
    return { pools, changes };
  } finally {
    older.close();
    newer.close();
  }
}

/** `count` distinct items of `pool` (all of them when it has fewer), seeded. */
function sample(pool: readonly string[], count: number, rng: Mulberry32): string[] {
  if (pool.length <= count) return [...pool];
  const picked = new Set<number>();
  while (picked.size < count) picked.add(rng.int(pool.length));
  return [...picked].map((i) => pool[i]!);
}

export async function drawWatchlists(options: {
  olderFile: string;
  newerFile: string;
  projects: number;
  perProject: number;
  seed: number;
}): Promise<DrawnWatchlists> {
  const started = performance.now();
  const { pools, changes } = await changedSubjects(options.olderFile, options.newerFile);
  const rng = new Mulberry32();
  const projects: DrawnEntry[][] = [];
  for (let p = 0; p < options.projects; p++) {
    rng.reseed(mix32(options.seed, p));
    const chosen = MIX.map(([kind, share]) => ({
      kind,
      subjects: new Set(sample(pools[kind], Math.round(options.perProject * share), rng)),
    }));
    let total = chosen.reduce((n, c) => n + c.subjects.size, 0);
    // A pool smaller than its share: the others make up the difference, in MIX order.
    for (const { kind, subjects } of chosen) {
      const pool = pools[kind];
      for (
        let tries = 0;
        total < options.perProject && subjects.size < pool.length && tries < 4 * pool.length;
        tries++
      ) {
        const subject = pool[rng.int(pool.length)]!;
        if (!subjects.has(subject)) {
          subjects.add(subject);
          total++;
        }
      }
    }
    if (total < options.perProject)
      throw new Error(`only ${total} changed subjects in all: cannot draw ${options.perProject} a project`);
    projects.push(
      chosen.flatMap(({ kind, subjects }) => [...subjects].map((subject) => ({ kind, subject }))),
    );
  }
  return {
    projects,
    pools: Object.fromEntries(Object.entries(pools).map(([k, v]) => [k, v.length])) as Record<
      WatchKind,
      number
    >,
    changes,
    seconds: (performance.now() - started) / 1000,
  };
}
