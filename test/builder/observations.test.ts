import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openState, type StateDb } from '../../builder/state.js';
import { ObservationApplier, parseObservationLine } from '../../builder/observations.js';
import { importObservationFile } from '../../builder/importer.js';
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

t.test('state machine transitions of SPEC.md', async (t) => {
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
  const second = await importObservationFile(db, file);
  t.same(second.counts, { created: 0, confirmed: 0, changed: 0, transient: 0, skipped: 2 });
});
