/**
 * The release pair of bench-watch (issue 34): the full-scale release of `make bench-build` (the
 * older one) and the next one built from a copy of its builder state, a day later as
 * bench-build's simulated days make one (bench-days.ts): the mapping and both cloud lists churned
 * by one day's rates (feed-churn.ts) and the next generated DNS round (the domains' answers evolve
 * from round 1, so round 4 follows rounds 1-3 of the state), imported by dated-batch.js at the
 * moment of the run, then `release`. The source directory is only read: its state is copied.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { churnAws, churnGoogleCloud, churnMapping, readText } from './feed-churn.js';
import { generateObservations } from './generate-observations.js';
import { Mulberry32 } from './observation-generator/prng.js';

export interface PairOptions {
  root: string;
  /** A bench-build directory (state/, releases/): read, never written. */
  from: string;
  /** This bench's own directory: the copied state, both releases, the new round. */
  dir: string;
  shared: string;
  /** The --domains and --rounds the source was built with. */
  domains: number;
  rounds: number;
  seed: number;
}

export interface ReleasePair {
  releasesDir: string;
  older: string;
  newer: string;
}

const currentId = (releasesDir: string) =>
  fs
    .readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8')
    .trim()
    .replace(/\.sqlite$/, '');

function dated(root: string, stateDir: string, releasesDir: string, args: string[]): number {
  const started = performance.now();
  const r = spawnSync(
    process.execPath,
    [
      path.join(root, 'dist/test/bench/dated-batch.js'),
      ...['--state-dir', stateDir, '--releases-dir', releasesDir],
      ...['--now', String(Math.floor(Date.now() / 1000)), ...args],
    ],
    {
      encoding: 'utf8',
      env: { ...process.env, BUILDER_REPORT_RUSAGE: '1', ASN_MAPPING: 'ip-location-db,iptoasn' },
      maxBuffer: 64 << 20,
    },
  );
  if (r.status !== 0)
    throw new Error(`dated-batch ${args.slice(0, 3).join(' ')} failed:\n${r.stdout}\n${r.stderr}`);
  const rejected = [...r.stdout.matchAll(/rejected (\d+),/g)].reduce((n, m) => n + Number(m[1]), 0);
  if (rejected > 0) throw new Error(`${rejected} rejected rows:\n${r.stdout}`);
  return (performance.now() - started) / 1000;
}

/** The pair in `dir` (built when `dir` has no newer release yet); logs what it does on stderr. */
export async function releasePair(options: PairOptions): Promise<ReleasePair> {
  const { root, from, dir, shared } = options;
  const releasesDir = path.join(dir, 'releases');
  const pairFile = path.join(dir, 'pair.json');
  if (fs.existsSync(pairFile)) return JSON.parse(fs.readFileSync(pairFile, 'utf8')) as ReleasePair;
  const stateDir = path.join(dir, 'state');
  const older = currentId(path.join(from, 'releases'));
  fs.rmSync(stateDir, { recursive: true, force: true });
  fs.rmSync(releasesDir, { recursive: true, force: true });
  fs.mkdirSync(releasesDir, { recursive: true });
  const log = (line: string) => console.error(line);
  let started = performance.now();
  fs.cpSync(path.join(from, 'state'), stateDir, { recursive: true });
  fs.copyFileSync(path.join(from, 'releases', `${older}.sqlite`), path.join(releasesDir, `${older}.sqlite`));
  fs.copyFileSync(path.join(from, 'releases', 'CURRENT'), path.join(releasesDir, 'CURRENT'));
  log(
    `copied the state and release ${older} of ${from} in ${((performance.now() - started) / 1000).toFixed(1)} s`,
  );

  const round = options.rounds + 1;
  const obsDir = path.join(dir, 'observations');
  started = performance.now();
  await generateObservations({
    domains: options.domains,
    rounds: round,
    fromRound: round,
    outDir: obsDir,
    seed: 42, // bench-build's
    feedDirs: [path.join(root, 'test/fixtures/feeds'), shared],
  });
  log(`generated round ${round} in ${((performance.now() - started) / 1000).toFixed(1)} s`);

  const rng = new Mulberry32();
  rng.reseed(options.seed);
  const feeds = path.join(dir, 'feeds');
  fs.mkdirSync(feeds, { recursive: true });
  const write = (name: string, text: string) => {
    fs.writeFileSync(path.join(feeds, name), text);
    return path.join(feeds, name);
  };
  const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');
  const v4 = lines(readText(path.join(shared, 'ip-location-db-asn/asn-ipv4.csv.gz')));
  const v6 = lines(readText(path.join(shared, 'ip-location-db-asn/asn-ipv6.csv.gz')));
  churnMapping(v4, rng);
  churnMapping(v6, rng);
  const at = Math.floor(Date.now() / 1000);
  const aws = JSON.parse(readText(path.join(shared, 'aws/ip-ranges.json.gz'))) as Record<string, unknown>;
  const gcp = JSON.parse(readText(path.join(shared, 'google-cloud/cloud.json'))) as Record<string, unknown>;
  const imports = [
    [
      'import',
      'ip-location-db',
      write('asn-ipv4.csv', `${v4.join('\n')}\n`),
      write('asn-ipv6.csv', `${v6.join('\n')}\n`),
    ],
    ['import', 'aws', write('ip-ranges.json', churnAws(aws, at, rng))],
    ['import', 'google-cloud', write('cloud.json', churnGoogleCloud(gcp, at, rng))],
    ['observations', path.join(obsDir, `round-${round}.ndjson`)],
  ].flatMap((command) => ['--', ...command]);
  log(
    `imported the churned feeds and round ${round} in ${dated(root, stateDir, releasesDir, imports).toFixed(1)} s`,
  );
  const seconds = dated(root, stateDir, releasesDir, ['--', 'release']);
  const newer = currentId(releasesDir);
  if (newer <= older) throw new Error(`the new release ${newer} is not newer than ${older}`);
  log(`built release ${newer} in ${seconds.toFixed(1)} s`);
  // Neither is needed again: the state (1.5 GB) and the round (600 MB).
  fs.rmSync(stateDir, { recursive: true, force: true });
  fs.rmSync(obsDir, { recursive: true, force: true });
  const pair = { releasesDir, older, newer };
  fs.writeFileSync(pairFile, `${JSON.stringify(pair)}\n`);
  return pair;
}
