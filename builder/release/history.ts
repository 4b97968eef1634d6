/**
 * The history a release carries (docs/decisions/0033-as-of.md): the `epoch` table and the
 * versioned copies (`*_hist`, shared/release-schema.ts HISTORY_TABLES) of the tables an answer
 * reads, written once the release's own tables are complete.
 *
 * The state's history (builder/state.ts: release_epoch and the same *_hist tables, attached as
 * `st`) is copied in, less what retention drops, and this release becomes the next epoch E. Then,
 * per table, in SQL over the just-built table and the copied versions:
 *
 *   1. the table's rows, their symbolic times encoded (shared/as-of-symbols.ts), into temp.cur,
 *      keyed by a key unique in one release (a domain's name, a segment's first address, …);
 *   2. close: every open version (e_to null) without a row of the same key and content gets e_to = E;
 *   3. open: every row of temp.cur without an open version of its key is inserted with e_from = E
 *      (the open version left with its key is the identical one).
 *
 * References between the tables are by hid: provider_range and asn_range are versioned first, and
 * each row's id is mapped to the hid of its open version for the segments.
 *
 * The state is not written here: the build may still be refused by the gate. Once published,
 * history-state.ts copies what changed into the state.
 */
import type Database from 'better-sqlite3';
import {
  encodeRuns,
  encodeStates,
  ipSummaryLastConfirmedSql,
  roundTimeSql,
  SOURCE_DATE,
  type EpochRow,
  type EpochTimes,
} from '../../shared/as-of-symbols.js';
import { HISTORY_TABLES, type HistoryTable } from '../../shared/release-schema.js';
import { stateHistoryTable } from '../state.js';

/** The versioned tables (all of HISTORY_TABLES but epoch), in the order they are written. */
export const VERSIONED_TABLES = Object.keys(HISTORY_TABLES).filter((t) => t !== 'epoch') as Array<
  Exclude<HistoryTable, 'epoch'>
>;

export interface HistoryInput {
  releaseId: string;
  builtAt: number;
  /** max(last_observed) of the DNS state: the epoch's dns_cut (null: none). */
  dnsCut: number | null;
  /** The release's meta coverage and attribution, as JSON text. */
  coverage: string;
  attribution: string;
  /** RELEASE_HISTORY_DAYS (0: keep every epoch). */
  retentionDays: number;
  /** Where the time of each table's steps goes (build.ts: with BUILDER_HISTORY_LOG set). */
  log?: (line: string) => void;
}

export interface HistoryResult {
  /** The epoch of this release. */
  epoch: number;
  /** The oldest epoch kept. */
  oldest: number;
  /** Versions opened and closed per table at this epoch. */
  changes: Record<string, { opened: number; closed: number }>;
}

/** How one table is versioned. */
interface Versioning {
  table: Exclude<HistoryTable, 'epoch'>;
  /** Columns unique among one release's rows (and among the open versions), never null. */
  key: string[];
  /** The other content columns. */
  columns: string[];
  /** SELECT of key, columns (in that order, encoded) and `extra`, from the release's tables. */
  select: string;
  /** Columns temp.cur also keeps, not content (a row's positional id). */
  extra?: string[];
  /** Columns the open-version probe compares with IS besides the key (to use an index). */
  probe?: string[];
  /** Run with temp.cur still there (the id -> hid maps). */
  after?: () => void;
}

/** Appends this release's epoch and writes the versioned tables; returns the epoch. */
export function writeHistory(db: Database.Database, input: HistoryInput): HistoryResult {
  const previous = db.prepare(`SELECT * FROM st.release_epoch ORDER BY epoch`).all() as EpochRow[];
  const epoch = (previous.at(-1)?.epoch ?? 0) + 1;
  const round = db
    .prepare(`SELECT min_observed, max_observed FROM st.dns_round ORDER BY id DESC LIMIT 1`)
    .raw()
    .get() as [number, number] | undefined;
  const sourceDates = Object.fromEntries(
    db
      .prepare(
        `SELECT source, max(last_seen) FROM st.provider_range WHERE active = 1 GROUP BY source ORDER BY source`,
      )
      .raw()
      .all() as Array<[string, number]>,
  );
  const times: EpochTimes = { roundFrom: round?.[0] ?? null, roundTo: round?.[1] ?? null, sourceDates };
  const row: EpochRow = {
    epoch,
    release_id: input.releaseId,
    built_at: input.builtAt,
    dns_cut: input.dnsCut,
    round_from: times.roundFrom,
    round_to: times.roundTo,
    coverage: input.coverage,
    attribution: input.attribution,
    source_dates: JSON.stringify(sourceDates),
  };
  const oldest = oldestKept([...previous, row], input.builtAt, input.retentionDays);

  db.prepare(`INSERT INTO main.epoch SELECT * FROM st.release_epoch WHERE epoch >= ?`).run(oldest);
  db.prepare(
    `INSERT INTO main.epoch (epoch, release_id, built_at, dns_cut, round_from, round_to, coverage, attribution, source_dates)
     VALUES (@epoch, @release_id, @built_at, @dns_cut, @round_from, @round_to, @coverage, @attribution, @source_dates)`,
  ).run(row);
  const copyStarted = performance.now();
  for (const table of VERSIONED_TABLES) {
    db.prepare(
      `INSERT INTO main.${table} SELECT * FROM st.${stateHistoryTable(table)} WHERE ${keptSql(oldest)}`,
    ).run();
  }
  input.log?.(
    `      copy of the state's history: ${((performance.now() - copyStarted) / 1000).toFixed(1)} s`,
  );

  db.function('asof_states', { deterministic: true }, (states: unknown) =>
    typeof states === 'string' ? encodeStates(states, times) : states,
  );
  db.function('asof_runs', { deterministic: true }, (runs: unknown) =>
    typeof runs === 'string' ? encodeRuns(runs, times) : runs,
  );
  db.prepare(`CREATE TEMP TABLE asof_source_date (source TEXT PRIMARY KEY, date INTEGER NOT NULL)`).run();
  const insertDate = db.prepare(`INSERT INTO temp.asof_source_date (source, date) VALUES (?, ?)`);
  for (const [source, date] of Object.entries(sourceDates)) insertDate.run(source, date);
  // The round window as literals (null: nothing is ROUND).
  const round_ = (column: string) =>
    times.roundFrom === null ? column : roundTimeSql(column, String(times.roundFrom), String(times.roundTo));

  const changes: HistoryResult['changes'] = {};
  const plans: Versioning[] = [
    {
      table: 'provider_range_hist',
      key: ['source', 'prefix', 'provider', 'category', 'metadata'],
      columns: ['version', 'first', 'last', 'prefix_length', 'first_seen', 'last_seen'],
      extra: ['id'],
      select: `SELECT r.source, r.prefix, r.provider, r.category, r.metadata, r.version, r.first, r.last,
          r.prefix_length, r.first_seen,
          CASE WHEN r.last_seen = d.date THEN ${SOURCE_DATE} ELSE r.last_seen END, r.id
        FROM main.provider_range r LEFT JOIN temp.asof_source_date d ON d.source = r.source`,
      after: () =>
        idMap('provider_range_hid', 'provider_range_hist', [
          'source',
          'prefix',
          'provider',
          'category',
          'metadata',
        ]),
    },
    {
      table: 'provider_segment_hist',
      key: ['first'],
      columns: ['last', 'range_hids', 'hosting_range_hid'],
      select: `SELECT s.first, s.last,
          (SELECT json_group_array(m.hid ORDER BY j.key) FROM json_each(s.range_ids) j
            JOIN temp.provider_range_hid m ON m.id = j.value),
          (SELECT m.hid FROM temp.provider_range_hid m WHERE m.id = s.hosting_range_id)
        FROM main.provider_segment s`,
    },
    {
      table: 'asn_range_hist',
      key: ['version', 'first', 'last', 'ord'],
      columns: ['first_text', 'last_text', 'asn', 'country', 'descr', 'prefixes', 'source'],
      extra: ['id'],
      probe: ['asn'],
      select: `SELECT version, first, last, row_number() OVER (PARTITION BY version, first, last ORDER BY id) - 1,
          first_text, last_text, asn, country, descr, prefixes, source, id
        FROM main.asn_range`,
      after: () => idMap('asn_range_hid', 'asn_range_hist', ['asn', 'version', 'first', 'last', 'ord']),
    },
    {
      table: 'asn_segment_hist',
      key: ['first'],
      columns: ['last', 'range_hid'],
      select: `SELECT s.first, s.last, m.hid FROM main.asn_segment s JOIN temp.asn_range_hid m ON m.id = s.range_id`,
    },
    {
      table: 'asn_hist',
      key: ['asn'],
      columns: [
        'name',
        'country',
        'source',
        'category',
        'category_source',
        'network_role',
        'routes_v4',
        'routes_v6',
        'ipv4_addresses',
        'providers',
        'observed_ips',
        'observed_domains',
      ],
      select: `SELECT asn, name, country, source, category, category_source, network_role, routes_v4, routes_v6,
          ipv4_addresses, providers, observed_ips, observed_domains FROM main.asn`,
    },
    {
      table: 'ptr_hist',
      key: ['value'],
      columns: ['names', 'status', 'checked_at', 'last_confirmed'],
      select: `SELECT value, names, status, ${round_('checked_at')}, ${round_('last_confirmed')} FROM main.ptr`,
    },
    {
      table: 'ip_summary_hist',
      key: ['value'],
      columns: ['current_count', 'sample', 'first_observed', 'last_confirmed'],
      select: `SELECT value, current_count, sample, first_observed,
          ${times.roundFrom === null ? 'last_confirmed' : ipSummaryLastConfirmedSql(String(times.roundFrom), String(times.roundTo))}
        FROM main.ip_summary`,
    },
    {
      table: 'domain_hist',
      key: ['name'],
      columns: ['rank', 'in_seed', 'states'],
      select: `SELECT d.name, d.rank, d.in_seed, asof_states(p.states)
        FROM main.domain d LEFT JOIN main.domain_page p ON p.name = d.name`,
    },
    {
      table: 'domain_hosting_hist',
      key: ['name'],
      columns: ['runs', 'truncated'],
      select: `SELECT d.name, asof_runs(h.runs), h.truncated
        FROM main.domain_hosting h JOIN main.domain d ON d.id = h.domain_id`,
    },
  ];
  for (const plan of plans) {
    const started = performance.now();
    changes[plan.table] = versionTable(db, plan, epoch, input.log);
    input.log?.(`      ${plan.table}: ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  for (const map of ['provider_range_hid', 'asn_range_hid', 'asof_source_date'])
    db.exec(`DROP TABLE temp.${map}`);
  return { epoch, oldest, changes };

  /** temp.<name>: the release table's id -> the hid of its open version (temp.cur holds the ids). */
  function idMap(name: string, table: string, probe: string[]): void {
    db.exec(`CREATE TEMP TABLE ${name} (id INTEGER PRIMARY KEY, hid INTEGER NOT NULL)`);
    db.exec(
      `INSERT INTO temp.${name} (id, hid) SELECT c.id, h.hid FROM temp.cur c JOIN main.${table} h
         ON ${probe.map((c) => `h.${c} IS c.${c}`).join(' AND ')} AND h.e_to IS NULL ORDER BY c.id`,
    );
  }
}

/** Steps 1–3 of the file comment for one table. */
function versionTable(
  db: Database.Database,
  plan: Versioning,
  epoch: number,
  log?: (line: string) => void,
): { opened: number; closed: number } {
  let mark = performance.now();
  const lap = (what: string) => {
    const now = performance.now();
    log?.(`        ${what}: ${((now - mark) / 1000).toFixed(2)} s`);
    mark = now;
  };
  const content = [...plan.key, ...plan.columns];
  const all = [...content, ...(plan.extra ?? [])];
  // Declared with the versioned table's types: an untyped column would take the other side's
  // affinity in a comparison, and SQLite could then not seek temp.cur's key (a scan per version).
  const types = new Map(
    (db.prepare(`SELECT name, type FROM pragma_table_info(?)`).raw().all(plan.table) as string[][]).map(
      ([name, type]) => [name!, type!],
    ),
  );
  const declared = all.map((c) => `${c} ${types.get(c) ?? 'INTEGER'}`);
  db.exec(
    `CREATE TEMP TABLE cur (${declared.join(', ')}, PRIMARY KEY (${plan.key.join(', ')})) WITHOUT ROWID`,
  );
  db.exec(`INSERT INTO temp.cur (${all.join(', ')}) ${plan.select}`);
  lap('current rows');
  const sameKey = plan.key.map((c) => `c.${c} = h.${c}`).join(' AND ');
  const closed = db
    .prepare(
      `UPDATE main.${plan.table} AS h SET e_to = ? WHERE h.e_to IS NULL AND NOT EXISTS (
         SELECT 1 FROM temp.cur c WHERE ${sameKey} AND ${plan.columns.map((c) => `c.${c} IS h.${c}`).join(' AND ')})`,
    )
    .run(epoch).changes;
  lap('close');
  const probe = [...(plan.probe ?? []), ...plan.key].map((c) => `h.${c} IS c.${c}`).join(' AND ');
  const opened = db
    .prepare(
      `INSERT INTO main.${plan.table} (${content.join(', ')}, e_from) SELECT ${content.map((c) => `c.${c}`).join(', ')}, ?
       FROM temp.cur c WHERE NOT EXISTS (SELECT 1 FROM main.${plan.table} h WHERE ${probe} AND h.e_to IS NULL)
       ORDER BY ${plan.key.map((c) => `c.${c}`).join(', ')}`,
    )
    .run(epoch).changes;
  lap('open');
  plan.after?.();
  db.exec(`DROP TABLE temp.cur`);
  return { opened, closed };
}

/**
 * The oldest epoch RELEASE_HISTORY_DAYS keeps of `epochs` (ascending, the new one last): an epoch
 * is valid from its built_at to the next one's; those whose whole validity lies before
 * now − days are dropped, the one current at that moment is kept. 0 days: every epoch.
 */
export function oldestKept(
  epochs: Array<{ epoch: number; built_at: number }>,
  now: number,
  days: number,
): number {
  if (days <= 0) return epochs[0]!.epoch;
  const cutoff = now - days * 86400;
  let oldest = epochs.at(-1)!.epoch;
  for (let i = epochs.length - 2; i >= 0; i--) {
    if (epochs[i + 1]!.built_at <= cutoff) break;
    oldest = epochs[i]!.epoch;
  }
  return oldest;
}

/** The versions an epoch from `oldest` on can see (SQL condition). */
export function keptSql(oldest: number): string {
  return `(e_to IS NULL OR e_to > ${Math.trunc(oldest)})`;
}

/** "provider_range_hist +3 -1, …" (the tables that changed), for the build log. */
export function describeChanges(result: HistoryResult): string {
  const parts = Object.entries(result.changes)
    .filter(([, c]) => c.opened + c.closed > 0)
    .map(([table, c]) => `${table} +${c.opened} -${c.closed}`);
  return parts.length > 0 ? parts.join(', ') : 'no version changed';
}
