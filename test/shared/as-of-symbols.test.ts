/** The symbolic times of the versioned tables (shared/as-of-symbols.ts): encode, decode, round trip. */
import t from 'tap';
import {
  decodeIpSummary,
  decodeLastSeen,
  decodeProviderRange,
  decodePtr,
  decodeRoundTime,
  decodeRuns,
  decodeStates,
  encodeIpSummary,
  encodeLastSeen,
  encodeProviderRange,
  encodePtr,
  encodeRoundTime,
  encodeRuns,
  encodeStates,
  readEpoch,
  ROUND,
  roundTimeSql,
  SOURCE_DATE,
  validAt,
  type EpochTimes,
} from '../../shared/as-of-symbols.js';
import Database from 'better-sqlite3';

const epoch: EpochTimes = { roundFrom: 1000, roundTo: 1900, sourceDates: { aws: 500 } };
const noRound: EpochTimes = { roundFrom: null, roundTo: null, sourceDates: {} };

t.test('round times: inside the window ROUND, read back as round_to; outside as they are', async (t) => {
  t.equal(encodeRoundTime(1000, epoch), ROUND);
  t.equal(encodeRoundTime(1900, epoch), ROUND);
  t.equal(encodeRoundTime(999, epoch), 999);
  t.equal(encodeRoundTime(1901, epoch), 1901);
  t.equal(encodeRoundTime(null, epoch), null);
  t.equal(encodeRoundTime(1500, noRound), 1500, 'no round: nothing is ROUND');
  t.equal(decodeRoundTime(ROUND, epoch), 1900);
  t.equal(decodeRoundTime(999, epoch), 999);
  t.equal(decodeRoundTime(null, epoch), null);
  t.throws(() => decodeRoundTime(ROUND, noRound), /without a DNS round/);
  const db = new Database(':memory:');
  t.teardown(() => db.close());
  for (const v of [999, 1000, 1500, 1900, 1901, null]) {
    const sql = db
      .prepare(`SELECT ${roundTimeSql('x', '1000', '1900')} FROM (SELECT ? AS x)`)
      .pluck()
      .get(v);
    t.equal(sql, encodeRoundTime(v, epoch), `roundTimeSql agrees for ${v}`);
  }
});

t.test("last_seen: its source's date SOURCE_DATE, read back exactly", async (t) => {
  t.equal(encodeLastSeen(500, 'aws', epoch), SOURCE_DATE);
  t.equal(encodeLastSeen(499, 'aws', epoch), 499);
  t.equal(encodeLastSeen(500, 'azure', epoch), 500, 'another source');
  t.equal(decodeLastSeen(SOURCE_DATE, 'aws', epoch), 500);
  t.equal(decodeLastSeen(499, 'aws', epoch), 499);
  t.throws(() => decodeLastSeen(SOURCE_DATE, 'azure', epoch), /no date of/);
  const row = { prefix: '1.2.3.0/24', last_seen: 500, source: 'aws' };
  t.same(encodeProviderRange(row, epoch), { ...row, last_seen: SOURCE_DATE });
  t.same(decodeProviderRange(encodeProviderRange(row, epoch), epoch), row, 'round trip, exact');
});

t.test('states: the three times of each entry', async (t) => {
  const states = JSON.stringify([
    ['A', 'positive', ['192.0.2.1'], ['edge-1.example'], 1800, 1800, 1800],
    ['AAAA', 'nodata', [], [], 1850, 1850, null],
    ['A', 'timeout', [], [], 900, null, 800],
  ]);
  const encoded = encodeStates(states, epoch);
  t.same(JSON.parse(encoded), [
    ['A', 'positive', ['192.0.2.1'], ['edge-1.example'], ROUND, ROUND, ROUND],
    ['AAAA', 'nodata', [], [], ROUND, ROUND, null],
    ['A', 'timeout', [], [], 900, null, 800],
  ]);
  t.same(JSON.parse(decodeStates(encoded, epoch)), [
    ['A', 'positive', ['192.0.2.1'], ['edge-1.example'], 1900, 1900, 1900],
    ['AAAA', 'nodata', [], [], 1900, 1900, null],
    ['A', 'timeout', [], [], 900, null, 800],
  ]);
  t.equal(encodeStates(states, noRound), states, 'no round: the text as it is');
  const outside = JSON.stringify([['A', 'positive', ['192.0.2.1'], [], 1900, 1900, 1900]]);
  t.equal(decodeStates(encodeStates(outside, epoch), epoch), outside, 'round_to itself: exact');
});

t.test("runs: a current run's last_confirmed only", async (t) => {
  const runs = JSON.stringify([
    [1, 13335, 'Cloudflare', 'cdn', 2, 3, 100, 1200, null],
    [1, 16509, 'AWS', 'cloud', 1, 1, 100, 1100, 1200],
  ]);
  const encoded = encodeRuns(runs, epoch);
  t.same(JSON.parse(encoded), [
    [1, 13335, 'Cloudflare', 'cdn', 2, 3, 100, ROUND, null],
    [1, 16509, 'AWS', 'cloud', 1, 1, 100, 1100, 1200],
  ]);
  t.same(JSON.parse(decodeRuns(encoded, epoch)), [
    [1, 13335, 'Cloudflare', 'cdn', 2, 3, 100, 1900, null],
    [1, 16509, 'AWS', 'cloud', 1, 1, 100, 1100, 1200],
  ]);
  t.equal(decodeRuns(runs, epoch), runs);
});

t.test('ptr and ip_summary rows', async (t) => {
  const ptr = { value: '192.0.2.1', checked_at: 1500, last_confirmed: 1200 };
  t.same(encodePtr(ptr, epoch), { ...ptr, checked_at: ROUND, last_confirmed: ROUND });
  t.same(decodePtr(encodePtr(ptr, epoch), epoch), { ...ptr, checked_at: 1900, last_confirmed: 1900 });
  t.same(encodePtr({ ...ptr, last_confirmed: null }, epoch), {
    ...ptr,
    checked_at: ROUND,
    last_confirmed: null,
  });
  const summary = { value: '192.0.2.1', current_count: 2, first_observed: 1100, last_confirmed: 1500 };
  t.same(encodeIpSummary(summary, epoch), { ...summary, last_confirmed: ROUND }, 'first_observed as it is');
  t.same(
    encodeIpSummary({ ...summary, current_count: 0 }, epoch),
    { ...summary, current_count: 0 },
    'no current answer: as it is',
  );
  t.same(decodeIpSummary(encodeIpSummary(summary, epoch), epoch), { ...summary, last_confirmed: 1900 });
});

t.test('epoch rows and validity', async (t) => {
  t.same(
    readEpoch({
      epoch: 2,
      release_id: '20261010T000000Z',
      built_at: 1791590400,
      dns_cut: 1900,
      round_from: 1000,
      round_to: 1900,
      coverage: '{"vantage_count":1}',
      attribution: '[]',
      source_dates: '{"aws":500}',
    }),
    {
      epoch: 2,
      releaseId: '20261010T000000Z',
      builtAt: 1791590400,
      dnsCut: 1900,
      roundFrom: 1000,
      roundTo: 1900,
      coverage: { vantage_count: 1 },
      attribution: [],
      sourceDates: { aws: 500 },
    },
  );
  t.ok(validAt({ e_from: 2, e_to: null }, 2));
  t.ok(validAt({ e_from: 2, e_to: 4 }, 3));
  t.notOk(validAt({ e_from: 2, e_to: 4 }, 4), 'e_to: the first epoch no longer holding it');
  t.notOk(validAt({ e_from: 2, e_to: null }, 1));
});
