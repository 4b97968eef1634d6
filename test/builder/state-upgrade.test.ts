/**
 * The builder state of earlier versions is read: a state of state schema 2, 3 or 4, as the builder of
 * its time wrote it (fixtures/state-v<N>.sql: the demo import of that commit, dumped), is upgraded
 * in place to STATE_SCHEMA_VERSION by the first command that opens it, `builder release` included,
 * with every row kept; the release built from it answers from those rows. A state of a version
 * this builder cannot read is refused, untouched, with what to do.
 */
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import { openState, STATE_HISTORY_TABLES, STATE_SCHEMA_VERSION, statePath } from '../../builder/state.js';
import { publishRelease } from '../../builder/release/release-command.js';
import { loadSettings } from '../../shared/config.js';
import { domainHosting, lookupIp, openRelease } from '../../shared/queries/index.js';

type Row = Record<string, unknown>;

/** A state directory holding the fixture of `version`, as its builder left it. */
function stateOf(t: Test, version: number): string {
  const dir = path.join(t.testdir({}), 'state');
  fs.mkdirSync(dir);
  const db = new Database(statePath(dir));
  db.exec(fs.readFileSync(path.join(import.meta.dirname, 'fixtures', `state-v${version}.sql`), 'utf8'));
  db.close();
  return dir;
}

/** Every table's rows, by table name, read without the builder. */
function dump(dir: string): Map<string, Row[]> {
  const db = new Database(statePath(dir), { readonly: true });
  try {
    const tables = db
      .prepare(`SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name`)
      .pluck()
      .all() as string[];
    return new Map(
      tables.map((name) => [name, db.prepare(`SELECT * FROM "${name}" ORDER BY 1, 2`).all() as Row[]]),
    );
  } finally {
    db.close();
  }
}

const version = (rows: Map<string, Row[]>) =>
  rows.get('state_meta')!.find((r) => r.key === 'schema_version')!.value;

/** What the 3 → 4 step does to asn_range: each source's rows numbered from 1 in (version, first) order. */
function numbered(rows: Row[]): Row[] {
  const order = [...rows].sort(
    (a, b) =>
      String(a.source).localeCompare(String(b.source)) ||
      Number(a.version) - Number(b.version) ||
      (String(a.first) < String(b.first) ? -1 : String(a.first) > String(b.first) ? 1 : 0),
  );
  const next = new Map<string, number>();
  return order.map((row) => {
    const seq = (next.get(String(row.source)) ?? 0) + 1;
    next.set(String(row.source), seq);
    return { source: row.source, seq, ...row };
  });
}

/** The tables each upgrade adds (empty): 2 → 3 the collector's, 4 → 5 the history and dns_round. */
function addedSince(fixture: number): string[] {
  return [
    ...(fixture < 3 ? ['collect_batch', 'collect_round'] : []),
    ...(fixture < 5 ? ['dns_round', ...Object.keys(STATE_HISTORY_TABLES)] : []),
  ].sort();
}

for (const fixture of [2, 3, 4]) {
  t.test(`state schema ${fixture}: upgraded on open, every row kept`, async (t) => {
    const dir = stateOf(t, fixture);
    const before = dump(dir);
    t.equal(version(before), String(fixture));
    t.equal(before.get('dns_state')!.length, 148, 'the demo import: 74 names, A and AAAA');

    openState(dir).close();
    const after = dump(dir);
    t.equal(version(after), String(STATE_SCHEMA_VERSION));
    const added = [...after.keys()].filter((name) => !before.has(name));
    t.same(added.sort(), addedSince(fixture), 'tables of later versions, empty');
    for (const name of added) t.same(after.get(name), [], name);
    for (const [name, rows] of before) {
      if (name === 'state_meta') continue;
      const expected = name === 'asn_range' && fixture < 4 ? numbered(rows) : rows;
      const sorted = (list: Row[]) =>
        [...list].sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)));
      t.same(sorted(after.get(name)!), sorted(expected), `${name}: ${rows.length} rows, the same values`);
    }

    openState(dir).close();
    t.same(dump(dir), after, 'opening it again changes nothing');
  });
}

t.test('builder release on a state of schema 3 upgrades it and answers from its rows', async (t) => {
  const dir = stateOf(t, 3);
  const releasesDir = path.join(path.dirname(dir), 'releases');
  const settings = loadSettings(
    {},
    { STATE_DIR: dir, RELEASES_DIR: releasesDir, ASN_MAPPING: 'ip-location-db' },
  );
  const { file } = publishRelease(settings, { dataset: 'demo', log: () => {} });
  t.equal(version(dump(dir)), String(STATE_SCHEMA_VERSION), 'the state was upgraded first');
  const release = openRelease(file);
  t.teardown(() => release.close());
  // The fixture's rows: the mapping, the provider ranges, the PTR row, api.example's A answers.
  t.match(lookupIp(release, { ip: '15.181.232.18' }), {
    asn: { asn: 16509, route: '15.180.0.0/14', descr: 'Amazon.com, Inc.', source: 'ip-location-db' },
    provider: 'AWS',
    prefix: '15.181.232.0/21',
    ptr: { names: ['api.example'], status: 'positive', checked_at: '2026-10-22T00:03:20Z' },
    domains: {
      current_count: 2,
      sample: ['api.example', 'www.api.example'],
      first_observed: '2026-10-01T00:03:20Z',
      last_confirmed: '2026-10-22T00:03:30Z',
    },
  });
  const current = { addresses: 1, record_types: ['A'], ended_at: null, current: true };
  const seen = { first_observed: '2026-10-01T00:03:20Z', last_confirmed: '2026-10-22T00:03:20Z' };
  t.match(domainHosting(release, { domain: 'api.example' }), {
    hosting: [
      { asn: 16509, provider: 'AWS', ...seen, ...current },
      { asn: 14618, provider: 'AWS', ...seen, ...current },
    ],
  });
});

t.test('builder release on a state of schema 4: the history starts with it (epoch 1)', async (t) => {
  const dir = stateOf(t, 4);
  const releasesDir = path.join(path.dirname(dir), 'releases');
  const settings = loadSettings(
    {},
    { STATE_DIR: dir, RELEASES_DIR: releasesDir, ASN_MAPPING: 'ip-location-db' },
  );
  const { id, file, counts } = publishRelease(settings, { dataset: 'demo', log: () => {} });
  const after = dump(dir);
  t.equal(version(after), String(STATE_SCHEMA_VERSION));
  t.match(after.get('release_epoch'), [{ epoch: 1, release_id: id, round_from: null, round_to: null }]);
  t.same(after.get('dns_round'), [], 'no DNS round recorded before the upgrade');
  for (const table of Object.keys(STATE_HISTORY_TABLES).filter((name) => name !== 'release_epoch')) {
    const release = counts[table];
    t.equal(after.get(table)!.length, release, `${table}: the release's ${release} versions, in the state`);
    t.ok(
      after.get(table)!.every((row) => row.e_from === 1 && row.e_to === null),
      `${table}: all from epoch 1`,
    );
  }
  t.equal(counts.domain_hist, counts.domain);
  t.equal(counts.ptr_hist, 1, 'the PTR row');
  const release = openRelease(file);
  t.teardown(() => release.close());
  t.match(lookupIp(release, { ip: '15.181.232.18' }), { provider: 'AWS', ptr: { names: ['api.example'] } });
});

t.test('a state of a version this builder cannot read is refused, untouched', async (t) => {
  for (const [stored, message] of [
    [
      String(STATE_SCHEMA_VERSION + 1),
      `has state schema version ${STATE_SCHEMA_VERSION + 1}, newer than this builder understands (${STATE_SCHEMA_VERSION}): run the builder of the ipscope version that wrote it (upgrade this one); the state was left untouched`,
    ],
    [
      '1',
      `has state schema version 1; this builder reads ${STATE_SCHEMA_VERSION} and upgrades 2, 3 and 4 (version 1, of the builder's first two commits, is not): move the file away and rebuild the state with "npx builder fetch" and "npx builder import"; the state was left untouched`,
    ],
  ] as const) {
    const dir = stateOf(t, 3);
    const db = new Database(statePath(dir));
    db.prepare(`UPDATE state_meta SET value = ? WHERE key = 'schema_version'`).run(stored);
    db.close();
    const before = dump(dir);
    t.throws(() => openState(dir), { message: `${statePath(dir)} ${message}` });
    const settings = loadSettings(
      {},
      { STATE_DIR: dir, RELEASES_DIR: path.join(path.dirname(dir), 'releases') },
    );
    t.throws(() => publishRelease(settings, { dataset: 'demo', log: () => {} }), {
      message: `${statePath(dir)} ${message}`,
    });
    t.same(dump(dir), before, `version ${stored}: nothing changed`);
  }
});
