/**
 * The feed quality gate (builder/drop-gate.ts) on the committed real excerpts of
 * test/fixtures/feeds: copies truncated to half their bytes, emptied, and without their largest
 * range (made here, test/helpers/feed-variants.ts) are not taken by the importer, `builder import`
 * or `builder fetch`: the previous snapshot stays, the command says so and exits 1, the metrics
 * count it; --accept-drop takes it. (The same on the full files of ../shared/data:
 * `make verify-gates`.) Needs a build: `npx tsc -p tsconfig.json`.
 */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { coverageOf } from '../../builder/coverage.js';
import { describeFile, importSnapshot } from '../../builder/importer.js';
import { getSource } from '../../builder/sources/index.js';
import type { AsnRangeRecord } from '../../builder/sources/types.js';
import type { StateDb } from '../../builder/state.js';
import Database from 'better-sqlite3';
import { loadSettings } from '../../shared/config.js';
import { builderMetric, ROOT, runBuilder, startMirror } from '../helpers/builder-cli.js';
import { truncatedHalf, withoutLargestRange } from '../helpers/feed-variants.js';
import { openTempState } from '../helpers/temp-state.js';

const FEEDS = path.join(ROOT, 'test/fixtures/feeds');
const read = (file: string) => fs.readFileSync(path.join(FEEDS, file));
const iptoasn = getSource('iptoasn')!;
const V4 = read('iptoasn/ip2asn-v4.tsv');
const V6 = read('iptoasn/ip2asn-v6.tsv');
const LIMITS = { rows: 0.2, addresses: 0.01 };
/** 2403:c880::/31, the largest routed row of the IPv6 excerpt (2^97 addresses). */
const V6_LARGEST = 1n << 97n;
const V6_ALL = 163_479_416_531_393_942_277_637_275_648n;

t.test('the addresses an excerpt covers: routed rows only, nested and repeated ones once', async (t) => {
  const records = (text: Buffer) => iptoasn.parse(text.toString('utf8'), 'x').records as AsnRangeRecord[];
  // 1.1.1.0/24, 8.8.4.0/24, 8.8.8.0/24 (768); three /21 (6,144); 35.206.128.0/18 and
  // 35.206.192.0/18 (32,768); 216.252.220.0/24 and 216.252.221.0-223.255 (1,024).
  t.strictSame(coverageOf('asn_mapping', records(V4)), { ipv4: 40_704, ipv6: 0n });
  // Only the 8 routed rows of 18 count: the "Not routed" ones (asn 0) are left out.
  t.equal(coverageOf('asn_mapping', records(V6)).ipv6, V6_ALL);
  const nested = ['1.0.0.0/8', '1.2.0.0/16', '1.0.0.0/8', '2001:db8::/32', '2001:db8:1::/48'].map(
    (prefix) => ({
      prefix,
      provider: 'x',
      category: 'cloud' as const,
      metadata: {},
    }),
  );
  t.strictSame(coverageOf('provider_ranges', nested), { ipv4: 2 ** 24, ipv6: 1n << 96n });
});

/** Imports the two files into the state as one snapshot of iptoasn, through the gate. */
function importIptoasn(db: StateDb, dir: string, v4: Buffer, v6: Buffer, accept = false) {
  fs.writeFileSync(path.join(dir, 'ip2asn-v4.tsv'), v4);
  fs.writeFileSync(path.join(dir, 'ip2asn-v6.tsv'), v6);
  const files = ['ip2asn-v4.tsv', 'ip2asn-v6.tsv'].map((f) => describeFile(path.join(dir, f), 1000));
  return importSnapshot(db, iptoasn, files, {
    origin: 'import',
    now: 1000,
    gate: { limits: LIMITS, accept },
  });
}

function stored(db: StateDb) {
  return {
    rows: db.prepare(`SELECT count(*) FROM asn_range WHERE source = 'iptoasn'`).pluck().get(),
    snapshot: db.prepare(`SELECT files, records FROM source_snapshot WHERE source = 'iptoasn'`).get(),
  };
}

t.test('the importer keeps the previous snapshot of a damaged copy; accepted, it takes it', async (t) => {
  const { dir, db } = openTempState(t, 'feed-gate-');
  const first = importIptoasn(db, dir, V4, V6);
  t.equal(first.written, 28);
  t.notOk('drop' in first, 'nothing to compare the first snapshot with');
  const before = stored(db);

  const v4Less = withoutLargestRange(iptoasn, V4.toString('utf8'), 4);
  t.equal(v4Less.removed, '35.206.128.0\t35.206.191.255\t19527\tUS\tGOOGLE-2 - Google LLC');
  const v6Less = withoutLargestRange(iptoasn, V6.toString('utf8'), 6);
  t.equal(
    v6Less.removed,
    '2403:c880::\t2403:c881:ffff:ffff:ffff:ffff:ffff:ffff\t7363\tUnknown\t-Reserved AS-',
  );
  const cases: Array<[string, Buffer, Buffer, Array<[string, number | bigint, number | bigint]>]> = [
    [
      'truncated to half its bytes',
      truncatedHalf(V4),
      truncatedHalf(V6),
      [
        ['rows', 28, 15],
        ['ipv4', 40_704, 4_864],
        ['ipv6', V6_ALL, 3_631_499_825_326_757_169_332_224n],
      ],
    ],
    [
      'emptied',
      Buffer.alloc(0),
      Buffer.alloc(0),
      [
        ['rows', 28, 0],
        ['ipv4', 40_704, 0],
        ['ipv6', V6_ALL, 0n],
      ],
    ],
    ['without its largest IPv4 range', Buffer.from(v4Less.text), V6, [['ipv4', 40_704, 24_320]]],
    ['without its largest IPv6 range', V4, Buffer.from(v6Less.text), [['ipv6', V6_ALL, V6_ALL - V6_LARGEST]]],
  ];
  for (const [name, v4, v6, drops] of cases) {
    const summary = importIptoasn(db, dir, v4, v6);
    t.equal(summary.written, 0, `${name}: nothing written`);
    t.equal(summary.drop?.accepted, false, name);
    t.strictSame(
      summary.drop?.drops.map((d) => [d.measure, d.before, d.after]),
      drops,
      `${name}: the measures over their limits`,
    );
    t.strictSame(stored(db), before, `${name}: the previous snapshot stays`);
  }
  const message = importIptoasn(db, dir, Buffer.from(v4Less.text), V6).drop?.message;
  t.equal(
    message,
    'the new snapshot drops too much: IPv4 addresses fall from 40,704 to 24,320 (-40.3%, more than the 1% ' +
      'FEED_MAX_ADDRESS_DROP allows). If the publisher really shrank the feed, take this snapshot with ' +
      '--accept-drop iptoasn',
  );

  const accepted = importIptoasn(db, dir, truncatedHalf(V4), truncatedHalf(V6), true);
  t.equal(accepted.drop?.accepted, true);
  t.equal(accepted.written, 15);
  t.equal(stored(db).rows, 15, 'the accepted snapshot replaced the previous one');
  const next = importIptoasn(db, dir, truncatedHalf(V4), truncatedHalf(V6));
  t.notOk('drop' in next, 'and is what the next snapshot is compared with');
});

t.test('a list that churns by nature is allowed its churn, not a truncation', async (t) => {
  const { dir, db } = openTempState(t, 'feed-gate-tor-');
  const tor = getSource('tor-bulk-exit')!;
  const list = read('tor-bulk-exit/torbulkexitlist').toString('utf8').trimEnd().split('\n');
  t.equal(list.length, 12);
  const file = path.join(dir, 'torbulkexitlist');
  const put = (lines: string[], now: number) => {
    fs.writeFileSync(file, `${lines.join('\n')}\n`);
    const gate = { limits: LIMITS, accept: false };
    return importSnapshot(db, tor, [describeFile(file, now)], { origin: 'import', now, gate });
  };
  put(list, 1000);
  t.notOk('drop' in put(list.slice(3), 2000), '3 of 12 exits gone (25%) is an ordinary day');
  put(list, 3000);
  t.equal(
    put(list.slice(0, 6), 4000).drop?.message,
    'the new snapshot drops too much: rows fall from 12 to 6 (-50%, more than the 30% allowed for ' +
      'tor-bulk-exit, a list that churns (FEED_MAX_ROW_DROP is 0.2)); IPv4 addresses fall from 12 to 6 ' +
      '(-50%, more than the 30% allowed for tor-bulk-exit, a list that churns (FEED_MAX_ADDRESS_DROP is ' +
      '0.01)). If the publisher really shrank the feed, take this snapshot with --accept-drop tor-bulk-exit',
  );
});

t.test('the settings: defaults, and FETCH_MAX_SHRINK read as FEED_MAX_ROW_DROP', async (t) => {
  const defaults = loadSettings({});
  t.strictSame(
    [
      defaults.FEED_MAX_ROW_DROP,
      defaults.FEED_MAX_ADDRESS_DROP,
      defaults.RELEASE_MAX_ROUTED_DROP,
      defaults.RELEASE_MAX_ANSWER_DROP,
    ],
    [0.2, 0.01, 0.05, 0.1],
  );
  t.equal(loadSettings({ FETCH_MAX_SHRINK: '0.5' }).FEED_MAX_ROW_DROP, 0.5);
  t.equal(loadSettings({ FETCH_MAX_SHRINK: '0.5', FEED_MAX_ROW_DROP: '0.3' }).FEED_MAX_ROW_DROP, 0.3);
  t.throws(() => loadSettings({ FETCH_MAX_SHRINK: '2' }), {
    message: 'setting FETCH_MAX_SHRINK (now FEED_MAX_ROW_DROP)="2": Too big: expected number to be <=1',
  });
});

/** The state's record of a feed's current snapshot: what a refused import must leave alone. */
function storedSnapshot(stateDir: string, feed: string): unknown {
  const db = new Database(path.join(stateDir, 'state.sqlite'), { readonly: true });
  try {
    return db.prepare(`SELECT files, records FROM source_snapshot WHERE source = ?`).get(feed);
  } finally {
    db.close();
  }
}

t.test('builder import: damaged copies keep the previous snapshot; --accept-drop takes one', async (t) => {
  const { dir, db } = openTempState(t, 'feed-gate-cli-');
  db.close();
  const stateDir = path.join(dir, 'state');
  const feed = getSource('ip-location-db')!;
  const v4 = read('ip-location-db/asn-ipv4.csv');
  const v6 = read('ip-location-db/asn-ipv6.csv');
  const put = (name: string, a: Buffer, b: Buffer, ...flags: string[]) => {
    const files = [path.join(dir, `${name}-v4.csv`), path.join(dir, `${name}-v6.csv`)];
    fs.writeFileSync(files[0]!, a);
    fs.writeFileSync(files[1]!, b);
    return runBuilder(['--state-dir', stateDir, 'import', 'ip-location-db', ...files, ...flags]);
  };
  const first = await put('full', v4, v6);
  t.equal(first.status, 0, first.stderr);
  t.match(first.stdout, /^ip-location-db: read 30, rejected 0, written 30 /);
  const before = storedSnapshot(stateDir, 'ip-location-db');

  const largest = withoutLargestRange(feed, v4.toString('utf8'), 4);
  t.equal(largest.removed, '1.0.128.0,1.0.196.255,23969,TOT Public Company Limited');
  const rows = (after: number) =>
    `rows fall from 30 to ${after} (-${(100 * (30 - after)) / 30}%, more than the 20% FEED_MAX_ROW_DROP allows)`;
  const addresses = (family: string, from: string, to: string, share: string) =>
    `IPv${family} addresses fall from ${from} to ${to} (-${share}, more than the 1% FEED_MAX_ADDRESS_DROP allows)`;
  const copies: Array<[string, Buffer, Buffer, string[]]> = [
    [
      'truncated',
      truncatedHalf(v4),
      truncatedHalf(v6),
      [rows(15), addresses('4', '73,216', '50,944', '30.4%'), addresses('6', '2^97.70', '2^97.00', '38.5%')],
    ],
    [
      'emptied',
      Buffer.alloc(0),
      Buffer.alloc(0),
      [rows(0), addresses('4', '73,216', '0', '100%'), addresses('6', '2^97.70', '0', '100%')],
    ],
    ['largest', Buffer.from(largest.text), v6, [addresses('4', '73,216', '55,552', '24.1%')]],
  ];
  for (const [name, a, b, parts] of copies) {
    const refused = await put(name, a, b);
    t.equal(refused.status, 1, `${name}: exit 1`);
    t.equal(
      refused.stdout,
      `ip-location-db: KEPT PREVIOUS SNAPSHOT: nothing imported: the new snapshot drops too much: ${parts.join('; ')}. ` +
        'If the publisher really shrank the feed, take this snapshot with --accept-drop ip-location-db\n',
      name,
    );
    t.strictSame(storedSnapshot(stateDir, 'ip-location-db'), before, `${name}: the previous snapshot stays`);
  }

  const wrong = await put('truncated', truncatedHalf(v4), truncatedHalf(v6), '--accept-drop', 'iptoasn');
  t.equal(wrong.status, 2);
  t.equal(
    wrong.stderr,
    'builder: --accept-drop iptoasn: not a feed of this command (ip-location-db); name the feed whose drop you accept\n',
  );
  const taken = await put(
    'truncated',
    truncatedHalf(v4),
    truncatedHalf(v6),
    '--accept-drop',
    'ip-location-db',
  );
  t.equal(taken.status, 0, taken.stderr);
  const [takenLine, summaryLine] = taken.stdout.split('\n');
  t.equal(
    takenLine,
    `ip-location-db: taking the new snapshot all the same (--accept-drop): ${copies[0]![3].join('; ')}`,
  );
  t.match(summaryLine, /^ip-location-db: read 16, rejected 1, written 15 \(\d+\.\d s\)$/);
  t.not(storedSnapshot(stateDir, 'ip-location-db'), before);

  const drops = (measure: string, outcome: string) =>
    builderMetric(stateDir, 'ipscope_builder_feed_drops_total', { feed: 'ip-location-db', measure, outcome });
  t.strictSame(
    [drops('rows', 'refused'), drops('ipv4', 'refused'), drops('ipv6', 'refused'), drops('rows', 'accepted')],
    [2, 3, 2, 1],
  );
});

t.test('builder fetch: damaged downloads keep the previous snapshot; --accept-drop takes one', async (t) => {
  const { dir, db } = openTempState(t, 'feed-gate-fetch-');
  db.close();
  const stateDir = path.join(dir, 'state');
  const mirror = await startMirror(t);
  const v4 = read('cloudflare/ips-v4.txt');
  const v6 = read('cloudflare/ips-v6.txt');
  const serve = (a: Buffer | string, b: Buffer | string) => {
    mirror.serve('www.cloudflare.com/ips-v4', a);
    mirror.serve('www.cloudflare.com/ips-v6', b);
  };
  const env = { FEED_MIRROR: mirror.url, FETCH_RETRIES: '0' };
  const fetch = (...flags: string[]) =>
    runBuilder(['--state-dir', stateDir, 'fetch', 'cloudflare', ...flags], env);
  serve(v4, v6);
  const first = await fetch();
  t.equal(first.status, 0, first.stderr);
  const manifest = path.join(stateDir, 'snapshots/cloudflare/current.json');
  const before = fs.readFileSync(manifest, 'utf8');
  t.strictSame(JSON.parse(before).coverage, { ipv4: 1_524_736, ipv6: '1109194275199700726309615304704' });

  const largest = withoutLargestRange(getSource('cloudflare')!, v4.toString('utf8'), 4);
  t.equal(largest.removed, '104.16.0.0/13');
  const addresses = (family: string, from: string, to: string, share: string) =>
    `IPv${family} addresses fall from ${from} to ${to} (-${share}, more than the 1% FEED_MAX_ADDRESS_DROP allows)`;
  const copies: Array<[string, Buffer | string, Buffer | string, string[]]> = [
    [
      'truncated',
      truncatedHalf(v4),
      truncatedHalf(v6),
      [
        'rows fall from 22 to 10 (-54.5%, more than the 20% FEED_MAX_ROW_DROP allows)',
        addresses('4', '1,524,736', '44,032', '97.1%'),
        addresses('6', '2^99.81', '2^97.58', '78.6%'),
      ],
    ],
    [
      'emptied',
      '',
      '',
      [
        'rows fall from 22 to 0 (-100%, more than the 20% FEED_MAX_ROW_DROP allows)',
        addresses('4', '1,524,736', '0', '100%'),
        addresses('6', '2^99.81', '0', '100%'),
      ],
    ],
    ['largest', largest.text, v6, [addresses('4', '1,524,736', '1,000,448', '34.4%')]],
  ];
  for (const [name, a, b, parts] of copies) {
    serve(a, b);
    const refused = await fetch();
    t.equal(refused.status, 1, `${name}: exit 1`);
    const kept =
      /^cloudflare: KEPT PREVIOUS SNAPSHOT: cloudflare: kept previous snapshot \(\S+\): (.*)\n$/.exec(
        refused.stdout,
      );
    t.equal(
      kept?.[1],
      `the new snapshot drops too much: ${parts.join('; ')}. ` +
        'If the publisher really shrank the feed, take this snapshot with --accept-drop cloudflare',
      name,
    );
    t.equal(fs.readFileSync(manifest, 'utf8'), before, `${name}: the previous snapshot stays`);
  }
  const taken = await fetch('--accept-drop', 'cloudflare');
  t.equal(taken.status, 0, taken.stderr);
  t.match(
    taken.stderr,
    `cloudflare: taking the new snapshot all the same (--accept-drop): ${copies[2]![3][0]}\ncloudflare: updated, 21 records\n`,
  );
  t.match(taken.stdout, /^cloudflare: read 21, rejected 0, written 21, no longer listed 1 /m);
  t.equal(JSON.parse(fs.readFileSync(manifest, 'utf8')).records, 21);

  const metric = (name: string, labels: Record<string, string>) => builderMetric(stateDir, name, labels);
  t.equal(metric('ipscope_builder_feed_fetches_total', { feed: 'cloudflare', status: 'kept_previous' }), 3);
  const drops = (measure: string, outcome: string) =>
    metric('ipscope_builder_feed_drops_total', { feed: 'cloudflare', measure, outcome });
  t.strictSame(
    [drops('rows', 'refused'), drops('ipv4', 'refused'), drops('ipv6', 'refused'), drops('ipv4', 'accepted')],
    [2, 3, 2, 1],
  );
});
