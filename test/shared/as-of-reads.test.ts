// How an as-of read runs (docs/decisions/0036-history-reads-ascending.md): the release's history
// tables carry no sqlite_stat4 samples (with them SQLite prepares every as-of read again on each
// run), and a key's version at an epoch is read by an ascending seek (SeekGE, Next) without ORDER
// BY, never by the descending one (SeekLE, Prev) or in an ORDER BY, which cost several times as
// much. Both fail here if they come back.
import t from 'tap';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { versionsSql, type VersionedTable } from '../../shared/queries/as-of/rows.js';
import { HISTORY_TABLES } from '../../shared/release-schema.js';
import { demoReleasesDir } from '../helpers/demo-release.js';

const dir = demoReleasesDir();
const db = new Database(path.join(dir, fs.readFileSync(path.join(dir, 'CURRENT'), 'utf8').trim()), {
  readonly: true,
});
t.teardown(() => db.close());

t.test('sqlite_stat4 samples: the analyzed tables but the history', async (t) => {
  const sampled = db.prepare(`SELECT DISTINCT tbl FROM sqlite_stat4 ORDER BY tbl`).pluck().all() as string[];
  t.same(
    sampled.filter((table) => table in HISTORY_TABLES),
    [],
    'no history table has samples',
  );
  t.same(sampled, ['asn_range', 'asn_segment', 'dns_interval', 'meta', 'provider_segment']);
  // The history tables keep ANALYZE's sqlite_stat1 rows: ip_summary_hist's key (value, e_from).
  t.match(
    db.prepare(`SELECT stat FROM sqlite_stat1 WHERE tbl = 'ip_summary_hist'`).pluck().get(),
    /^\d+ \d+ 1$/,
  );
});

// Every versioned read of the as-of queries (shared/queries/as-of/: the table, its key, a column).
const READS: Array<[VersionedTable, string, string]> = [
  ['ip_summary_hist', 'value', 'current_count'],
  ['ptr_hist', 'value', 'names'],
  ['asn_hist', 'asn', 'name'],
  ['domain_hist', 'name', 'states'],
  ['domain_hosting_hist', 'name', 'runs'],
];

t.test('a version is read by an ascending seek of the key', async (t) => {
  for (const [table, key, column] of READS) {
    const ops = (
      db.prepare(`EXPLAIN ${versionsSql(table, key, column)}`).all('x', 1) as Array<{ opcode: string }>
    ).map((r) => r.opcode);
    t.ok(ops.includes('SeekGE') && ops.includes('Next'), `${table}: SeekGE, Next`);
    t.notMatch(versionsSql(table, key, column), /ORDER BY/, `${table}: no ORDER BY`);
    t.same(
      ops.filter((op) => ['SeekLE', 'SeekLT', 'Prev', 'SorterOpen', 'SorterSort'].includes(op)),
      [],
      `${table}: no descending seek, no sort`,
    );
  }
});
