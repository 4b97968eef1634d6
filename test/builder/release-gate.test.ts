/**
 * The release quality gate (builder/release/release-gate.ts) through `builder release` and
 * `builder run`: a release whose mapping covers much less routed space, or with far fewer current
 * DNS answers, than the current release is not published (exit 1, the built file removed, CURRENT
 * untouched, the metrics count it) unless forced. Needs a build: `npx tsc -p tsconfig.json`.
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import zlib from 'node:zlib';
import { builderMetric, ROOT, runBuilder, startMirror } from '../helpers/builder-cli.js';
import { truncatedHalf } from '../helpers/feed-variants.js';

const DEMO = path.join(ROOT, 'demo/data');
const FEEDS = path.join(ROOT, 'test/fixtures/feeds');

function workDir(t: { teardown(fn: () => unknown): void }): { dir: string; state: string; releases: string } {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'release-gate-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return { dir, state: path.join(dir, 'state'), releases: path.join(dir, 'releases') };
}

const current = (releases: string) => fs.readFileSync(path.join(releases, 'CURRENT'), 'utf8').trim();
const files = (releases: string) =>
  fs
    .readdirSync(releases)
    .filter((f) => !f.startsWith('.lock'))
    .sort();

t.test('builder release: refused on a routed-space or answers drop, published with --force', async (t) => {
  const { dir, state, releases } = workDir(t);
  const builder = (...args: string[]) =>
    runBuilder(['--state-dir', state, '--releases-dir', releases, ...args]);
  const v4 = fs.readFileSync(path.join(DEMO, 'asn/asn-ipv4.csv'));
  const v6 = path.join(DEMO, 'asn/asn-ipv6.csv');
  for (const args of [
    ['import', 'ip-location-db', path.join(DEMO, 'asn/asn-ipv4.csv'), v6],
    ['import', 'tranco', path.join(DEMO, 'seed.csv')],
    ['import', 'observations', path.join(DEMO, 'observations/round-1.ndjson')],
  ]) {
    const r = await builder(...args);
    t.equal(r.status, 0, r.stderr);
  }
  const first = await builder('release');
  t.equal(first.status, 0, first.stderr);
  t.notMatch(first.stdout, 'quality gate', 'the first release has nothing to be compared with');
  const published = current(releases);
  const previous = published.replace('.sqlite', '');

  // A truncated mapping, accepted at the feed's gate: the release gate still stops it.
  fs.writeFileSync(path.join(dir, 'asn-ipv4.csv'), truncatedHalf(v4));
  const accepted = await builder(
    'import',
    'ip-location-db',
    path.join(dir, 'asn-ipv4.csv'),
    v6,
    '--accept-drops',
  );
  t.equal(accepted.status, 0, accepted.stderr);
  const before = files(releases);
  const refused = await builder('release');
  t.equal(refused.status, 1);
  const id = /^building release (\S+)$/m.exec(refused.stdout)?.[1];
  t.match(
    refused.stdout,
    `  quality gate against ${previous}: routed IPv4 addresses 8,537,088 -> 7,672,576 (-10.1%), ` +
      'routed IPv6 addresses 2^102.85 -> 2^102.85, current DNS answers 103 -> 103\n',
  );
  t.equal(
    refused.stderr,
    `RELEASE NOT PUBLISHED: release ${id} not published: against the current release ${previous}, ` +
      'routed IPv4 addresses fall from 8,537,088 to 7,672,576 (-10.1%, more than the 5% RELEASE_MAX_ROUTED_DROP allows). ' +
      `CURRENT still names ${previous}. Check the feeds and the last collect round; if the fall is real, ` +
      'publish with "builder release --force" (or "builder run --force-release")\n',
  );
  t.equal(current(releases), published, 'CURRENT untouched');
  t.strictSame(files(releases), before, 'the refused release was removed, nothing left behind');

  const forced = await builder('release', '--force');
  t.equal(forced.status, 0, forced.stderr);
  t.match(
    forced.stdout,
    '  publishing all the same (--force): routed IPv4 addresses fall from 8,537,088 to 7,672,576 ' +
      '(-10.1%, more than the 5% RELEASE_MAX_ROUTED_DROP allows)\n',
  );
  t.not(current(releases), published, 'CURRENT names the forced release');

  // Every resolved name answers NXDOMAIN a day later: its addresses are no longer current.
  const round = fs
    .readFileSync(path.join(DEMO, 'observations/round-1.ndjson'), 'utf8')
    .trimEnd()
    .split('\n')
    .map((line) => {
      const o = JSON.parse(line) as { name: string; type: string };
      const gone = { ...o, time: '2026-10-02T00:00:00Z', outcome: 'nxdomain', values: [], cnames: [] };
      return JSON.stringify(gone);
    });
  fs.writeFileSync(path.join(dir, 'gone.ndjson'), `${round.join('\n')}\n`);
  t.equal((await builder('import', 'observations', path.join(dir, 'gone.ndjson'))).status, 0);
  const noAnswers = await builder('release');
  t.equal(noAnswers.status, 1);
  t.match(
    noAnswers.stderr,
    'current DNS answers fall from 103 to 0 (-100%, more than the 10% RELEASE_MAX_ANSWER_DROP allows)',
  );
  t.equal((await builder('release', '--force')).status, 0);

  const drops = (measure: string, outcome: string) =>
    builderMetric(state, 'ipscope_builder_release_drops_total', { measure, outcome });
  t.strictSame(
    [drops('routed_ipv4', 'refused'), drops('routed_ipv4', 'forced'), drops('current_answers', 'refused')],
    [1, 1, 1],
  );
  t.equal(builderMetric(state, 'ipscope_builder_runs_total', { command: 'release', result: 'failed' }), 2);
});

t.test('builder run: a refused feed keeps its snapshot; a refused release keeps CURRENT', async (t) => {
  const { state, releases } = workDir(t);
  const mirror = await startMirror(t);
  const v4 = fs.readFileSync(path.join(FEEDS, 'iptoasn/ip2asn-v4.tsv'));
  const v6 = fs.readFileSync(path.join(FEEDS, 'iptoasn/ip2asn-v6.tsv'));
  const serve = (a: Buffer, b: Buffer) => {
    mirror.serve('iptoasn.com/data/ip2asn-v4.tsv.gz', zlib.gzipSync(a));
    mirror.serve('iptoasn.com/data/ip2asn-v6.tsv.gz', zlib.gzipSync(b));
  };
  // Every other feed answers 404 (no previous snapshot: kept, run exits 1); the resolver is a
  // closed port (every query times out, which ends no answer).
  const env = {
    FEED_MIRROR: mirror.url,
    FETCH_RETRIES: '0',
    RESOLVER: '127.0.0.1:9',
    DNS_TIMEOUT_MS: '50',
    DNS_RETRIES: '0',
    PTR_SHARE: '0',
  };
  const run = (...flags: string[]) =>
    runBuilder(['--state-dir', state, '--releases-dir', releases, 'run', ...flags], env);
  const seed = await runBuilder(['--state-dir', state, 'import', 'tranco', path.join(DEMO, 'seed.csv')]);
  t.equal(seed.status, 0, seed.stderr);
  serve(v4, v6);
  const first = await run();
  t.equal(first.status, 1, 'the feeds without a mirror copy failed');
  t.match(first.stdout, /^iptoasn: read 28, rejected 0, written 28 /m);
  const published = current(releases);

  serve(truncatedHalf(v4), truncatedHalf(v6));
  const kept = await run();
  t.match(
    kept.stdout,
    /^iptoasn: KEPT PREVIOUS SNAPSHOT: iptoasn: kept previous snapshot \(\S+\): the new snapshot drops too much: rows fall from 28 to 15 /m,
  );
  t.not(current(releases), published, 'the release is built on the previous snapshot and published');
  const second = current(releases);

  const refused = await run('--accept-drop', 'iptoasn');
  t.equal(refused.status, 1);
  t.match(
    refused.stderr,
    /^iptoasn: taking the new snapshot all the same \(--accept-drop\): rows fall from 28 to 15 /m,
  );
  t.match(
    refused.stderr,
    /^RELEASE NOT PUBLISHED: release \S+ not published: against the current release \S+, routed IPv4 addresses fall from 40,704 to 4,864 /m,
  );
  t.equal(current(releases), second, 'CURRENT untouched');

  const forced = await run('--force-release');
  t.match(forced.stdout, 'iptoasn: not modified');
  t.match(
    forced.stdout,
    '  publishing all the same (--force): routed IPv4 addresses fall from 40,704 to 4,864 ',
  );
  t.not(current(releases), second, 'the forced release is published');
  t.equal(
    builderMetric(state, 'ipscope_builder_feed_drops_total', {
      feed: 'iptoasn',
      measure: 'rows',
      outcome: 'refused',
    }),
    1,
  );
});
