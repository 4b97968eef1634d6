/**
 * Synthetic DNS observations for benchmarks and tests.
 *
 *   npx tsx test/bench/generate-observations.ts --domains 1000000 --rounds 3 --out /tmp/bench-obs [--seed 42]
 *
 * Writes `<out>/seed.csv` (Tranco format: `rank,domain`, no header) and `<out>/round-<n>.ndjson`,
 * one line per (name, type) per round in the builder's observation format:
 *
 *   {"name":"www.example.com","type":"A","time":"2026-10-01T00:00:05Z","outcome":"positive",
 *    "values":["93.184.215.14"],"cnames":[...],"ttl":300}
 *
 * The registered domains are synthetic (`d000123-k.com`, `word-word.net`, …) but the addresses lie
 * inside real published provider ranges (Cloudflare, Fastly, Google Cloud, AWS, Linode,
 * DigitalOcean), read at startup from the committed fixture excerpts when present and otherwise
 * from the shared data snapshots, so a release built from them has meaningful joins. The rest are
 * public IPv4/IPv6 addresses outside every list that could be found (plus ~0.1% private 10.x
 * answers, which the API allows as values: docs/api.md#get-v1domaindomainhistory).
 *
 * Output is a pure function of (domains, rounds, seed, the feed files read): every domain has its
 * own PRNG stream seeded from (seed, index). Lines are built as short strings, copied into a 2 MiB
 * buffer per file (long string ropes would cost more in garbage collection than the generation
 * itself) and each full buffer is written through a stream that respects backpressure, so memory
 * stays flat whatever the number of domains.
 *
 * The pieces are in test/bench/observation-generator/: the PRNG, the synthetic domain names, the
 * feed ranges and providers, the addresses, the owners' answers and their changes, the output.
 */
import { createWriteStream, existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

import { AddressDrawer } from './observation-generator/addresses.js';
import { ChunkWriter } from './observation-generator/chunk-writer.js';
import { DomainNames } from './observation-generator/domain-names.js';
import { readFeedRanges } from './observation-generator/feed-ranges.js';
import { Owners, type Owner } from './observation-generator/owners.js';
import { Mulberry32, mix32 } from './observation-generator/prng.js';
import { CHAIN_PROVIDERS } from './observation-generator/providers.js';

// ---------------------------------------------------------------------------------------------
// Options and results

export interface GenerateObservationsOptions {
  /** Registered domains in the seed list; the output has 2 names (apex, www) per domain. */
  domains: number;
  /** Observation rounds, one day apart. */
  rounds: number;
  /**
   * The first round written (1-based, default 1): the rounds before it are drawn (each domain's
   * answers evolve from round 1, so round n is the same whatever is written) but not written. The
   * simulated days of bench-build write a few rounds at a time: a year of rounds at once would not
   * fit on the disk.
   */
  fromRound?: number;
  /** Directory for seed.csv and round-<n>.ndjson (created when missing). */
  outDir: string;
  /** PRNG seed (default 42). */
  seed?: number;
  /**
   * Directories searched, in order, for the feed files (`cloudflare/ips-v4.txt`, …). Default: the
   * repository's `test/fixtures/feeds`, then `$IPSCOPE_FEED_DATA`, then `/work/shared/data`.
   */
  feedDirs?: string[];
  /** Start of round 1 (default 2026-10-01T00:00:00Z). */
  start?: string;
  /** Length of a round: query times are spread over this many seconds (default 4 hours). */
  roundSeconds?: number;
  /** Progress and summary lines (default: none). */
  log?: (line: string) => void;
}

export interface RoundSummary {
  file: string;
  lines: number;
  bytes: number;
  outcomes: Record<string, number>;
}

export interface GenerateObservationsResult {
  seedFile: string;
  seedBytes: number;
  rounds: RoundSummary[];
  /** Feed files the addresses were drawn from (provider -> file paths). */
  feeds: Record<string, string[]>;
  /** Files used only to keep "unlisted" addresses outside every known range. */
  exclusionFiles: string[];
  events: {
    addressChanges: number;
    providerMoves: number;
    returns: number;
    reorders: number;
    transientFailures: number;
    becameNxdomain: number;
    aaaaToggles: number;
  };
  seconds: number;
}

const DEFAULT_START = '2026-10-01T00:00:00Z';
const DEFAULT_ROUND_SECONDS = 4 * 3600;
const STREAM_HIGH_WATER_MARK = 4 * 1024 * 1024;

/** The repository root, whether this runs from test/bench (tsx) or dist/test/bench (tsc output). */
function repoRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  const candidates = [resolve(here, '..', '..'), resolve(here, '..', '..', '..')];
  return candidates.find((dir) => existsSync(join(dir, 'package.json'))) ?? candidates[0]!;
}

function defaultFeedDirs(): string[] {
  const root = repoRoot();
  const dirs = [join(root, 'test', 'fixtures', 'feeds')];
  if (process.env.IPSCOPE_FEED_DATA) dirs.push(process.env.IPSCOPE_FEED_DATA);
  dirs.push(resolve(root, '..', 'shared', 'data'), '/work/shared/data');
  return [...new Set(dirs)];
}

// ---------------------------------------------------------------------------------------------
// The generator

export async function generateObservations(
  options: GenerateObservationsOptions,
): Promise<GenerateObservationsResult> {
  const startedAt = performance.now();
  const domainCount = options.domains;
  const roundCount = options.rounds;
  const seed = options.seed ?? 42;
  const log = options.log ?? (() => {});
  if (!Number.isInteger(domainCount) || domainCount < 1)
    throw new RangeError('domains must be a positive integer');
  if (!Number.isInteger(roundCount) || roundCount < 1)
    throw new RangeError('rounds must be a positive integer');
  const startMs = Date.parse(options.start ?? DEFAULT_START);
  if (Number.isNaN(startMs)) throw new RangeError(`start is not an ISO 8601 time: ${options.start}`);
  const roundSeconds = options.roundSeconds ?? DEFAULT_ROUND_SECONDS;
  const fromRound = options.fromRound ?? 1;
  if (!Number.isInteger(fromRound) || fromRound < 1 || fromRound > roundCount)
    throw new RangeError('fromRound must be an integer from 1 to rounds');
  const feedDirs = options.feedDirs ?? defaultFeedDirs();

  const ranges = readFeedRanges(feedDirs);
  const providerIndex = new Map(ranges.providers.map((p, i) => [p.key, i]));
  const chainProviders = CHAIN_PROVIDERS.map((k) => providerIndex.get(k)).filter((i) => i !== undefined);

  const rng = new Mulberry32();
  const drawer = new AddressDrawer(rng, ranges);
  const owners = new Owners(rng, ranges.providers, chainProviders, drawer);

  // --- output
  await mkdir(options.outDir, { recursive: true });
  const seedFile = join(options.outDir, 'seed.csv');
  const roundFiles = Array.from({ length: roundCount - fromRound + 1 }, (_, r) =>
    join(options.outDir, `round-${r + fromRound}.ndjson`),
  );
  const open = (path: string): ChunkWriter =>
    new ChunkWriter(createWriteStream(path, { highWaterMark: STREAM_HIGH_WATER_MARK }));
  const seedWriter = open(seedFile);
  const roundWriters = roundFiles.map(open);
  const summaries: RoundSummary[] = roundFiles.map((file) => ({
    file,
    lines: 0,
    bytes: 0,
    outcomes: { positive: 0, nxdomain: 0, nodata: 0, timeout: 0, servfail: 0, malformed: 0 },
  }));

  const linesPerRound = 4 * domainCount;
  const timeCache = Array.from({ length: roundCount }, () => ({ second: -1, text: '' }));
  const timeText = (round: number, lineIndex: number): string => {
    const second = Math.floor((lineIndex * roundSeconds) / linesPerRound);
    const cache = timeCache[round]!;
    if (cache.second !== second) {
      cache.second = second;
      cache.text = `${new Date(startMs + round * 86_400_000 + second * 1000).toISOString().slice(0, 19)}Z`;
    }
    return cache.text;
  };

  const names = new DomainNames(seed);
  const writers = [seedWriter, ...roundWriters];
  const flushFull = async (): Promise<void> => {
    for (const writer of writers) if (writer.full) await writer.flush();
  };

  /** The A and AAAA lines of one name in one round. */
  const emit = (round: number, lineIndex: number, head: string, o: Owner, failure: number): string => {
    // `failure` bit 1: the A query failed, bit 2: the AAAA query failed; bits 4/8 pick the outcome.
    // A round before fromRound is drawn (the same PRNG calls) and counted nowhere.
    const summary = summaries[round - fromRound + 1] ?? { lines: 0, outcomes: {} as Record<string, number> };
    summary.lines += 2;
    let out = '';
    for (let t = 0; t < 2; t++) {
      const time = timeText(round, lineIndex + t);
      const type = t === 0 ? 'A' : 'AAAA';
      let outcome: string;
      let values = '[]';
      let cnames = '[]';
      let ttl = '';
      if (failure & (t === 0 ? 1 : 2)) {
        outcome = failure & 4 ? 'malformed' : failure & 8 ? 'servfail' : 'timeout';
      } else if (o.nx) {
        outcome = 'nxdomain';
        ttl = `,"ttl":${300 + rng.int(3300)}`;
      } else {
        const list = t === 0 ? o.a : o.aaaa;
        cnames = o.cnamesJson;
        if (list.length > 0) {
          outcome = 'positive';
          values = t === 0 ? o.aJson : o.aaaaJson;
          ttl = `,"ttl":${1 + rng.int(rng.next() < 0.6 ? 300 : 3600)}`;
        } else {
          outcome = 'nodata';
          ttl = `,"ttl":${60 + rng.int(3540)}`;
        }
      }
      summary.outcomes[outcome] = (summary.outcomes[outcome] ?? 0) + 1;
      out += `${head}${type}","time":"${time}","outcome":"${outcome}","values":${values},"cnames":${cnames}${ttl}}\n`;
    }
    return out;
  };

  /** This round's transient failure bits for one name (0 = none). */
  const failureBits = (round: number): number => {
    if (rng.next() >= (round === 0 ? 0.001 : 0.01)) return 0;
    owners.events.transientFailures++;
    const which = rng.next();
    const types = which < 0.4 ? 1 : which < 0.7 ? 2 : 3;
    const kind = rng.next();
    return types | (kind < 0.05 ? 4 : kind < 0.4 ? 8 : 0);
  };

  for (let i = 0; i < domainCount; i++) {
    rng.reseed(mix32(seed, i));
    const rank = i + 1;
    const domain = names.name(rank, rng.next(), rng.int(26 * 12));
    seedWriter.add(`${rank},${domain}\n`);
    const label = domain.slice(0, domain.indexOf('.'));

    // Round 1 state.
    const provider = drawer.pickProvider();
    const domainNx = rng.next() < 0.028;
    const apex = owners.newOwner(provider, label, false, domainNx, 0.84, 0.57);
    let www: Owner;
    const wu = rng.next();
    if (domainNx) www = apex;
    else if (wu < 0.01) www = owners.newOwner(provider, `www-${label}`, false, true, 0, 0);
    else if (wu < 0.21 && chainProviders.length > 0) {
      www = owners.newOwner(rng.pick(chainProviders), `www-${label}`, true, false, 0.97, 0.6);
    } else if (wu < 0.74 && apex.a.length > 0) www = apex;
    else www = owners.newOwner(provider, `www-${label}`, false, false, 0.85, 0.57);
    const apexHead = `{"name":"${domain}","type":"`;
    const wwwHead = `{"name":"www.${domain}","type":"`;

    for (let r = 0; r < roundCount; r++) {
      if (r > 0) {
        owners.evolve(apex, r + 1);
        owners.evolve(www, r + 1);
      }
      const lineIndex = 4 * i;
      const apexLines = emit(r, lineIndex, apexHead, apex, failureBits(r));
      const lines = apexLines + emit(r, lineIndex + 2, wwwHead, www, failureBits(r));
      if (r + 1 >= fromRound) roundWriters[r + 1 - fromRound]!.add(lines);
    }
    if (writers.some((w) => w.full)) await flushFull();
    if ((i + 1) % 100_000 === 0) log(`  ${i + 1} domains`);
  }
  await Promise.all(writers.map((w) => w.end()));
  roundWriters.forEach((writer, r) => (summaries[r]!.bytes = writer.bytes));

  return {
    seedFile,
    seedBytes: seedWriter.bytes,
    rounds: summaries,
    feeds: ranges.feeds,
    exclusionFiles: ranges.exclusionFiles,
    events: owners.events,
    seconds: (performance.now() - startedAt) / 1000,
  };
}

// ---------------------------------------------------------------------------------------------
// CLI

function formatMb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      domains: { type: 'string', default: '1000000' },
      rounds: { type: 'string', default: '3' },
      out: { type: 'string' },
      seed: { type: 'string', default: '42' },
      'feed-dir': { type: 'string', multiple: true },
    },
    strict: true,
  });
  if (!values.out) {
    throw new Error('missing --out <dir>: e.g. --domains 1000000 --rounds 3 --out /tmp/bench-obs');
  }
  const result = await generateObservations({
    domains: Number(values.domains),
    rounds: Number(values.rounds),
    outDir: values.out,
    seed: Number(values.seed),
    ...(values['feed-dir'] ? { feedDirs: values['feed-dir'] } : {}),
    log: (line) => console.error(line),
  });
  console.log('feeds used:');
  for (const [provider, files] of Object.entries(result.feeds))
    console.log(`  ${provider}: ${files.join(', ')}`);
  console.log(`  exclusion lists: ${result.exclusionFiles.length} files`);
  console.log(`seed: ${result.seedFile} (${formatMb(result.seedBytes)})`);
  let totalLines = 0;
  let totalBytes = result.seedBytes;
  for (const round of result.rounds) {
    totalLines += round.lines;
    totalBytes += round.bytes;
    const outcomes = Object.entries(round.outcomes)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ');
    console.log(`${round.file}: ${round.lines} lines, ${formatMb(round.bytes)} (${outcomes})`);
  }
  const e = result.events;
  console.log(
    `events after round 1: ${e.addressChanges} address changes (${e.providerMoves} provider moves), ` +
      `${e.returns} returns to an earlier answer, ${e.reorders} order-only changes, ${e.becameNxdomain} became NXDOMAIN, ` +
      `${e.aaaaToggles} AAAA toggles, ${e.transientFailures} names with a transient failure (all rounds)`,
  );
  console.log(
    `total: ${totalLines} lines, ${formatMb(totalBytes)} in ${result.seconds.toFixed(1)} s ` +
      `(${Math.round(totalLines / result.seconds)} lines/s)`,
  );
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exitCode = 1;
  });
}
