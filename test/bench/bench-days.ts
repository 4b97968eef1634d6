/**
 * bench-build's simulated days (`--days 30,90,365`, issue 33): day 1 imports every supported file
 * of ../shared/data and the seed at its own moment, then every day (one release a day, six hours
 * into it) takes the day's churned feeds (feed-churn.ts: the rates and their justification) and
 * the day's generated DNS round, and builds a release at the day's moment (decision 0033: each
 * release is an epoch of the history the newest file carries). At each day asked for, prints the
 * release file size, the release build's wall time and peak RSS, and the peak RSS of every step
 * so far. The days end yesterday, so every moment of the history is in the past (as_of can ask it).
 * With `--release-every N`, a release every N days (and on the days reported): the feeds churn and
 * a round is generated every day all the same, and a release day imports that day's snapshots and
 * every round since the last release, so a year fits in an afternoon.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { generateObservations } from './generate-observations.js';
import { churnAsNames, churnAws, churnGoogleCloud, churnMapping, readText, TorExits } from './feed-churn.js';
import { Mulberry32 } from './observation-generator/prng.js';

const DAY = 86_400;

export interface DaysOptions {
  root: string;
  shared: string;
  dir: string;
  domains: number;
  /** The days to report at (the last is the length of the simulation). */
  days: number[];
  /** Rounds generated at once (their files are deleted once imported). */
  batch?: number;
  /**
   * A release every this many days (default 1: a release a day), and on day 1 and every day
   * reported. Between releases the feeds still churn every day and every day's round is kept;
   * they are imported on the release day (the day's feed snapshots, the rounds since the last
   * release, in order), so each release holds what a daily import would have given it.
   */
  releaseEvery?: number;
  verbose?: boolean;
}

interface Step {
  seconds: number;
  maxRssMb: number;
}

export async function simulateDays(options: DaysOptions): Promise<void> {
  const { root, shared, dir, domains } = options;
  const days = [...options.days].sort((a, b) => a - b);
  const last = days.at(-1)!;
  const batchSize = options.batch ?? 5;
  const releaseEvery = options.releaseEvery ?? 1;
  if (!Number.isInteger(releaseEvery) || releaseEvery < 1)
    throw new Error(`release every ${releaseEvery} days: a whole number of at least 1`);
  const releaseOn = (day: number) => day === 1 || day % releaseEvery === 0 || days.includes(day);
  const script = path.join(root, 'dist/test/bench/dated-batch.js');
  const stateDir = path.join(dir, 'state');
  const releasesDir = path.join(dir, 'releases');
  const obsDir = path.join(dir, `days-observations-${domains}`);
  const feedDir = path.join(dir, 'days-feeds');
  for (const d of [stateDir, releasesDir, obsDir, feedDir]) fs.rmSync(d, { recursive: true, force: true });
  for (const d of [obsDir, feedDir]) fs.mkdirSync(d, { recursive: true });
  // Day 1 at 00:00 UTC `last` days ago: the last release (six hours into its day) is in the past.
  const start = (Math.floor(Date.now() / 1000 / DAY) - last) * DAY;
  const run = (now: number, args: string[]): Step => {
    const started = performance.now();
    const r = spawnSync(
      process.execPath,
      [script, '--state-dir', stateDir, '--releases-dir', releasesDir, '--now', String(now), ...args],
      {
        encoding: 'utf8',
        env: { ...process.env, BUILDER_REPORT_RUSAGE: '1', ASN_MAPPING: 'ip-location-db,iptoasn' },
        maxBuffer: 64 << 20,
      },
    );
    const seconds = (performance.now() - started) / 1000;
    if (r.status !== 0)
      throw new Error(`dated-batch ${args.slice(0, 3).join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
    if (options.verbose) process.stdout.write(r.stdout);
    const rejected = [...r.stdout.matchAll(/rejected (\d+),/g)].reduce((n, m) => n + Number(m[1]), 0);
    if (rejected > 0) throw new Error(`${rejected} rejected rows:\n${r.stdout}`);
    const rss = /rusage: maxrss_kb=(\d+)/.exec(r.stderr);
    return { seconds, maxRssMb: rss ? Number(rss[1]) / 1024 : NaN };
  };

  // The files churned day by day, as read from ../shared/data.
  const rng = new Mulberry32();
  rng.reseed(33);
  const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
  const mapping = {
    v4: lines(readText(path.join(shared, 'ip-location-db-asn/asn-ipv4.csv.gz'))),
    v6: lines(readText(path.join(shared, 'ip-location-db-asn/asn-ipv6.csv.gz'))),
  };
  const aws = JSON.parse(readText(path.join(shared, 'aws/ip-ranges.json.gz'))) as Record<string, unknown>;
  const gcp = JSON.parse(readText(path.join(shared, 'google-cloud/cloud.json'))) as Record<string, unknown>;
  const asNames = lines(readText(path.join(shared, 'asn2org/asns.csv.gz')));
  const tor = new TorExits(
    readText(path.join(shared, 'tor/exit-addresses.txt')),
    readText(path.join(shared, 'tor/torbulkexitlist.txt')),
  );
  const imports = fs
    .readFileSync(path.join(root, 'test/bench/shared-data-imports.txt'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => l.trim().split(/\s+/));

  let peak = 0;
  let total = 0;
  let generated = 0;
  let releases = 0;
  /** Round files of the days since the last release (imported on the next release day). */
  let pending: string[] = [];
  console.log(
    `simulated days: ${last} days at ${domains} domains from ${new Date(start * 1000).toISOString()}, ` +
      (releaseEvery === 1
        ? 'a release a day'
        : `a release every ${releaseEvery} days and on the days reported`),
  );
  console.log(
    '| Day | Releases | Release file MB | Release s | Release peak RSS MB | Imports s since last release | Builder s so far | Peak RSS so far MB |',
  );
  console.log('|---|---|---|---|---|---|---|---|');
  for (let day = 1; day <= last; day++) {
    const at = start + (day - 1) * DAY;
    if (day > generated) {
      const to = Math.min(last, day + batchSize - 1);
      for (const f of fs.readdirSync(obsDir))
        if (!pending.includes(path.join(obsDir, f))) fs.rmSync(path.join(obsDir, f));
      await generateObservations({
        domains,
        rounds: to,
        fromRound: day,
        outDir: obsDir,
        seed: 42,
        start: new Date(start * 1000).toISOString(),
        feedDirs: [path.join(root, 'test/fixtures/feeds'), shared],
      });
      generated = to;
    }
    const releasing = releaseOn(day);
    const today = path.join(feedDir, `day-${day}`);
    for (const f of fs.readdirSync(feedDir))
      fs.rmSync(path.join(feedDir, f), { recursive: true, force: true });
    fs.mkdirSync(today, { recursive: true });
    // The day's snapshots are churned every day (the same sequence whatever the cadence); only a
    // release day's are written and imported.
    const write = (name: string, text: string) => {
      if (!releasing) return '';
      fs.writeFileSync(path.join(today, name), text);
      return path.join(today, name);
    };
    const args: string[] = [];
    if (day === 1) {
      for (const [kind, ...files] of imports) {
        if (kind === 'tor-exit-addresses') continue; // the day's own list below
        args.push('--', 'import', kind!, ...files.map((f) => path.join(shared, f)));
      }
      args.push('--', 'import', 'tranco', path.join(obsDir, 'seed.csv'));
    } else {
      churnMapping(mapping.v4, rng);
      churnMapping(mapping.v6, rng);
      churnAsNames(asNames, rng);
      const v4 = releasing ? write('asn-ipv4.csv', `${mapping.v4.join('\n')}\n`) : '';
      const v6 = releasing ? write('asn-ipv6.csv', `${mapping.v6.join('\n')}\n`) : '';
      args.push('--', 'import', 'ip-location-db', v4, v6);
      args.push('--', 'import', 'aws', write('ip-ranges.json', churnAws(aws, at + 3600, rng)));
      args.push('--', 'import', 'google-cloud', write('cloud.json', churnGoogleCloud(gcp, at + 3600, rng)));
      args.push('--', 'import', 'asn2org', write('asns.csv', `${asNames.join('\n')}\n`));
    }
    args.push('--', 'import', 'tor-exit-addresses', write('exit-addresses', tor.day(at + 4 * 3600, rng)));
    pending.push(path.join(obsDir, `round-${day}.ndjson`));
    if (!releasing) continue;
    args.push('--', 'observations', ...pending);
    // Imports five hours into the day (after the round, which starts at 00:00 and lasts 4 hours).
    const imported = run(at + 5 * 3600, args);
    const release = run(at + 6 * 3600, ['--', 'release']);
    releases += 1;
    for (const f of pending) fs.rmSync(f);
    pending = [];
    peak = Math.max(peak, imported.maxRssMb, release.maxRssMb);
    total += imported.seconds + release.seconds;
    if (days.includes(day)) {
      const current = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim();
      const size = fs.statSync(path.join(releasesDir, current)).size / 1048576;
      console.log(
        `| ${day} | ${releases} | ${size.toFixed(1)} | ${release.seconds.toFixed(1)} | ${release.maxRssMb.toFixed(0)} | ${imported.seconds.toFixed(1)} | ${total.toFixed(0)} | ${peak.toFixed(0)} |`,
      );
    }
    // Only the newest release is needed (it carries the history): older files go.
    for (const f of fs.readdirSync(releasesDir)) {
      const current = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim();
      if (f.endsWith('.sqlite') && f !== current) fs.rmSync(path.join(releasesDir, f));
    }
  }
  console.log(
    `${last} days, ${releases} releases, in ${total.toFixed(0)} s of builder time (generation not counted)`,
  );
}
