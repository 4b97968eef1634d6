/**
 * The history each release carries (docs/decisions/0033-as-of.md, builder/release/history.ts):
 * three releases built from the demo state (fixtures/state-v4.sql, upgraded) with changes between
 * them; read at each epoch, the newest release's history is the content of the release of that
 * epoch; a row unchanged keeps one version, a changed one is closed and opened, a removed one
 * closed; the state holds the same history; retention (RELEASE_HISTORY_DAYS) drops what no kept
 * epoch sees; a state that missed the copy of a published release catches up.
 */
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import path from 'node:path';
import { openState, statePath } from '../../builder/state.js';
import { importObservationFile } from '../../builder/importer.js';
import { publishRelease } from '../../builder/release/release-command.js';
import { loadSettings } from '../../shared/config.js';
import { checkEpoch, epochsOf, historyRows, roundFile, stateOf } from './history-check.js';

const DAY = 86400;
/** The first build: after the fixture's imports (its feeds were imported at about 1796159860). */
const T1 = 1796200000;
const T2 = T1 + 8 * DAY;
const T3 = T1 + 16 * DAY;

type Row = Record<string, unknown>;

function setup(t: Test, env: Record<string, string> = {}) {
  const stateDir = stateOf(t);
  const releasesDir = path.join(path.dirname(stateDir), 'releases');
  const settings = loadSettings(env, {
    STATE_DIR: stateDir,
    RELEASES_DIR: releasesDir,
    ASN_MAPPING: 'ip-location-db',
  });
  const logs: string[] = [];
  const release = (now: number) =>
    publishRelease(settings, { dataset: 'demo', now, log: (line) => logs.push(line) }).file;
  const state = (fn: (db: Database.Database) => void) => {
    const db = openState(stateDir);
    try {
      fn(db);
    } finally {
      db.close();
    }
  };
  const observe = async (name: string, start: number, edit?: Parameters<typeof roundFile>[3]) => {
    const round = roundFile(path.dirname(stateDir), name, start, edit);
    const db = openState(stateDir);
    try {
      await importObservationFile(db, round.file);
    } finally {
      db.close();
    }
    return round;
  };
  return { stateDir, releasesDir, release, state, observe, logs };
}

function rows(file: string, sql: string, ...params: unknown[]): Row[] {
  const db = new Database(file, { readonly: true });
  try {
    return db.prepare(sql).all(...params) as Row[];
  } finally {
    db.close();
  }
}

/** api.example's A answer loses 216.244.7.45 from round 5 on. */
const dropAddress = (o: { name: string; type: string; values: string[] }) => {
  if (o.name === 'api.example' && o.type === 'A') o.values = o.values.filter((v) => v !== '216.244.7.45');
};

t.test('three releases: versions opened, kept and closed; every epoch read back', async (t) => {
  const { stateDir, release, state, observe } = setup(t);
  const r1 = release(T1);

  // Between 1 and 2: a DNS round (one answer changed), cloudflare's snapshot re-dated (its
  // ranges unchanged), one aws range's last_seen no longer its source's date, an AS renamed, a
  // mapping row's AS changed, the PTR row rechecked in the round.
  const round5 = await observe('round-5.ndjson', T1 + DAY, dropAddress);
  state((db) => {
    t.same(
      db.prepare(`SELECT min_observed, max_observed FROM dns_round`).all(),
      [{ min_observed: round5.first, max_observed: round5.last }],
      'the import appended one dns_round row: the times it applied',
    );
    db.prepare(`UPDATE provider_range SET last_seen = ? WHERE source = 'cloudflare' AND active = 1`).run(
      T1 + DAY,
    );
    db.prepare(
      `UPDATE provider_range SET last_seen = last_seen - 1 WHERE source = 'aws' AND prefix = '15.181.232.0/21'`,
    ).run();
    db.prepare(`UPDATE as_meta SET value = 'hosting' WHERE field = 'category' AND asn = 3320`).run();
    db.prepare(
      `UPDATE asn_range SET asn = 64512 WHERE source = 'ip-location-db' AND first = '5.101.96.0'`,
    ).run();
    db.prepare(`UPDATE ptr SET checked_at = ?, last_confirmed = ?`).run(round5.first + 1, round5.first + 1);
  });
  const r2 = release(T2);

  // Between 2 and 3: the same round again (a day later each time), an aws range no longer
  // listed, the PTR row rechecked in the new round, a second PTR row.
  const round6 = await observe('round-6.ndjson', T2 + DAY, dropAddress);
  state((db) => {
    db.prepare(
      `UPDATE provider_range SET active = 0 WHERE source = 'aws' AND prefix = '15.181.232.0/21'`,
    ).run();
    db.prepare(`UPDATE ptr SET checked_at = ?, last_confirmed = ?`).run(round6.last, round6.last);
    db.prepare(`INSERT INTO ptr VALUES ('104.16.132.229', '["art.example"]', 'positive', ?, ?)`).run(
      round6.first,
      round6.first,
    );
  });
  const r3 = release(T3);

  const epochs = epochsOf(r3);
  t.same(
    epochs.map((e) => [e.epoch, e.builtAt, e.roundFrom, e.roundTo]),
    [
      [1, T1, null, null],
      [2, T2, round5.first, round5.last],
      [3, T3, round6.first, round6.last],
    ],
    'one epoch per release, the round window of the last round applied',
  );
  t.equal(
    epochs[1]!.sourceDates.cloudflare,
    T1 + DAY,
    "source_dates: the date of the source's current snapshot",
  );
  t.equal(epochs[2]!.dnsCut, round6.last, 'dns_cut: the newest observation applied');
  for (const [epoch, file] of [r1, r2, r3].entries()) checkEpoch(t, r3, file, epoch + 1);
  checkEpoch(t, r2, r1, 1);

  const versions = (table: string, where: string, ...params: unknown[]) =>
    rows(r3, `SELECT e_from, e_to FROM ${table} WHERE ${where} ORDER BY e_from`, ...params);
  t.same(
    versions('provider_range_hist', `source = 'cloudflare'`).filter((v) => v.e_to !== null || v.e_from !== 1),
    [],
    "cloudflare's ranges, re-dated by their snapshot: one version each, since epoch 1",
  );
  t.match(
    rows(r3, `SELECT last_seen FROM provider_range_hist WHERE source = 'cloudflare'`),
    Array(22).fill({ last_seen: -2 }),
    'their last_seen is SOURCE_DATE',
  );
  t.same(
    versions('provider_range_hist', `source = 'aws' AND prefix = '15.181.232.0/21'`),
    [
      { e_from: 1, e_to: 2 },
      { e_from: 2, e_to: 3 },
    ],
    'a range changed at 2 (closed and opened), removed at 3 (closed)',
  );
  t.same(versions('asn_hist', 'asn = 3320'), [
    { e_from: 1, e_to: 2 },
    { e_from: 2, e_to: null },
  ]);
  t.same(versions('asn_hist', 'asn = 2914'), [{ e_from: 1, e_to: null }], 'an AS unchanged: one version');
  t.same(
    versions('asn_hist', 'asn = 16509'),
    [
      { e_from: 1, e_to: 3 },
      { e_from: 3, e_to: null },
    ],
    'the AS of the range removed at 3: its providers block changed',
  );
  t.same(versions('asn_range_hist', 'asn = 64512'), [{ e_from: 2, e_to: null }]);
  t.same(versions('asn_range_hist', `first_text = '5.101.96.0'`), [
    { e_from: 1, e_to: 2 },
    { e_from: 2, e_to: null },
  ]);
  t.same(
    versions('ptr_hist', `value = '15.181.232.18'`),
    [
      { e_from: 1, e_to: 2 },
      { e_from: 2, e_to: null },
    ],
    'the PTR row: a literal time at 1 (no round), ROUND at 2 and 3 (rechecked in each round)',
  );
  t.same(
    rows(
      r3,
      `SELECT checked_at, last_confirmed FROM ptr_hist WHERE e_to IS NULL AND value = '15.181.232.18'`,
    ),
    [{ checked_at: -1, last_confirmed: -1 }],
  );
  t.same(versions('ptr_hist', `value = '104.16.132.229'`), [{ e_from: 3, e_to: null }], 'a new row: opened');
  t.same(
    versions('domain_hist', `name = 'api.example'`),
    [
      { e_from: 1, e_to: 2 },
      { e_from: 2, e_to: null },
    ],
    'a domain whose answer changed in round 5, confirmed in round 6: ROUND keeps its version',
  );
  t.same(
    rows(r3, `SELECT count(*) AS n FROM domain_hist WHERE e_from = 3`),
    [{ n: 0 }],
    'round 6 confirmed every name as round 5 saw it: no domain version at 3',
  );

  // Every interval of every epoch is in the newest release.
  const intervals = (file: string) =>
    rows(
      file,
      `SELECT d.name, i.rtype, i.value, i.first_observed FROM dns_interval i JOIN domain d ON d.id = i.domain_id`,
    ).map((row) => JSON.stringify(row));
  const newest = new Set(intervals(r3));
  t.ok(intervals(r1).every((i) => newest.has(i)) && intervals(r2).every((i) => newest.has(i)));
  t.ok(
    rows(
      r3,
      `SELECT ended_at FROM dns_interval i JOIN domain d ON d.id = i.domain_id WHERE d.name = 'api.example' AND value = '216.244.7.45'`,
    ).some((row) => (row.ended_at as number) >= round5.first && (row.ended_at as number) <= round5.last),
    'the interval round 5 ended is there, ended',
  );

  t.same(
    historyRows(statePath(stateDir), true),
    historyRows(r3, false),
    "the state's history is the release's",
  );
  const counts = rows(r3, `SELECT value FROM meta WHERE key = 'counts'`)[0]!.value as string;
  t.match(
    JSON.parse(counts),
    { epoch: 3, provider_range_hist: Number, domain_hist: Number },
    'meta counts them',
  );
});

t.test(
  'RELEASE_HISTORY_DAYS drops the epochs wholly before the cutoff and what only they held',
  async (t) => {
    const { stateDir, release, state } = setup(t, { RELEASE_HISTORY_DAYS: '2' });
    const reAsn = (value: string) =>
      state((db) =>
        db.prepare(`UPDATE as_meta SET value = ? WHERE field = 'category' AND asn = 3320`).run(value),
      );
    const files = [release(T1)];
    reAsn('hosting');
    files.push(release(T1 + DAY));
    reAsn('business');
    files.push(release(T1 + 2 * DAY));
    t.same(
      epochsOf(files[2]!).map((e) => e.epoch),
      [1, 2, 3],
      'at T1 + 2 d: epoch 1 was current at the cutoff (T1)',
    );
    reAsn('cdn');
    files.push(release(T1 + 5 * DAY));
    const last = files[3]!;
    // Cutoff T1 + 3 d: epochs 1 and 2 ended before it, 3 (from T1 + 2 d to T1 + 5 d) was current then.
    t.same(
      epochsOf(last).map((e) => e.epoch),
      [3, 4],
    );
    t.same(rows(last, `SELECT category, e_from, e_to FROM asn_hist WHERE asn = 3320 ORDER BY e_from`), [
      { category: 'business', e_from: 3, e_to: 4 },
      { category: 'cdn', e_from: 4, e_to: null },
    ]);
    for (const table of [
      'provider_range_hist',
      'asn_hist',
      'domain_hist',
      'ip_summary_hist',
      'asn_segment_hist',
    ])
      t.same(
        rows(last, `SELECT count(*) AS n FROM ${table} WHERE e_to <= 3`),
        [{ n: 0 }],
        `${table}: nothing only 1 and 2 held`,
      );
    t.ok(
      (rows(last, `SELECT count(*) AS n FROM asn_hist WHERE e_from = 1`)[0]!.n as number) > 0,
      'versions since epoch 1 still held are kept',
    );
    checkEpoch(t, last, files[2]!, 3);
    checkEpoch(t, last, files[3]!, 4);
    t.same(
      historyRows(statePath(stateDir), true),
      historyRows(last, false),
      "the state's history is the release's",
    );
    t.equal(
      rows(last, `SELECT count(*) AS n FROM dns_interval`)[0]!.n,
      rows(files[0]!, `SELECT count(*) AS n FROM dns_interval`)[0]!.n,
      'no interval pruned (each one an older epoch showed is shown by the later ones)',
    );
  },
);

t.test('a state that missed the copy of a published release catches up from CURRENT', async (t) => {
  const { stateDir, release, state, logs } = setup(t);
  release(T1);
  state((db) =>
    db.prepare(`UPDATE as_meta SET value = 'hosting' WHERE field = 'category' AND asn = 3320`).run(),
  );
  const r2 = release(T2);
  // As if the builder had stopped after publishing 2: the state's history as it was after 1.
  state((db) => {
    db.prepare(`DELETE FROM release_epoch WHERE epoch = 2`).run();
    for (const table of [
      'provider_range_hist',
      'provider_segment_hist',
      'asn_range_hist',
      'asn_segment_hist',
      'asn_hist',
      'ptr_hist',
      'ip_summary_hist',
      'domain_hist',
      'domain_hosting_hist',
    ]) {
      db.prepare(`DELETE FROM ${table} WHERE e_from = 2`).run();
      db.prepare(`UPDATE ${table} SET e_to = NULL WHERE e_to = 2`).run();
    }
  });
  const r3 = release(T3);
  t.ok(
    logs.some((line) => /caught up with .* \(1 epochs\)/.test(line)),
    'logged',
  );
  t.same(
    epochsOf(r3).map((e) => e.releaseId),
    epochsOf(r2)
      .map((e) => e.releaseId)
      .concat(path.basename(r3, '.sqlite')),
  );
  checkEpoch(t, r3, r2, 2);
  t.same(historyRows(statePath(stateDir), true), historyRows(r3, false));
});
