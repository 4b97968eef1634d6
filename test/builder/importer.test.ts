import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openTempState } from '../helpers/temp-state.js';
import { describeFile, importSnapshot } from '../../builder/importer.js';
import { getSource } from '../../builder/sources/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cloudflareV4 = fs.readFileSync(path.join(root, 'test/fixtures/feeds/cloudflare/ips-v4.txt'), 'utf8');

t.test(
  'provider ranges keep first_seen across snapshots; a range that leaves stops being served',
  async (t) => {
    const { dir, db } = openTempState(t, 'imp-');
    const source = getSource('cloudflare')!;
    const file = path.join(dir, 'ips-v4');
    const snapshot = (text: string, now: number) => {
      fs.writeFileSync(file, text);
      return importSnapshot(db, source, [describeFile(file, now)], { origin: 'import', now });
    };
    const all = cloudflareV4.trim().split('\n');
    t.equal(all.length, 15);
    t.equal(all[0], '173.245.48.0/20');
    const first = snapshot(all.join('\n'), 1000);
    t.same([first.read, first.written, first.rejectedCount, first.removed], [15, 15, 0, 0]);
    const second = snapshot(all.slice(1).join('\n'), 2000);
    t.equal(second.removed, 1, 'one range no longer listed');
    const third = snapshot(all.join('\n'), 3000);
    t.equal(third.removed, 0);
    const rows = db
      .prepare(
        `SELECT prefix, first_seen, last_seen, active FROM provider_range WHERE source = 'cloudflare' AND prefix IN (?, ?)`,
      )
      .all(all[0], all[1]);
    t.same(
      rows,
      [
        { prefix: '173.245.48.0/20', first_seen: 1000, last_seen: 3000, active: 1 },
        { prefix: '103.21.244.0/22', first_seen: 1000, last_seen: 3000, active: 1 },
      ].sort((a, b) => (a.prefix < b.prefix ? -1 : 1)),
    );
    snapshot(all.slice(1).join('\n'), 4000);
    t.same(
      db.prepare(`SELECT first_seen, last_seen, active FROM provider_range WHERE prefix = ?`).get(all[0]),
      {
        first_seen: 1000,
        last_seen: 3000,
        active: 0,
      },
    );
    const stored = db
      .prepare(`SELECT files, records FROM source_snapshot WHERE source = 'cloudflare'`)
      .get() as {
      files: string;
      records: number;
    };
    t.equal(stored.records, 14);
    t.match(JSON.parse(stored.files), [
      { file: 'ips-v4', bytes: Buffer.byteLength(all.slice(1).join('\n')), fetched_at: 4000 },
    ]);
  },
);

t.test('a file that is not in the format is refused with its name', async (t) => {
  const { dir, db } = openTempState(t, 'imp-');
  const file = path.join(dir, 'ip-ranges.json');
  fs.writeFileSync(file, '{"not": "aws"');
  t.throws(
    () => importSnapshot(db, getSource('aws')!, [describeFile(file, 1)], { origin: 'import', now: 1 }),
    {
      message: new RegExp(file.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')),
    },
  );
  t.equal(db.prepare(`SELECT count(*) FROM source_snapshot`).pluck().get(), 0, 'nothing stored');
});

t.test('a seed list replaces the seed table whole (rows in batches of 64 and one by one)', async (t) => {
  const { dir, db } = openTempState(t, 'imp-');
  const file = path.join(dir, 'top-1m.csv');
  const snapshot = (lines: string[], now: number) => {
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    return importSnapshot(db, getSource('tranco')!, [describeFile(file, now)], { origin: 'import', now });
  };
  // 130 names (two full batches and two single rows), one repeated and one to normalise.
  const lines = Array.from({ length: 130 }, (_, i) => `${i + 1},name${i + 1}.example`);
  lines[5] = '6,Name6.Example.';
  lines.push('131,name1.example');
  const first = snapshot(lines, 1000);
  t.same([first.read, first.written, first.rejectedCount], [131, 130, 0]);
  t.equal(db.prepare(`SELECT count(*) FROM seed`).pluck().get(), 130);
  t.same(db.prepare(`SELECT domain, rank FROM seed WHERE rank IN (1, 6, 129, 130) ORDER BY rank`).all(), [
    { domain: 'name1.example', rank: 1 },
    { domain: 'name6.example', rank: 6 },
    { domain: 'name129.example', rank: 129 },
    { domain: 'name130.example', rank: 130 },
  ]);
  const second = snapshot(['1,other.example', '2,name2.example'], 2000);
  t.equal(second.written, 2);
  t.same(db.prepare(`SELECT domain, rank FROM seed ORDER BY rank`).all(), [
    { domain: 'other.example', rank: 1 },
    { domain: 'name2.example', rank: 2 },
  ]);
});

t.test('an IP-to-ASN snapshot replaces its source rows (64 per statement, then one by one)', async (t) => {
  const { dir, db } = openTempState(t, 'imp-');
  const file = path.join(dir, 'ip2asn-v4.tsv');
  // 70 ranges 10.0.i.0/24, AS 64500 + i.
  const lines = Array.from({ length: 70 }, (_, i) => `10.0.${i}.0\t10.0.${i}.255\t${64500 + i}\tUS\tAS ${i}`);
  fs.writeFileSync(file, `${lines.join('\n')}\n`);
  const result = importSnapshot(db, getSource('iptoasn')!, [describeFile(file, 1000)], {
    origin: 'import',
    now: 1000,
  });
  t.same([result.read, result.written, result.rejectedCount], [70, 70, 0]);
  t.equal(db.prepare(`SELECT count(*) FROM asn_range WHERE source = 'iptoasn'`).pluck().get(), 70);
  t.same(
    db
      .prepare(
        `SELECT version, first, last, asn, country, descr FROM asn_range WHERE first IN ('10.0.0.0', '10.0.63.0', '10.0.64.0', '10.0.69.0') ORDER BY asn`,
      )
      .all(),
    [0, 63, 64, 69].map((i) => ({
      version: 4,
      first: `10.0.${i}.0`,
      last: `10.0.${i}.255`,
      asn: 64500 + i,
      country: 'US',
      descr: `AS ${i}`,
    })),
  );
});

t.test(
  'every mapping row is kept, nested ones and ones with the same start too, in file order',
  async (t) => {
    const { dir, db } = openTempState(t, 'imp-');
    const file = path.join(dir, 'ip2asn-v6.tsv');
    // Real rows of ip2asn-v6.tsv.gz: AS20940's 2a02:26f4::/30 holds AS36183's 2a02:26f7:b542::/48,
    // and two rows starting at the same address (an outer one and the /48 at its start).
    const lines = [
      '2a02:26f4::\t2a02:26f7:ffff:ffff:ffff:ffff:ffff:ffff\t20940\tNL\tAKAMAI-ASN1',
      '2a02:26f7:b542::\t2a02:26f7:b542:ffff:ffff:ffff:ffff:ffff\t36183\tUS\tAKAMAI-AS',
      '2a02:26f7:b542::\t2a02:26f7:b542:ff:ffff:ffff:ffff:ffff\t36183\tUS\tAKAMAI-AS',
    ];
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    importSnapshot(db, getSource('iptoasn')!, [describeFile(file, 1000)], { origin: 'import', now: 1000 });
    t.same(db.prepare(`SELECT seq, first, last, asn FROM asn_range ORDER BY seq`).all(), [
      { seq: 1, first: '2a02:26f4::', last: '2a02:26f7:ffff:ffff:ffff:ffff:ffff:ffff', asn: 20940 },
      { seq: 2, first: '2a02:26f7:b542::', last: '2a02:26f7:b542:ffff:ffff:ffff:ffff:ffff', asn: 36183 },
      { seq: 3, first: '2a02:26f7:b542::', last: '2a02:26f7:b542:ff:ffff:ffff:ffff:ffff', asn: 36183 },
    ]);
  },
);

t.test('ranges are dated by the publisher: the entry, else the file, else the fetch', async (t) => {
  const { db } = openTempState(t, 'imp-');
  const feed = (name: string, file: string) => path.join(root, 'test/fixtures/feeds', name, file);
  const load = (source: string, files: string[], fetchedAt: number) =>
    importSnapshot(
      db,
      getSource(source)!,
      files.map((f) => describeFile(f, fetchedAt)),
      { origin: 'import', now: fetchedAt },
    );
  const dates = (source: string, prefix: string) =>
    db
      .prepare(
        `SELECT datetime(first_seen, 'unixepoch') AS first, datetime(last_seen, 'unixepoch') AS last FROM provider_range WHERE source = ? AND prefix = ?`,
      )
      .get(source, prefix);
  load('aws', [feed('aws', 'ip-ranges.json')], 1_800_000_000);
  t.same(
    dates('aws', '23.228.249.0/24'),
    { first: '2026-08-22 15:17:05', last: '2026-08-22 15:17:05' },
    'createDate',
  );
  load('tor-exit-addresses', [feed('tor-exit-addresses', 'exit-addresses')], 1_800_000_000);
  t.same(
    dates('tor-exit-addresses', '109.163.233.194/32'),
    { first: '2013-08-19 00:19:10', last: '2013-08-19 00:19:10' },
    'its later ExitAddress time, not the Downloaded header',
  );
  load('cloudflare', [feed('cloudflare', 'ips-v4.txt')], 1_800_000_000);
  t.same(
    dates('cloudflare', '173.245.48.0/20'),
    { first: '2027-01-15 08:00:00', last: '2027-01-15 08:00:00' },
    'no date in the file: the import',
  );
  // An older copy imported later moves first_seen back and leaves last_seen.
  const older = path.join(
    t.testdir({
      'ip-ranges.json': fs
        .readFileSync(feed('aws', 'ip-ranges.json'), 'utf8')
        .replace('2026-08-22-15-17-05', '2026-05-01-00-00-00'),
    }),
    'ip-ranges.json',
  );
  load('aws', [older], 1_800_000_100);
  t.same(dates('aws', '23.228.249.0/24'), { first: '2026-05-01 00:00:00', last: '2026-08-22 15:17:05' });
});

t.test('a version 3 state is upgraded: its mapping rows numbered, nothing else touched', async (t) => {
  const dir = t.testdir({});
  const Database = (await import('better-sqlite3')).default;
  const old = new Database(path.join(dir, 'state.sqlite'));
  old.exec(`
    CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
    INSERT INTO state_meta VALUES ('schema_version', '3');
    CREATE TABLE asn_range (source TEXT NOT NULL, version INTEGER NOT NULL, first TEXT NOT NULL, last TEXT NOT NULL,
      asn INTEGER NOT NULL, country TEXT, descr TEXT, PRIMARY KEY (source, version, first)) WITHOUT ROWID;
    INSERT INTO asn_range VALUES ('iptoasn', 6, '2001:db8::', '2001:db8::ff', 64500, NULL, NULL),
      ('iptoasn', 4, '192.0.2.0', '192.0.2.255', 64501, 'US', 'x'), ('ip-location-db', 4, '10.0.0.0', '10.0.0.255', 64502, NULL, NULL);
  `);
  old.close();
  const { openState, STATE_SCHEMA_VERSION } = await import('../../builder/state.js');
  const db = openState(dir);
  t.teardown(() => db.close());
  t.equal(
    db.prepare(`SELECT value FROM state_meta WHERE key = 'schema_version'`).pluck().get(),
    String(STATE_SCHEMA_VERSION),
  );
  t.same(db.prepare(`SELECT source, seq, first, asn FROM asn_range ORDER BY source, seq`).all(), [
    { source: 'ip-location-db', seq: 1, first: '10.0.0.0', asn: 64502 },
    { source: 'iptoasn', seq: 1, first: '192.0.2.0', asn: 64501 },
    { source: 'iptoasn', seq: 2, first: '2001:db8::', asn: 64500 },
  ]);
});
