import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { openState } from '../../builder/state.js';
import { describeFile, importSnapshot } from '../../builder/importer.js';
import { getSource } from '../../builder/sources/index.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const cloudflareV4 = fs.readFileSync(path.join(root, 'test/fixtures/feeds/cloudflare/ips-v4.txt'), 'utf8');

t.test(
  'provider ranges keep first_seen across snapshots; a range that leaves stops being served',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'imp-'));
    const db = openState(path.join(dir, 'state'));
    t.teardown(() => {
      db.close();
      fs.rmSync(dir, { recursive: true, force: true });
    });
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
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'imp-'));
  const db = openState(path.join(dir, 'state'));
  t.teardown(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
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
