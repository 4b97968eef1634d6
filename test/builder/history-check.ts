/**
 * Helpers of release-history.test.ts: a state of the demo import, an observation round made from
 * the demo's last one, and the check that a release's history, read at an epoch, is the tables of
 * the release of that epoch (encoded with the symbols of shared/as-of-symbols.ts, in JavaScript:
 * independent of the SQL of builder/release/history.ts).
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import type { Test } from 'tap';
import {
  encodeIpSummary,
  encodeProviderRange,
  encodePtr,
  encodeRuns,
  encodeStates,
  readEpoch,
  validAtSql,
  type Epoch,
  type EpochRow,
} from '../../shared/as-of-symbols.js';
import { statePath } from '../../builder/state.js';

type Row = Record<string, unknown>;

const root = path.resolve(import.meta.dirname, '../..');

/** A state directory holding fixtures/state-v<version>.sql (the demo import). */
export function stateOf(t: Test, version = 4): string {
  const dir = path.join(t.testdir({}), 'state');
  fs.mkdirSync(dir);
  const db = new Database(statePath(dir));
  db.exec(fs.readFileSync(path.join(import.meta.dirname, 'fixtures', `state-v${version}.sql`), 'utf8'));
  db.close();
  return dir;
}

/** round-4 of the demo observations moved to start at `start`, with `edit` applied to each line. */
export function roundFile(
  dir: string,
  name: string,
  start: number,
  edit: (o: { name: string; type: string; values: string[] }) => void = () => {},
): { file: string; first: number; last: number } {
  const lines = fs
    .readFileSync(path.join(root, 'demo/data/observations/round-4.ndjson'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { name: string; type: string; time: string; values: string[] });
  const base = Date.parse(lines[0]!.time) / 1000;
  let first = Infinity;
  let last = -Infinity;
  for (const o of lines) {
    const at = Date.parse(o.time) / 1000 - base + start;
    first = Math.min(first, at);
    last = Math.max(last, at);
    o.time = new Date(at * 1000).toISOString().replace('.000Z', 'Z');
    edit(o);
  }
  const file = path.join(dir, name);
  fs.writeFileSync(file, lines.map((o) => JSON.stringify(o)).join('\n') + '\n');
  return { file, first, last };
}

const canonical = (row: unknown): string =>
  JSON.stringify(row, (_key, value: unknown) =>
    value && typeof value === 'object' && (value as { type?: string }).type === 'Buffer'
      ? Buffer.from((value as { data: number[] }).data).toString('hex')
      : value,
  );
const sorted = (rows: unknown[]): string[] => rows.map(canonical).sort();

function all(db: Database.Database, sql: string, ...params: unknown[]): Row[] {
  return db.prepare(sql).all(...params) as Row[];
}

/** The epochs of a release's history. */
export function epochsOf(file: string): Epoch[] {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare(`SELECT * FROM epoch ORDER BY epoch`).all() as EpochRow[]).map(readEpoch);
  } finally {
    db.close();
  }
}

/**
 * Checks that `newest`'s history at epoch `epoch` is the content of `then`, the release of that
 * epoch, table by table.
 */
export function checkEpoch(t: Test, newest: string, then: string, epoch: number): void {
  const h = new Database(newest, { readonly: true });
  const r = new Database(then, { readonly: true });
  try {
    const e = readEpoch(h.prepare(`SELECT * FROM epoch WHERE epoch = ?`).get(epoch) as EpochRow);
    const meta = Object.fromEntries(
      (r.prepare(`SELECT key, value FROM meta`).all() as Array<{ key: string; value: string }>).map((m) => [
        m.key,
        m.value,
      ]),
    );
    t.equal(e.releaseId, meta.release_id, `epoch ${epoch}: the release id`);
    t.same(e.coverage, JSON.parse(meta.coverage!), `epoch ${epoch}: coverage as the meta holds it`);
    t.same(e.attribution, JSON.parse(meta.attribution!), `epoch ${epoch}: attribution`);
    const valid = (table: string, columns: string, alias = '') =>
      all(h, `SELECT ${columns} FROM ${table} ${alias} WHERE ${validAtSql('?', alias)}`, epoch, epoch);
    const same = (table: string, actual: unknown[], expected: unknown[]) =>
      t.same(sorted(actual), sorted(expected), `epoch ${epoch}: ${table}, ${expected.length} rows`);

    const rangeColumns = `prefix, version, first, last, prefix_length, provider, category, metadata, first_seen, last_seen, source`;
    same(
      'provider_range_hist',
      valid('provider_range_hist', rangeColumns),
      all(r, `SELECT ${rangeColumns} FROM provider_range`).map((row) =>
        encodeProviderRange(row as { last_seen: number; source: string }, e),
      ),
    );
    const rangeKey = (row: Row) =>
      [row.source, row.prefix, row.provider, row.category, row.metadata].join('|');
    const rangeByHid = new Map(
      all(h, `SELECT * FROM provider_range_hist`).map((row) => [row.hid, rangeKey(row)]),
    );
    const rangeById = new Map(all(r, `SELECT * FROM provider_range`).map((row) => [row.id, rangeKey(row)]));
    same(
      'provider_segment_hist',
      valid('provider_segment_hist', '*').map((s) => [
        s.first,
        s.last,
        (JSON.parse(s.range_hids as string) as number[]).map((hid) => rangeByHid.get(hid)),
        s.hosting_range_hid === null ? null : rangeByHid.get(s.hosting_range_hid),
      ]),
      all(r, `SELECT * FROM provider_segment`).map((s) => [
        s.first,
        s.last,
        (JSON.parse(s.range_ids as string) as number[]).map((id) => rangeById.get(id)),
        s.hosting_range_id === null ? null : rangeById.get(s.hosting_range_id),
      ]),
    );

    // asn_range: ord = the position among the rows of the same (version, first, last), in id order.
    const asnRanges = all(r, `SELECT * FROM asn_range ORDER BY id`);
    const seen = new Map<string, number>();
    const withOrd = asnRanges.map(({ id, ...row }) => {
      const tie = canonical([row.version, row.first, row.last]);
      const ord = seen.get(tie) ?? 0;
      seen.set(tie, ord + 1);
      return { id, ...row, ord };
    });
    const asnColumns = `first, last, version, first_text, last_text, asn, country, descr, prefixes, source, ord`;
    same(
      'asn_range_hist',
      valid('asn_range_hist', asnColumns),
      withOrd.map(({ id: _id, ...row }) => row),
    );
    const asnKey = (row: Row) => canonical([row.version, row.first, row.last, row.ord]);
    const asnByHid = new Map(all(h, `SELECT * FROM asn_range_hist`).map((row) => [row.hid, asnKey(row)]));
    const asnById = new Map(withOrd.map((row) => [row.id, asnKey(row)]));
    same(
      'asn_segment_hist',
      valid('asn_segment_hist', 'first, last, range_hid').map((s) => [
        s.first,
        s.last,
        asnByHid.get(s.range_hid),
      ]),
      all(r, `SELECT * FROM asn_segment`).map((s) => [s.first, s.last, asnById.get(s.range_id)]),
    );
    // The pages of each AS: the release's id order is ORDER BY version, first, last DESC, ord.
    for (const { asn } of all(r, `SELECT DISTINCT asn FROM asn_range WHERE asn IS NOT NULL`)) {
      const page = all(
        h,
        `SELECT first_text, last_text FROM asn_range_hist INDEXED BY asn_range_hist_by_asn
         WHERE asn = ? AND ${validAtSql('?')} ORDER BY version, first, last DESC, ord`,
        asn,
        epoch,
        epoch,
      );
      const ids = all(r, `SELECT first_text, last_text FROM asn_range WHERE asn = ? ORDER BY id`, asn);
      if (canonical(page) !== canonical(ids))
        t.fail(`epoch ${epoch}: the ranges of AS${String(asn)} in page order`);
    }

    const asnTableColumns = `asn, name, country, source, category, category_source, network_role, routes_v4,
      routes_v6, ipv4_addresses, providers, observed_ips, observed_domains`;
    same('asn_hist', valid('asn_hist', asnTableColumns), all(r, `SELECT ${asnTableColumns} FROM asn`));
    same(
      'ptr_hist',
      valid('ptr_hist', 'value, names, status, checked_at, last_confirmed'),
      all(r, `SELECT * FROM ptr`).map((row) =>
        encodePtr(row as { checked_at: number; last_confirmed: null }, e),
      ),
    );
    same(
      'ip_summary_hist',
      valid('ip_summary_hist', 'value, current_count, sample, first_observed, last_confirmed'),
      all(r, `SELECT * FROM ip_summary`).map((row) =>
        encodeIpSummary(row as { current_count: number; last_confirmed: number }, e),
      ),
    );
    same(
      'domain_hist',
      valid('domain_hist', 'name, rank, in_seed, states'),
      all(
        r,
        `SELECT d.name, d.rank, d.in_seed, p.states FROM domain d LEFT JOIN domain_page p ON p.name = d.name`,
      ).map((row) => ({
        ...row,
        states: row.states === null ? null : encodeStates(row.states as string, e),
      })),
    );
    same(
      'domain_hosting_hist',
      valid('domain_hosting_hist', 'name, runs, truncated'),
      all(
        r,
        `SELECT d.name, h.runs, h.truncated FROM domain_hosting h JOIN domain d ON d.id = h.domain_id`,
      ).map((row) => ({ ...row, runs: encodeRuns(row.runs as string, e) })),
    );
  } finally {
    h.close();
    r.close();
  }
}

/** Every row of the state's history and of the release's, table by table (they must be equal). */
export function historyRows(file: string, state: boolean): Map<string, string[]> {
  const db = new Database(file, { readonly: true });
  try {
    const tables = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' AND (name LIKE '%_hist' OR name = ?)`)
      .pluck()
      .all(state ? 'release_epoch' : 'epoch') as string[];
    return new Map(
      tables.map((name) => [
        name === 'release_epoch' ? 'epoch' : name,
        sorted(all(db, `SELECT * FROM ${name}`)),
      ]),
    );
  } finally {
    db.close();
  }
}
