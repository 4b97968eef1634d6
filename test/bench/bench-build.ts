/**
 * `make bench-build`: a full-scale release from every supported file of ../shared/data plus a
 * generated seed of N domains (2N names) and three observation rounds, in three processes: the
 * feed snapshots and the seed (every `builder import` in one process, builder-batch.js), all
 * observation rounds in ONE `builder import observations` (one state load and save), and
 * `builder release`. Prints wall time and peak RSS per step, the total, and the release file
 * size. With --runs > 1 (or RUNS=3) it repeats and reports median and spread.
 *
 *   node dist/test/bench/bench-build.js --shared ../shared/data --dir var/bench --domains 1000000 --rounds 3 [--runs 3]
 *
 * With --days (issue 33), simulated days instead (bench-days.ts): daily feed churn and a DNS round
 * a day, a release a day at the day's moment; the release file size, build time and peak RSS at
 * each day listed (`make bench-build DAYS=30,90,365 DOMAINS=100000`):
 *
 *   node dist/test/bench/bench-build.js --shared ../shared/data --dir var/bench --days 30,90,365 --domains 100000
 *
 * `--release-every 7` (RELEASE_EVERY=7): a release a week (and on the days reported), the feeds
 * still churned and a round still generated every day.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { simulateDays } from './bench-days.js';
import { generateObservations } from './generate-observations.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const builder = path.join(root, 'bin/builder.js');
const batch = path.join(root, 'dist/test/bench/builder-batch.js');

const { values } = parseArgs({
  options: {
    shared: { type: 'string', default: path.join(root, '../shared/data') },
    dir: { type: 'string', default: path.join(root, 'var/bench') },
    domains: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: process.env.RUNS ?? '1' },
    /** Simulated days (bench-days.ts): the days to report at, e.g. `30,90,365`. */
    days: { type: 'string' },
    /** With --days: a release every this many days (and on the days reported); default 1. */
    'release-every': { type: 'string', default: '1' },
    /** Also print each step's own output (the release's time per phase). */
    verbose: { type: 'boolean', default: false },
  },
});
const shared = path.resolve(values.shared);
const dir = path.resolve(values.dir);
const domains = Number(values.domains);
const rounds = Number(values.rounds);
const runs = Number(values.runs);
if (!fs.existsSync(shared))
  throw new Error(`${shared}: no such directory (pass --shared <path to shared/data>)`);

interface Step {
  name: string;
  seconds: number;
  maxRssMb: number;
}

function step(
  name: string,
  args: string[],
  env: Record<string, string> = {},
  script: string = builder,
): Step {
  const started = performance.now();
  const r = spawnSync(process.execPath, [script, ...args], {
    encoding: 'utf8',
    env: { ...process.env, BUILDER_REPORT_RUSAGE: '1', ...env },
    maxBuffer: 64 << 20,
  });
  const seconds = (performance.now() - started) / 1000;
  if (r.status !== 0) throw new Error(`${name} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  if (values.verbose) process.stdout.write(r.stdout);
  const rss = /rusage: maxrss_kb=(\d+)/.exec(r.stderr);
  const rejected = [...r.stdout.matchAll(/rejected (\d+),/g)].reduce((n, m) => n + Number(m[1]), 0);
  if (rejected > 0) throw new Error(`${name}: ${rejected} rejected rows:\n${r.stdout}`);
  return { name, seconds, maxRssMb: rss ? Number(rss[1]) / 1024 : NaN };
}

async function main(): Promise<void> {
  if (values.days !== undefined) {
    const days = values.days.split(',').map(Number);
    if (days.some((d) => !Number.isInteger(d) || d < 1))
      throw new Error(`--days ${values.days}: e.g. 30,90,365`);
    const releaseEvery = Number(values['release-every']);
    return simulateDays({ root, shared, dir, domains, days, releaseEvery, verbose: values.verbose });
  }
  const obsDir = path.join(dir, `observations-${domains}x${rounds}`);
  if (!fs.existsSync(path.join(obsDir, `round-${rounds}.ndjson`))) {
    const started = performance.now();
    await generateObservations({
      domains,
      rounds,
      outDir: obsDir,
      seed: 42,
      feedDirs: [path.join(root, 'test/fixtures/feeds'), shared],
    });
    console.log(
      `generated ${domains} domains × ${rounds} rounds in ${((performance.now() - started) / 1000).toFixed(1)} s (not part of the build time)`,
    );
  }
  const imports = fs
    .readFileSync(path.join(root, 'test/bench/shared-data-imports.txt'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() && !l.startsWith('#'))
    .map((l) => l.trim().split(/\s+/));
  const results: Array<{ total: number; peakMb: number; sizeMb: number; steps: Step[] }> = [];
  for (let run = 1; run <= runs; run++) {
    const stateDir = path.join(dir, 'state');
    const releasesDir = path.join(dir, 'releases');
    fs.rmSync(stateDir, { recursive: true, force: true });
    fs.rmSync(releasesDir, { recursive: true, force: true });
    const base = ['--state-dir', stateDir, '--releases-dir', releasesDir];
    const steps: Step[] = [];
    // Feeds and seed: one process, one `builder import` after another.
    const snapshots = [
      ...imports.map(([kind, ...files]) => [kind!, ...files.map((f) => path.join(shared, f))]),
      ['tranco', path.join(obsDir, 'seed.csv')],
    ];
    steps.push(
      step(
        `import ${imports.length} feeds + seed`,
        snapshots.flatMap((args) => ['--', ...base, 'import', ...args]),
        {},
        batch,
      ),
    );
    const roundFiles = Array.from({ length: rounds }, (_, i) => path.join(obsDir, `round-${i + 1}.ndjson`));
    steps.push(step(`import rounds 1-${rounds}`, [...base, 'import', 'observations', ...roundFiles]));
    // The full tables of ip-location-db cover both families; the iptoasn v4 file here is only a subset.
    steps.push(step('release', [...base, 'release'], { ASN_MAPPING: 'ip-location-db,iptoasn' }));
    const current = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim();
    const sizeMb = fs.statSync(path.join(releasesDir, current)).size / 1048576;
    const total = steps.reduce((s, x) => s + x.seconds, 0);
    const peakMb = Math.max(...steps.map((s) => s.maxRssMb));
    results.push({ total, peakMb, sizeMb, steps });
    console.log(`\nrun ${run}/${runs}`);
    console.log('step                                  seconds   peak RSS MB');
    for (const s of steps)
      console.log(
        `${s.name.padEnd(36)} ${s.seconds.toFixed(1).padStart(8)} ${s.maxRssMb.toFixed(0).padStart(12)}`,
      );
    console.log(
      `total: ${total.toFixed(1)} s, peak RSS ${peakMb.toFixed(0)} MB, release file ${sizeMb.toFixed(0)} MB (${current})`,
    );
  }
  if (runs > 1) {
    const stat = (xs: number[]) => {
      const s = [...xs].sort((a, b) => a - b);
      return `median ${s[Math.floor(s.length / 2)]!.toFixed(1)} (min ${s[0]!.toFixed(1)}, max ${s[s.length - 1]!.toFixed(1)})`;
    };
    console.log(
      `\n${runs} runs: total seconds ${stat(results.map((r) => r.total))}; peak RSS MB ${stat(results.map((r) => r.peakMb))}; file MB ${stat(results.map((r) => r.sizeMb))}`,
    );
  }
  const worst = results.reduce((a, b) => (a.total > b.total ? a : b));
  console.log(
    `targets: total < 90 s: ${worst.total < 90 ? 'met' : 'NOT met'}; peak RSS < 1536 MB: ${worst.peakMb < 1536 ? 'met' : 'NOT met'}`,
  );
}

await main();
