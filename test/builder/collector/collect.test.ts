/**
 * The collector against a real DNS server (Knot, generated zones) with a fault-injecting relay in
 * front of it: outcomes, CNAME chains, TCP after truncation, retries, answers that change between
 * rounds (zone reload), order and TTL changes that are not changes, a failure that keeps the
 * answer, PTR rotation, resume after an interruption, and coverage.ptr in a release.
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { openState, type StateDb } from '../../../builder/state.js';
import { collectRound, type CollectOptions } from '../../../builder/collector/round.js';
import { publishRelease } from '../../../builder/release/release-command.js';
import { loadSettings } from '../../../shared/config.js';
import { startKnot, zoneText } from '../../helpers/knot.js';
import { startFaultRelay, type FaultRule } from '../../helpers/dns-fault-relay.js';

const T0 = 1_790_000_000;
const T1 = T0 + 3600;
const T2 = T0 + 7200;
const SEEDS = ['alpha', 'beta', 'gamma', 'big', 'slow', 'flaky', 'broken', 'garbled', 'kept'].map(
  (d) => `${d}.test`,
);
const BIG = Array.from({ length: 100 }, (_, i) => `203.0.113.${i + 1}`);

function testZone(serial: number): string {
  const round2 = serial >= 2;
  return zoneText('test', serial, [
    // Round 2: same address set, another TTL (the relay also reverses the order).
    `alpha ${round2 ? 60 : 300} A 192.0.2.1`,
    `alpha ${round2 ? 60 : 300} A 192.0.2.2`,
    'alpha AAAA 2001:db8::1',
    'www.alpha CNAME alpha',
    `beta A ${round2 ? '192.0.2.11' : '192.0.2.10'}`,
    'www.beta CNAME edge1.cdn',
    'edge1.cdn CNAME edge2.cdn',
    'edge2.cdn A 198.51.100.7',
    'edge2.cdn AAAA 2001:db8::7',
    ...(round2 ? ['gamma A 192.0.2.30'] : []),
    // More than 1232 bytes of answer: truncated over UDP, asked again over TCP.
    ...BIG.map((ip) => `big A ${ip}`),
    'slow A 192.0.2.50',
    'flaky A 192.0.2.60',
    'broken A 192.0.2.70',
    'garbled A 192.0.2.80',
    'kept A 192.0.2.90',
  ]);
}

const REVERSE_V4 = zoneText('2.0.192.in-addr.arpa', 1, [
  '1 PTR host1.alpha.test.',
  '2 PTR host2.alpha.test.',
  '2 PTR alias.alpha.test.',
]);
const REVERSE_V6 = zoneText('8.b.d.0.1.0.0.2.ip6.arpa', 1, [
  '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0 PTR v6.alpha.test.',
]);

const ROUND1_RULES: FaultRule[] = [
  { name: 'slow.test', fault: 'drop' },
  { name: 'flaky.test', type: 'A', fault: 'drop', times: 1 },
  { name: 'broken.test', fault: 'servfail' },
  { name: 'garbled.test', type: 'A', fault: 'cut' },
];
const ROUND2_RULES: FaultRule[] = [
  { name: 'alpha.test', type: 'A', fault: 'reverse' },
  { name: 'kept.test', type: 'A', fault: 'servfail' },
  { name: 'broken.test', fault: 'servfail' },
  { name: 'garbled.test', type: 'A', fault: 'cut' },
  { name: '1.2.0.192.in-addr.arpa', type: 'PTR', fault: 'servfail' },
];

async function setup(t: { teardown: (fn: () => Promise<void>) => void }) {
  const knot = await startKnot({
    test: testZone(1),
    '2.0.192.in-addr.arpa': REVERSE_V4,
    '8.b.d.0.1.0.0.2.ip6.arpa': REVERSE_V6,
  });
  const relay = await startFaultRelay(knot, ROUND1_RULES);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'collect-'));
  const stateDir = path.join(dir, 'state');
  const db = openState(stateDir);
  const insert = db.prepare(`INSERT INTO seed (domain, rank) VALUES (?, ?)`);
  SEEDS.forEach((d, i) => insert.run(d, i + 1));
  t.teardown(async () => {
    db.close();
    await relay.stop();
    await knot.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });
  const options = (now: number, extra: Partial<CollectOptions> = {}): CollectOptions => ({
    resolver: { host: relay.host, port: relay.port },
    timeoutMs: 150,
    retries: 1,
    maxQps: 0,
    maxInFlight: 8,
    ptrShare: 1,
    now: () => now,
    ...extra,
  });
  return { knot, relay, db, dir, stateDir, options };
}

function state(db: StateDb, name: string, rtype: string) {
  return db
    .prepare(
      `SELECT s.outcome, s.good_outcome, s.vals, s.firsts, s.cnames, s.last_observed, s.last_confirmed, s.last_positive
       FROM dns_state s JOIN dns_name n ON n.id = s.name_id WHERE n.name = ? AND s.rtype = ?`,
    )
    .get(name, rtype);
}

function row(
  outcome: string,
  good: string | null,
  vals: string[],
  firsts: number[],
  cnames: string[],
  times: Array<number | null>,
) {
  return {
    outcome,
    good_outcome: good,
    vals: JSON.stringify(vals),
    firsts: JSON.stringify(firsts),
    cnames: JSON.stringify(cnames),
    last_observed: times[0],
    last_confirmed: times[1],
    last_positive: times[2],
  };
}

t.test('rounds against Knot: outcomes, chains, TCP, changes, failures, PTR rotation', async (t) => {
  const { knot, relay, db, dir, stateDir, options } = await setup(t);

  // Round 1.
  const r1 = await collectRound(db, options(T0));
  t.equal(r1.interrupted, false);
  t.same(r1.forward!.outcomes, {
    positive: 10,
    nxdomain: 16,
    nodata: 5,
    timeout: 2,
    servfail: 2,
    malformed: 1,
  });
  t.same([r1.forward!.names, r1.forward!.answers, r1.forward!.asked], [18, 36, 36]);
  t.same(r1.forward!.counts, { created: 36, confirmed: 0, changed: 0, transient: 0, skipped: 0 });
  t.equal(r1.forward!.stats.tcp, 1, 'big.test A was truncated and asked again over TCP');
  // slow.test A and AAAA: 2 tries each; flaky.test A: dropped once, answered on the retry.
  t.equal(r1.forward!.stats.retries, 3);
  t.equal(relay.counts.get('slow.test/A'), 2);
  t.equal(relay.counts.get('flaky.test/A'), 2);
  t.equal(relay.counts.get('alpha.test/A'), 1);

  t.same(
    state(db, 'alpha.test', 'A'),
    row('positive', 'positive', ['192.0.2.1', '192.0.2.2'], [T0, T0], [], [T0, T0, T0]),
  );
  t.same(
    state(db, 'www.alpha.test', 'AAAA'),
    row('positive', 'positive', ['2001:db8::1'], [T0], ['alpha.test'], [T0, T0, T0]),
  );
  t.same(
    state(db, 'www.beta.test', 'A'),
    row('positive', 'positive', ['198.51.100.7'], [T0], ['edge1.cdn.test', 'edge2.cdn.test'], [T0, T0, T0]),
  );
  t.same(
    state(db, 'www.beta.test', 'AAAA'),
    row('positive', 'positive', ['2001:db8::7'], [T0], ['edge1.cdn.test', 'edge2.cdn.test'], [T0, T0, T0]),
  );
  t.same(state(db, 'beta.test', 'AAAA'), row('nodata', 'nodata', [], [], [], [T0, T0, null]));
  t.same(state(db, 'gamma.test', 'A'), row('nxdomain', 'nxdomain', [], [], [], [T0, T0, null]));
  t.same(
    state(db, 'big.test', 'A'),
    row(
      'positive',
      'positive',
      [...BIG].sort(),
      BIG.map(() => T0),
      [],
      [T0, T0, T0],
    ),
  );
  t.same(state(db, 'slow.test', 'A'), row('timeout', null, [], [], [], [T0, null, null]));
  t.same(state(db, 'flaky.test', 'A'), row('positive', 'positive', ['192.0.2.60'], [T0], [], [T0, T0, T0]));
  t.same(state(db, 'broken.test', 'AAAA'), row('servfail', null, [], [], [], [T0, null, null]));
  t.same(state(db, 'garbled.test', 'A'), row('malformed', null, [], [], [], [T0, null, null]));
  t.same(state(db, 'garbled.test', 'AAAA'), row('nodata', 'nodata', [], [], [], [T0, T0, null]));

  // PTR of every observed IP (share 1): 108 IPs.
  t.same([r1.ptr!.observedIps, r1.ptr!.target, r1.ptr!.asked], [108, 108, 108]);
  t.same(r1.ptr!.outcomes, { positive: 3, nxdomain: 4, nodata: 0, timeout: 0, servfail: 101, malformed: 0 });
  const ptr = (ip: string) =>
    db.prepare(`SELECT names, status, checked_at, last_confirmed FROM ptr WHERE ip = ?`).get(ip);
  t.same(ptr('192.0.2.2'), {
    names: '["alias.alpha.test","host2.alpha.test"]',
    status: 'positive',
    checked_at: T0,
    last_confirmed: T0,
  });
  t.same(ptr('2001:db8::1'), {
    names: '["v6.alpha.test"]',
    status: 'positive',
    checked_at: T0,
    last_confirmed: T0,
  });
  t.same(ptr('2001:db8::7'), { names: '[]', status: 'nxdomain', checked_at: T0, last_confirmed: T0 });
  t.same(ptr('198.51.100.7'), { names: '[]', status: 'servfail', checked_at: T0, last_confirmed: null });
  t.same(db.prepare(`SELECT phase, names FROM collect_round WHERE id = ?`).get(r1.round), {
    phase: 'done',
    names: 18,
  });
  t.equal(db.prepare(`SELECT count(*) FROM collect_batch`).pluck().get(), 0);

  // The release reports the PTR coverage.
  const settings = loadSettings({}, { STATE_DIR: stateDir, RELEASES_DIR: path.join(dir, 'releases') });
  const release = publishRelease(settings, { dataset: 'production', log: () => {} });
  const rdb = new Database(release.file, { readonly: true });
  const coverage = JSON.parse(
    (rdb.prepare(`SELECT value FROM meta WHERE key = 'coverage'`).pluck().get() as string | undefined) ??
      '{}',
  ) as { ptr?: unknown };
  rdb.close();
  t.same(coverage.ptr, { checked_ips: 108, observed_ips: 3 });

  // Round 2: zone reloaded (beta moves, gamma appears, alpha's TTL changes), new faults.
  knot.writeZone('test', testZone(2));
  await knot.reload('test', 2);
  relay.setRules(ROUND2_RULES);
  const r2 = await collectRound(db, options(T1, { ptrShare: 0.05 }));
  t.same(r2.forward!.outcomes, {
    positive: 11,
    nxdomain: 14,
    nodata: 7,
    timeout: 0,
    servfail: 3,
    malformed: 1,
  });
  t.same(r2.forward!.counts, { created: 0, confirmed: 27, changed: 5, transient: 4, skipped: 0 });
  // Order and TTL changed, same set: confirmed, the intervals go on.
  t.same(
    state(db, 'alpha.test', 'A'),
    row('positive', 'positive', ['192.0.2.1', '192.0.2.2'], [T0, T0], [], [T1, T1, T1]),
  );
  // A different set ends the interval and opens a new one.
  t.same(state(db, 'beta.test', 'A'), row('positive', 'positive', ['192.0.2.11'], [T1], [], [T1, T1, T1]));
  t.same(state(db, 'gamma.test', 'A'), row('positive', 'positive', ['192.0.2.30'], [T1], [], [T1, T1, T1]));
  t.same(state(db, 'gamma.test', 'AAAA'), row('nodata', 'nodata', [], [], [], [T1, T1, null]));
  t.same(state(db, 'slow.test', 'A'), row('positive', 'positive', ['192.0.2.50'], [T1], [], [T1, T1, T1]));
  // A failure keeps the answer (stale: last_observed after last_confirmed).
  t.same(state(db, 'kept.test', 'A'), row('servfail', 'positive', ['192.0.2.90'], [T0], [], [T1, T0, T0]));
  t.same(
    db
      .prepare(
        `SELECT n.name, e.rtype, e.value, e.first_observed, e.last_confirmed, e.ended_at FROM dns_ended e JOIN dns_name n ON n.id = e.name_id`,
      )
      .all(),
    [
      {
        name: 'beta.test',
        rtype: 'A',
        value: '192.0.2.10',
        first_observed: T0,
        last_confirmed: T0,
        ended_at: T1,
      },
    ],
  );

  // PTR rotation: ceil(110 × 0.05) = 6 IPs, never checked first, then the oldest (address order).
  t.same([r2.ptr!.observedIps, r2.ptr!.target], [110, 6]);
  const checkedAt = (time: number) =>
    db.prepare(`SELECT ip FROM ptr WHERE checked_at = ? ORDER BY ip`).pluck().all(time);
  t.same(checkedAt(T1), ['192.0.2.1', '192.0.2.11', '192.0.2.2', '192.0.2.30', '192.0.2.50', '192.0.2.60']);
  // A failed PTR check keeps the names.
  t.same(ptr('192.0.2.1'), {
    names: '["host1.alpha.test"]',
    status: 'servfail',
    checked_at: T1,
    last_confirmed: T0,
  });

  relay.setRules([]);
  const r3 = await collectRound(db, options(T2, { ptrShare: 0.05 }));
  // broken.test (A, AAAA) and garbled.test A answer again: their first good answers.
  t.equal(r3.forward!.counts.changed, 3);
  // Newly observed (broken.test, garbled.test) first, then the oldest checks of round 1.
  t.same([r3.ptr!.observedIps, r3.ptr!.target], [112, 6]);
  t.same(checkedAt(T2), [
    '192.0.2.70',
    '192.0.2.80',
    '192.0.2.90',
    '198.51.100.7',
    '2001:db8::1',
    '2001:db8::7',
  ]);
});

t.test('an interrupted round resumes without asking again and never half-applies', async (t) => {
  const { relay, db, options } = await setup(t);
  const controller = new AbortController();
  const first = await collectRound(
    db,
    options(T0, {
      maxInFlight: 1,
      batchSize: 2,
      signal: controller.signal,
      onBatch: () => controller.abort(),
    }),
  );
  t.equal(first.interrupted, true);
  const kept = first.forward!.answers;
  t.ok(kept >= 2 && kept < 36, `${kept} answers kept`);
  t.equal(db.prepare(`SELECT count(*) FROM dns_state`).pluck().get(), 0, 'nothing applied to the state');
  t.equal(db.prepare(`SELECT count(*) FROM dns_name`).pluck().get(), 0);
  t.equal(db.prepare(`SELECT phase FROM collect_round`).pluck().get(), 'forward');
  const stored = (db.prepare(`SELECT answers FROM collect_batch`).pluck().all() as string[]).flatMap(
    (text) => JSON.parse(text) as Array<[string, number]>,
  );
  t.equal(stored.length, kept);
  const askedBefore = new Map(relay.counts);
  relay.counts.clear();

  const second = await collectRound(db, options(T0 + 60));
  t.same([second.resumed, second.interrupted], [true, false]);
  t.same(
    [second.forward!.resumedAnswers, second.forward!.asked, second.forward!.answers],
    [kept, 36 - kept, 36],
  );
  for (const [name, aaaa] of stored) {
    t.equal(
      relay.counts.get(`${name}/${aaaa === 1 ? 'AAAA' : 'A'}`),
      undefined,
      `${name} ${aaaa} not asked again`,
    );
  }
  t.ok(askedBefore.size > 0);
  t.equal(db.prepare(`SELECT count(*) FROM dns_state`).pluck().get(), 36);
  t.equal(db.prepare(`SELECT count(*) FROM collect_batch`).pluck().get(), 0);
  // Answers of the first run keep their time.
  const times = db.prepare(`SELECT DISTINCT last_observed FROM dns_state ORDER BY 1`).pluck().all();
  t.same(times, kept === 36 ? [T0] : [T0, T0 + 60]);
  t.same(
    db.prepare(`SELECT min_observed, max_observed FROM dns_round`).raw().all(),
    [[T0, kept === 36 ? T0 : T0 + 60]],
    "the forward phase's save: one dns_round row",
  );
});
