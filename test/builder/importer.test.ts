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
