import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openState, type StateDb } from '../../builder/state.js';
import { ObservationApplier } from '../../builder/observations/applier.js';
import { ObservationLineScanner } from '../../builder/observations/line-scanner.js';
import { parseObservationLine } from '../../builder/observations/line-parser.js';
import { OUTCOME_CODES } from '../../builder/dns-state/outcome-codes.js';
import { ObservationFields } from '../../builder/dns-state/observation-fields.js';
import { importObservationFile, importObservationFiles } from '../../builder/importer.js';
import type { ObservationRecord } from '../../builder/sources/types.js';

const T0 = Date.parse('2026-10-01T00:00:00Z') / 1000;
const DAY = 86_400;

function obs(
  name: string,
  type: 'A' | 'AAAA',
  day: number,
  outcome: ObservationRecord['outcome'],
  values: string[] = [],
  cnames: string[] = [],
): ObservationRecord {
  const line = JSON.stringify({
    name,
    type,
    time: new Date((T0 + day * DAY) * 1000).toISOString(),
    outcome,
    values,
    cnames,
    ttl: 300 + day,
  });
  const parsed = parseObservationLine(line);
  if (!parsed.ok) throw new Error(parsed.reason);
  return parsed.record;
}

function freshState(t: Test): StateDb {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'obs-'));
  const db = openState(dir);
  t.teardown(() => {
    db.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return db;
}

function intervals(db: StateDb, name: string): Array<{ ended: number | null }> {
  return db
    .prepare(
      `SELECT rtype, value, first_observed - ${T0} AS first, last_confirmed - ${T0} AS last, ended_at - ${T0} AS ended FROM (
         SELECT name_id, rtype, value, first_observed, last_confirmed, ended_at FROM dns_ended
         UNION ALL SELECT s.name_id, s.rtype, v.value, f.value, s.last_positive, NULL
           FROM dns_state s, json_each(s.vals) v, json_each(s.firsts) f WHERE f.key = v.key)
       JOIN dns_name n ON n.id = name_id WHERE n.name = ? ORDER BY first, value`,
    )
    .all(name) as Array<{ ended: number | null }>;
}

function state(db: StateDb, name: string, rtype = 'A') {
  return db
    .prepare(
      `SELECT outcome, good_outcome, vals, cnames, last_observed - ${T0} AS observed, last_confirmed - ${T0} AS confirmed,
         last_positive - ${T0} AS positive FROM dns_state s JOIN dns_name n ON n.id = s.name_id WHERE n.name = ? AND rtype = ?`,
    )
    .get(name, rtype);
}

t.test('line format: canonical values, order-insensitive, clear reasons', async (t) => {
  const ok = parseObservationLine(
    '{"name":"WWW.Example.COM.","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["2606:4700:0:0::1","2606:4700::0"],"cnames":["A.Example.NET."]}',
  );
  t.same(ok, {
    ok: true,
    record: {
      name: 'www.example.com',
      type: 'AAAA',
      time: T0,
      outcome: 'positive',
      values: ['2606:4700::', '2606:4700::1'],
      cnames: ['a.example.net'],
    },
  });
  t.same(
    parseObservationLine(
      '{"name":"a.com","type":"A","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["1.2.3"]}',
    ),
    {
      ok: false,
      reason: '"1.2.3" is not an IPv4 address (type A)',
    },
  );
  t.same(
    parseObservationLine(
      '{"name":"a.com","type":"A","time":"2026-10-01T00:00:00Z","outcome":"positive","values":[]}',
    ),
    {
      ok: false,
      reason: 'a positive outcome needs at least one address in "values"',
    },
  );
  t.same(
    parseObservationLine('{"name":"a.com","type":"MX","time":"2026-10-01T00:00:00Z","outcome":"positive"}'),
    {
      ok: false,
      reason: 'expected "type" A or AAAA, got "MX"',
    },
  );
  t.same(parseObservationLine('{"name":"a.com","type":"A","time":"yesterday","outcome":"nxdomain"}'), {
    ok: false,
    reason: 'expected "time" as ISO 8601 with offset, got "yesterday"',
  });
  t.same(parseObservationLine('not json'), { ok: false, reason: 'expected one JSON object per line' });
});

t.test('state machine transitions of docs/api.md#states-and-staleness', async (t) => {
  const db = freshState(t);
  const applier = new ObservationApplier(db);
  const counts = applier.apply([obs('a.example', 'A', 0, 'positive', ['192.0.2.1', '198.51.100.7'])]);
  applier.save();
  t.same(counts, { created: 1, confirmed: 0, changed: 0, transient: 0, skipped: 0 });

  // Same set in another order with another TTL: last_confirmed advances, nothing ends.
  t.same(applier.apply([obs('a.example', 'A', 1, 'positive', ['198.51.100.7', '192.0.2.1'])]).confirmed, 1);
  applier.save();
  t.same(intervals(db, 'a.example'), [
    { rtype: 'A', value: '192.0.2.1', first: 0, last: DAY, ended: null },
    { rtype: 'A', value: '198.51.100.7', first: 0, last: DAY, ended: null },
  ]);

  // A transient failure never ends an interval and keeps the answer; state is stale.
  t.same(applier.apply([obs('a.example', 'A', 2, 'timeout')]).transient, 1);
  applier.save();
  t.same(state(db, 'a.example'), {
    outcome: 'timeout',
    good_outcome: 'positive',
    vals: '["192.0.2.1","198.51.100.7"]',
    cnames: '[]',
    observed: 2 * DAY,
    confirmed: DAY,
    positive: DAY,
  });
  t.equal(intervals(db, 'a.example').filter((i: { ended: number | null }) => i.ended !== null).length, 0);

  // A different set: the address that left ends (change between last_confirmed and ended_at), a new one opens.
  t.same(applier.apply([obs('a.example', 'A', 3, 'positive', ['192.0.2.1', '203.0.113.5'])]).changed, 1);
  applier.save();
  t.same(intervals(db, 'a.example'), [
    { rtype: 'A', value: '192.0.2.1', first: 0, last: 3 * DAY, ended: null },
    { rtype: 'A', value: '198.51.100.7', first: 0, last: DAY, ended: 3 * DAY },
    { rtype: 'A', value: '203.0.113.5', first: 3 * DAY, last: 3 * DAY, ended: null },
  ]);

  // NXDOMAIN ends every open interval; then a return to an earlier address opens a new interval.
  applier.apply([obs('a.example', 'A', 4, 'nxdomain')]);
  applier.apply([obs('a.example', 'A', 5, 'positive', ['198.51.100.7'])]);
  applier.save();
  t.same(intervals(db, 'a.example'), [
    { rtype: 'A', value: '192.0.2.1', first: 0, last: 3 * DAY, ended: 4 * DAY },
    { rtype: 'A', value: '198.51.100.7', first: 0, last: DAY, ended: 3 * DAY },
    { rtype: 'A', value: '203.0.113.5', first: 3 * DAY, last: 3 * DAY, ended: 4 * DAY },
    { rtype: 'A', value: '198.51.100.7', first: 5 * DAY, last: 5 * DAY, ended: null },
  ]);
  t.same(state(db, 'a.example'), {
    outcome: 'positive',
    good_outcome: 'positive',
    vals: '["198.51.100.7"]',
    cnames: '[]',
    observed: 5 * DAY,
    confirmed: 5 * DAY,
    positive: 5 * DAY,
  });

  // A failure before any success: never confirmed.
  applier.apply([obs('b.example', 'AAAA', 0, 'servfail')]);
  applier.save();
  t.same(state(db, 'b.example', 'AAAA'), {
    outcome: 'servfail',
    good_outcome: null,
    vals: '[]',
    cnames: '[]',
    observed: 0,
    confirmed: null,
    positive: null,
  });

  // Re-applying old lines changes nothing; two lines of one key in one batch apply in order.
  const again = applier.apply([obs('a.example', 'A', 3, 'positive', ['10.0.0.1'])]);
  t.same(again.skipped, 1);
  const both = applier.apply([
    obs('c.example', 'A', 0, 'positive', ['192.0.2.9']),
    obs('c.example', 'A', 1, 'positive', ['192.0.2.10']),
  ]);
  applier.save();
  t.same(both, { created: 1, confirmed: 0, changed: 1, transient: 0, skipped: 0 });
  t.same(intervals(db, 'c.example'), [
    { rtype: 'A', value: '192.0.2.9', first: 0, last: 0, ended: DAY },
    { rtype: 'A', value: '192.0.2.10', first: DAY, last: DAY, ended: null },
  ]);
});

t.test('NDJSON import: rejected lines carry file:line, re-import applies nothing twice', async (t) => {
  const db = freshState(t);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'obsfile-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'round-1.ndjson');
  fs.writeFileSync(
    file,
    [
      '{"name":"x.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["192.0.2.1"],"cnames":["edge.cdn.example"]}',
      '{"name":"x.example","type":"AAAA","time":"2026-10-01T00:00:01Z","outcome":"nodata","values":[],"cnames":[]}',
      '{"name":"bad name","type":"A","time":"2026-10-01T00:00:02Z","outcome":"nxdomain"}',
      '',
    ].join('\n'),
  );
  const first = await importObservationFile(db, file);
  t.equal(first.read, 3);
  t.equal(first.written, 2);
  t.equal(first.rejectedCount, 1);
  t.equal(first.rejected[0]!.line, 3);
  t.match(first.rejected[0]!.reason, /^"name" "bad name": /);
  const round = `SELECT min_observed, max_observed FROM dns_round`;
  const applied = [{ min_observed: 1790812800, max_observed: 1790812801 }];
  t.same(db.prepare(round).all(), applied, 'a dns_round row: the times the save applied');
  const second = await importObservationFile(db, file);
  t.same(second.counts, { created: 0, confirmed: 0, changed: 0, transient: 0, skipped: 2 });
  t.same(db.prepare(round).all(), applied, 'a save that applied nothing records no round');
});

/** What the byte scanner made of a line, as the record parseObservationLine gives. */
function scanned(line: string): ObservationRecord | null {
  const f = new ObservationFields();
  if (!new ObservationLineScanner().scan(Buffer.from(line), 0, Buffer.byteLength(line), f)) return null;
  const text = (b: Buffer, start: number, end: number) => b.toString('utf8', start, end);
  return {
    name: text(f.buf, f.nameStart, f.nameEnd),
    type: f.aaaa ? 'AAAA' : 'A',
    time: f.time,
    outcome: [...OUTCOME_CODES].find(([, code]) => code === f.outcome)![0] as ObservationRecord['outcome'],
    values: f.nVals ? (JSON.parse(text(f.valsBuf, f.valsStart, f.valsEnd)) as string[]) : [],
    cnames:
      f.cnamesEnd - f.cnamesStart > 2
        ? (JSON.parse(text(f.buf, f.cnamesStart, f.cnamesEnd)) as string[])
        : [],
  };
}

t.test('the byte scanner accepts a line only as parseObservationLine does', async (t) => {
  const base =
    '{"name":"www.example.com","type":"AAAA","time":"2026-10-01T00:00:05Z","outcome":"positive","values":["2606:4700::1111","2001:db8::1"],"cnames":["edge.example.net"],"ttl":300}';
  const lines = [
    base,
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["192.0.2.1"]}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["192.0.2.9","192.0.2.10","192.0.2.9"]}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["192.0.2.01"]}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["256.0.2.1"]}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["2001:db8::1"]}',
    '{"name":"a.example","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["2001:DB8::1"]}',
    '{"name":"a.example","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["2001:db8:0:0:1::1"]}',
    '{"name":"a.example","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["2001:db8::1:0:0:1"]}',
    '{"name":"a.example","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["2001:0db8::1"]}',
    '{"name":"a.example","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["2001:db8::0:1"]}',
    '{"name":"a.example","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["::ffff:192.0.2.1"]}',
    '{"name":"a.example","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["::","::1","1::","1:2:3:4:5:6:7:8"]}',
    '{"name":"a.example","type":"AAAA","time":"2026-10-01T00:00:00Z","outcome":"positive","values":["1:0:0:2:0:0:0:3","1:0:0:2::3"]}',
    '{"name":"A.Example.","type":"A","time":"2026-10-01T00:00:00Z","outcome":"nxdomain"}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00+02:00","outcome":"nodata","cnames":["b.example."]}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"nodata","values":null,"cnames":null}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"nodata","values":["192.0.2.1"]}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout","ttl":-1.5e+3,"x":true,"y":null,"z":"w"}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout","ttl":01}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout","ttl":[1]}',
    '{"name":"a.example","name":"b.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout"}',
    '{"na\\u006de":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout"}',
    '{ "name": "a.example", "type": "A", "time": "2026-10-01T00:00:00Z", "outcome": "timeout" }',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout"},',
    '{"name":"a.example","type":"A","outcome":"timeout"}',
    '{"name":"-a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout"}',
    '{"name":"a_b.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout"}',
    '{"name":"example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"timeout"}',
    '{"name":"a.example","type":"A","time":"2026-10-01","outcome":"timeout"}',
    '{"name":"a.example","type":"A","time":"2026-10-01T00:00:00Z","outcome":"Timeout"}',
  ];
  // Random damage to the base line: every variant the scanner accepts must parse to the same record.
  let seed = 7;
  const random = (n: number) => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed % n;
  };
  const alphabet = '"\\,:[]{}.-_0123456789abfAF: xn';
  for (let i = 0; i < 3000; i++) {
    const chars = [...base];
    for (let d = 1 + random(3); d > 0; d--) {
      const at = random(chars.length);
      const op = random(3);
      if (op === 0) chars.splice(at, 1);
      else if (op === 1) chars.splice(at, 0, alphabet[random(alphabet.length)]!);
      else chars[at] = alphabet[random(alphabet.length)]!;
    }
    lines.push(chars.join(''));
  }
  let accepted = 0;
  for (const line of lines) {
    const fast = scanned(line);
    if (fast === null) continue;
    accepted++;
    const parsed = parseObservationLine(line);
    if (!parsed.ok || JSON.stringify(parsed.record) !== JSON.stringify(fast)) {
      t.fail(`scanner and parser differ on ${line}: ${JSON.stringify(fast)} vs ${JSON.stringify(parsed)}`);
    }
  }
  t.ok(accepted > 100, `the scanner took ${accepted} of ${lines.length} lines`);
  t.same(scanned(lines[2]!)!.values, ['192.0.2.10', '192.0.2.9'], 'values sorted, without repeats');
});

t.test(
  'several files in one import: worker threads or not, the same state as one file at a time',
  async (t) => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'obsfiles-'));
    t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
    const files = [0, 1, 2].map((day) => {
      const file = path.join(dir, `round-${day}.ndjson`);
      const lines: string[] = [];
      for (let i = 0; i < 3000; i++) {
        const changed = (i * 7 + day) % 5 === 0 ? day : 0;
        const time = new Date((T0 + day * DAY + i) * 1000).toISOString().replace('.000Z', 'Z');
        const outcome = i % 11 === day ? 'timeout' : i % 13 === 0 ? 'nxdomain' : 'positive';
        const values =
          outcome === 'positive' ? [`10.${changed}.${i >> 8}.${i & 255}`, `192.0.2.${i % 7}`] : [];
        lines.push(JSON.stringify({ name: `n${i}.example`, type: 'A', time, outcome, values, cnames: [] }));
        if (i % 100 === 0) lines.push('# a comment', '{"name":"bad"}');
      }
      fs.writeFileSync(file, `${lines.join('\n')}\n`);
      return file;
    });
    const dump = (db: StateDb) =>
      db
        .prepare(
          `SELECT n.name, x.* FROM (SELECT name_id, rtype, value, first_observed, last_confirmed, ended_at FROM dns_ended
           UNION ALL SELECT s.name_id, s.rtype, v.value, f.value, s.last_positive, NULL
           FROM dns_state s, json_each(s.vals) v, json_each(s.firsts) f WHERE f.key = v.key) x
         JOIN dns_name n ON n.id = x.name_id ORDER BY 1, 3, 4, 5`,
        )
        .all()
        .map((r) => JSON.stringify({ ...(r as object), name_id: undefined }));
    const oneByOne = freshState(t);
    for (const file of files) await importObservationFile(oneByOne, file);
    for (const workers of [0, 2]) {
      const db = freshState(t);
      // With workers, the save also writes its dns_state rows in worker threads (any number of rows).
      const summaries = await importObservationFiles(db, files, undefined, { workers, parallelSaveRows: 1 });
      t.same(
        summaries.map((s) => [s.read, s.rejectedCount, s.rejected[0]?.line]),
        [
          [3030, 30, 3],
          [3030, 30, 3],
          [3030, 30, 3],
        ],
        `${workers} workers: lines read, rejected`,
      );
      t.same(dump(db), dump(oneByOne), `${workers} workers: same intervals`);
      t.equal(summaries[2]!.state!.save.names, 3000);
      t.equal(summaries[2]!.state!.save.partitions, workers);
    }
  },
);
