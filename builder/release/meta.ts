/**
 * The meta table of a release: schema version, release id, build time, coverage, attribution,
 * source snapshots (writeMeta) and, once the history is written too, row counts (writeCounts) (the keys: shared/release-schema.ts META_KEYS).
 */
import type Database from 'better-sqlite3';
import { META_KEYS, RELEASE_SCHEMA_VERSION, RELEASE_TABLES, SEMANTICS } from '../../shared/release-schema.js';
import { toIso } from '../../shared/time.js';
import { getSource } from '../sources/index.js';
import type { BuildOptions } from './build-types.js';
import type { IntervalArrays } from './dns-tables/intervals.js';

/**
 * min(first_observed) and max(last_confirmed) of dns_interval (null when it is empty), from the
 * intervals in memory: the same rows, without a scan of the table.
 */
export function intervalWindow(iv: IntervalArrays): { first: number | null; last: number | null } {
  if (iv.count === 0) return { first: null, last: null };
  let first = Infinity;
  let last = -Infinity;
  for (let i = 0; i < iv.count; i++) {
    if (iv.first[i]! < first) first = iv.first[i]!;
    if (iv.last[i]! > last) last = iv.last[i]!;
  }
  return { first, last };
}

export function writeMeta(
  db: Database.Database,
  options: BuildOptions,
  window: { first: number | null; last: number | null },
  /** max(last_observed) of the DNS state (the worker thread reads it): null when there is none. */
  lastQuery: number | null,
  contributors: string[],
): { coverage: string; attribution: string } {
  const seedSnapshot = db
    .prepare(`SELECT files FROM st.source_snapshot WHERE kind = 'seed'`)
    .pluck()
    .get() as string | undefined;
  const seedNames = db.prepare(`SELECT count(*) FROM st.seed`).pluck().get() as number;
  const derived = db
    .prepare(`SELECT count(*) FROM domain WHERE in_seed = 1 AND name LIKE 'www.%'`)
    .pluck()
    .get() as number;
  const ptrChecked = db.prepare(`SELECT count(*) FROM ptr`).pluck().get() as number;
  const ptrObserved = db
    .prepare(`SELECT count(*) FROM ptr WHERE status = 'positive'`)
    .pluck()
    .get() as number;
  const seedFile = seedSnapshot
    ? ((JSON.parse(seedSnapshot) as Array<{ file: string }>)[0]?.file ?? null)
    : null;
  const coverage: Record<string, unknown> = {
    observation_window: {
      first: window.first !== null ? toIso(window.first) : null,
      last: lastQuery !== null ? toIso(Math.max(lastQuery, window.last ?? 0)) : null,
    },
    vantage_count: 1,
    record_types: ['A', 'AAAA'],
    seed: {
      source:
        options.dataset === 'demo'
          ? 'demo seed (reserved example domains)'
          : seedFile
            ? `tranco (${seedFile})`
            : 'none',
      names: seedNames,
    },
    derived: { www_names: derived },
    semantics: SEMANTICS,
  };
  if (ptrChecked > 0) coverage.ptr = { checked_ips: ptrChecked, observed_ips: ptrObserved };
  if (options.dataset === 'demo') {
    coverage.dataset = 'demo';
    coverage.note =
      'DEMO DATA: names under reserved example domains with generated observations; ranges are real published excerpts';
  }
  const snapshots = db.prepare(`SELECT * FROM st.source_snapshot ORDER BY source`).all() as Array<{
    source: string;
    kind: string;
    origin: string;
    imported_at: number;
    published_at: string | null;
    files: string;
    records: number;
    rejected: number;
  }>;
  const sources = snapshots.map((s) => ({
    source: s.source,
    kind: s.kind,
    origin: s.origin,
    imported_at: toIso(s.imported_at),
    published_at: s.published_at,
    records: s.records,
    rejected: s.rejected,
    files: (
      JSON.parse(s.files) as Array<{
        file: string;
        url?: string;
        sha256: string;
        bytes: number;
        fetched_at: number;
      }>
    ).map((f) => ({
      ...f,
      fetched_at: toIso(f.fetched_at),
    })),
  }));
  // Credit exactly the sources the release's answers rest on: DNS observations when there are
  // any, the seed list when it names the resolved set, and the feeds, mappings and AS metadata
  // whose rows or values the tables use (an imported source the release does not use is not
  // credited).
  const observed = lastQuery !== null;
  const used = new Set(contributors);
  // The demo's seed is our own list of reserved example names, read with the Tranco parser.
  if (seedNames > 0 && options.dataset !== 'demo')
    for (const s of snapshots) if (s.kind === 'seed') used.add(s.source);
  const attribution = [
    ...(observed || ptrChecked > 0
      ? [
          {
            source: 'DNS observations and PTR names',
            by: 'measured by this service',
            license: 'same as the service data',
          },
        ]
      : []),
    ...snapshots.flatMap((s) => {
      const def = getSource(s.source);
      return def && used.has(s.source) ? [def.attribution] : [];
    }),
  ];
  const meta = { coverage: JSON.stringify(coverage), attribution: JSON.stringify(attribution) };
  const insert = db.prepare(`INSERT INTO meta (key, value) VALUES (?, ?)`);
  db.transaction(() => {
    insert.run(META_KEYS.schemaVersion, String(RELEASE_SCHEMA_VERSION));
    insert.run(META_KEYS.releaseId, options.releaseId);
    insert.run(META_KEYS.builtAt, toIso(options.builtAt));
    insert.run(META_KEYS.coverage, meta.coverage);
    insert.run(META_KEYS.attribution, meta.attribution);
    insert.run(META_KEYS.sources, JSON.stringify(sources));
  })();
  return meta;
}

/** The meta's row counts of every table (the history's included), written last; returned. */
export function writeCounts(db: Database.Database): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const table of Object.keys(RELEASE_TABLES)) {
    if (table === 'meta') continue;
    counts[table] = db.prepare(`SELECT count(*) FROM ${table}`).pluck().get() as number;
  }
  db.prepare(`INSERT INTO meta (key, value) VALUES (?, ?)`).run(META_KEYS.counts, JSON.stringify(counts));
  return counts;
}
