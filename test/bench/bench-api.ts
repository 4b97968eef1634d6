/**
 * `make bench-api`: serves the full-scale release of `make bench-build` with one server process
 * (one worker, pinned to one core) and, in the same run, a bare node:http server sending the
 * same response bytes (the limit of this machine); wrk on the other core, 50 connections.
 * After an unmeasured warm-up of each scenario, prints req/s, p50/p99 latency and the ratio to the
 * limit per scenario, median and spread over --runs, and the server's peak RSS; then MCP, the
 * MMDB peer (bench-peer.ts), metering and workers sections. Flags: bench-api-args.ts.
 *
 *   node dist/test/bench/bench-api.js --releases var/bench/releases [--seconds 10] [--runs 3]
 *     [--workers 1,2,4,8] [--skip-metering] [--skip-workers] [--only-workers] [--rest-only] [--scenario history]
 *     [--skip-peer] [--only-peer] [--peer-rounds 3] [--peer-addresses 100000] [--mmdb var/bench/ipscope.mmdb]
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { openRelease } from '../../shared/queries/index.js';
import { parseBenchApiArgs } from './bench-api-args.js';
import { againstBare, benchToolsCall, MCP_TARGET, toolsCallTable } from './bench-mcp.js';
import { BARE_SERVER, capturedLine } from './captured.js';
import { benchMetering } from './bench-metering.js';
import { benchPeer } from './bench-peer.js';
import { benchWorkers } from './bench-workers.js';
import { runWrk, spread, summarize, type WrkResult } from './wrk.js';
import { peakRssMb, settled, startNode, stop, withCpuPerRequest } from './processes.js';

/** Seconds of unmeasured load per scenario before the first run. */
const WARM_UP_SECONDS = 3;

/** The bench key is on the Free plan: limits high enough that the meter counts but never refuses. */
const BENCH_LIMITS = { FREE_REQUESTS_PER_MINUTE: '1000000000', FREE_MONTHLY_QUOTA: '1000000000000' };

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const args = parseBenchApiArgs(process.argv.slice(2), process.env, root);
const { releasesDir, seconds, runs, connections, sampleSize, workerCounts } = args;
const pin = os.availableParallelism() >= 2;

/** Deterministic PRNG (mulberry32) so every run asks the same questions. */
function rng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let x = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

/** Reservoir sample of `n` items from an iterator. */
function reservoir<T>(items: Iterable<T>, n: number, random: () => number): T[] {
  const out: T[] = [];
  let seen = 0;
  for (const item of items) {
    seen++;
    if (out.length < n) out.push(item);
    else {
      const j = Math.floor(random() * seen);
      if (j < n) out[j] = item;
    }
  }
  return out;
}

/** `count` draws from items with Zipf(s = 1) popularity by position. */
function zipf<T>(items: T[], count: number, random: () => number): T[] {
  const weights = items.map((_, i) => 1 / (i + 1));
  const cumulative: number[] = [];
  let total = 0;
  for (const w of weights) cumulative.push((total += w));
  const out: T[] = [];
  for (let k = 0; k < count; k++) {
    const target = random() * total;
    let lo = 0;
    let hi = cumulative.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cumulative[mid]! < target) lo = mid + 1;
      else hi = mid;
    }
    out.push(items[lo]!);
  }
  return out;
}

/** Issue 18's per-core targets besides each scenario's ratio (scenarios()): peak RSS, and p99 (p99Bound()). */
const RSS_TARGET_MB = 400;

/** p99 bound in ms: 5 ms where bare node:http answers 60,000 req/s, scaled by its rate on a slower machine. */
function p99Bound(bareRps: number): number {
  return Math.max(1, 60_000 / bareRps) * 5;
}

/** A target's line: the figure, the bound and whether it holds. */
function verdict(what: string, figure: string, bound: string, met: boolean): string {
  return `- ${what}: ${figure} (target ${bound}): ${met ? 'met' : 'NOT met'}`;
}

/**
 * A REST scenario; `target`: issue 18's least ratio to bare node:http sending the same bytes; with
 * `relativeTo`, its ratio is to be at least AS_OF_TARGET of that scenario's, in the same run.
 */
interface Scenario {
  name: string;
  paths: string[];
  target: number;
  relativeTo?: string;
}

/** Issue 33: an as_of scenario keeps at least this share of its scenario's ratio without as_of. */
const AS_OF_TARGET = 0.8;

/** A moment inside the release's history: an hour after its middle epoch was built; null without history. */
function asOfMoment(release: ReturnType<typeof openRelease>): string | null {
  const hasEpochs = release.db
    .prepare(`SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'epoch'`)
    .pluck()
    .get() as number;
  if (hasEpochs === 0) return null;
  const builtAt = release.db.prepare(`SELECT built_at FROM epoch ORDER BY epoch`).pluck().all() as number[];
  if (builtAt.length < 3) return null;
  return new Date((builtAt[Math.floor(builtAt.length / 2)]! + 3600) * 1000)
    .toISOString()
    .replace('.000Z', 'Z');
}

/** The REST scenarios, the as_of ones last. */
function scenarios(): Scenario[] {
  const current = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim();
  const release = openRelease(path.join(releasesDir, current));
  try {
    const random = rng(7);
    const ips = reservoir(
      release.db.prepare(`SELECT value FROM ip_summary`).pluck().iterate() as Iterable<string>,
      sampleSize,
      random,
    );
    const domainCount = release.db
      .prepare(`SELECT max(id) FROM domain WHERE in_seed = 1`)
      .pluck()
      .get() as number;
    const name = release.db.prepare(`SELECT name FROM domain WHERE id = ?`).pluck();
    const domains = Array.from(
      { length: sampleSize },
      () => name.get(1 + Math.floor(random() * domainCount)) as string,
    );
    const asns = reservoir(
      release.db
        .prepare(`SELECT asn FROM asn WHERE routes_v4 + routes_v6 > 0`)
        .pluck()
        .iterate() as Iterable<number>,
      sampleSize,
      random,
    );
    const list: Scenario[] = [
      { name: '/v1/ip uniform', paths: ips.map((ip) => `/v1/ip/${ip}`), target: 0.45 },
      { name: '/v1/ip Zipf', paths: zipf(ips, sampleSize, random).map((ip) => `/v1/ip/${ip}`), target: 0.75 },
      { name: '/v1/domain/{d}/history', paths: domains.map((d) => `/v1/domain/${d}/history`), target: 0.35 },
      { name: '/v1/asn/{asn}', paths: asns.map((a) => `/v1/asn/${a}`), target: 0.45 },
    ];
    // Issue 33: the same paths as of a moment inside the history (the middle epoch's release, an
    // hour after it was built): each at least 0.8 of its scenario's ratio without as_of, in one run.
    const moment = asOfMoment(release);
    if (moment === null) {
      console.log(
        'no as_of scenarios: the release carries no history of several epochs (make bench-build DAYS=…)',
      );
      return list;
    }
    const asOf = (name: string): Scenario => ({
      name: `${name} as_of`,
      paths: list.find((s) => s.name === name)!.paths.map((p) => `${p}?as_of=${moment}`),
      target: 0,
      relativeTo: name,
    });
    return [...list, asOf('/v1/ip uniform'), asOf('/v1/domain/{d}/history'), asOf('/v1/asn/{asn}')];
  } finally {
    release.close();
  }
}

function startProcess(args: string[], cpu: number | undefined, env: NodeJS.ProcessEnv = {}) {
  return startNode(args, pin ? cpu : undefined, env);
}

async function main(): Promise<void> {
  if (!fs.existsSync(path.join(releasesDir, 'CURRENT'))) {
    throw new Error(`no release in ${releasesDir}: run "make bench-build" first`);
  }
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'bench-api-'));
  const accounts = path.join(work, 'accounts.sqlite');
  const created = spawnSync(
    process.execPath,
    [
      path.join(root, 'bin/server.js'),
      '--accounts-db',
      accounts,
      'keys',
      'create',
      '--project',
      'bench',
      '--label',
      'bench',
    ],
    { encoding: 'utf8' },
  );
  const key = /\bsk_[A-Za-z0-9]+/.exec(created.stdout)?.[0];
  if (!key) throw new Error(`could not create a key:\n${created.stdout}${created.stderr}`);
  const headers = { authorization: `Bearer ${key}` };
  const all = scenarios();
  const uniform = all[0]!.paths;
  const list = all.filter((s) => args.scenario === undefined || s.name.includes(args.scenario));
  if (list.length === 0) throw new Error(`no scenario matches ${JSON.stringify(args.scenario)}`);
  // What the metering and workers sections start their own servers with.
  const serverBench = {
    releasesDir,
    accounts,
    key,
    paths: uniform,
    seconds,
    runs,
    connections,
    limits: BENCH_LIMITS,
    startProcess,
    stop,
  };
  // The cost of metering on /v1/ip uniform, embedded and PostgreSQL + Redis, against METERING=off.
  const metering = async () => {
    // Twice the runs, each a turn of a third of the length per server process (three per variant):
    // its costs are differences of servers' CPU per request, and more turns taken give a median that
    // one slow stretch, or one process, moves less.
    const lines = await benchMetering({
      ...serverBench,
      runs: runs * 2,
      seconds: Math.max(2, Math.ceil(seconds / 3)),
      root,
      ...(pin && { cpu: 1 }),
    });
    console.log('');
    for (const line of lines) console.log(line);
  };
  // --workers 1 against --workers 2 on /v1/ip uniform: req/s and CPU per request (bench-workers.ts).
  const workers = async () => {
    const lines = await benchWorkers({
      ...serverBench,
      server: path.join(root, 'bin/server.js'),
      workers: workerCounts,
    });
    console.log(
      `\nWorkers: /v1/ip uniform, embedded defaults, ${runs} runs of ${seconds} s; medians (min–max)`,
    );
    for (const line of lines) console.log(line);
  };
  // Issue 35: /v1/ip on random public addresses against the MMDB peer, runs alternating (bench-peer.ts).
  const peer = async (ours?: { child: ChildProcess; port: number }): Promise<string> => {
    const r = await benchPeer({
      ...serverBench,
      root,
      rounds: args.peerRounds,
      addresses: args.peerAddresses,
      ...(args.mmdb !== undefined && { mmdb: args.mmdb }),
      work,
      warmUpSeconds: WARM_UP_SECONDS,
      ...(pin && { cpu: 0, wrkCpu: 1 }),
      ...(ours && { ours }),
    });
    console.log('');
    for (const line of r.lines) console.log(line);
    return r.target;
  };
  if (args.onlyMetering || args.onlyWorkers || args.onlyPeer) {
    try {
      if (args.onlyPeer) {
        const target = await peer();
        console.log('\nTarget (issue 35), median of the rounds:');
        console.log(target);
      }
      if (args.onlyMetering) await metering();
      if (args.onlyWorkers) await workers();
    } finally {
      fs.rmSync(work, { recursive: true, force: true });
    }
    return;
  }
  const server = await startProcess(
    [
      path.join(root, 'bin/server.js'),
      '--accounts-db',
      accounts,
      'serve',
      '--workers',
      '1',
      '--port',
      '0',
      '--releases-dir',
      releasesDir,
      '--log-level',
      'warn',
    ],
    0,
    BENCH_LIMITS,
  );
  const base = `http://127.0.0.1:${server.port}`;
  // The release's range tables load into memory in the background first: not inside a measurement.
  await settled(server.child.pid!);
  // Capture the exact bytes the server sends for every path, for the baseline.
  const captured = path.join(work, 'responses.ndjson');
  const out = fs.createWriteStream(captured);
  for (const s of list) {
    for (const p of new Set(s.paths)) {
      const r = await request(base + p, { headers });
      const body = await r.body.text();
      if (r.statusCode !== 200) throw new Error(`${p}: ${r.statusCode} ${body.slice(0, 300)}`);
      out.write(capturedLine('GET', p, r.statusCode, r.headers, body));
    }
  }
  await new Promise((resolve) => out.end(resolve));
  const bare = await startProcess([BARE_SERVER, captured], 0);
  const results = new Map<
    string,
    { server: WrkResult[]; bare: WrkResult[]; cpuUs: number[]; bareCpuUs: number[] }
  >();
  try {
    // Warm-up, not measured: the JIT, SQLite's page cache and the answer caches settle, so the first
    // measured run is not the one that pays for them.
    for (const s of list) {
      const common = {
        paths: s.paths,
        headers,
        connections,
        seconds: WARM_UP_SECONDS,
        cpu: pin ? 1 : undefined,
      };
      await runWrk({ ...common, url: `http://127.0.0.1:${bare.port}` });
      await runWrk({ ...common, url: base });
    }
    for (let run = 1; run <= runs; run++) {
      for (const s of list) {
        const r = results.get(s.name) ?? { server: [], bare: [], cpuUs: [], bareCpuUs: [] };
        const common = { paths: s.paths, headers, connections, seconds, cpu: pin ? 1 : undefined };
        const limit = await withCpuPerRequest(bare.child.pid!, () =>
          runWrk({ ...common, url: `http://127.0.0.1:${bare.port}` }),
        );
        r.bare.push(limit.result);
        r.bareCpuUs.push(limit.cpuUs);
        const served = await withCpuPerRequest(server.child.pid!, () => runWrk({ ...common, url: base }));
        r.server.push(served.result);
        r.cpuUs.push(served.cpuUs);
        results.set(s.name, r);
        const last = r.server[r.server.length - 1]!;
        if (last.non2xx > 0 || last.errors > 0) {
          throw new Error(`${s.name}: ${last.non2xx} non-2xx and ${last.errors} socket errors`);
        }
        console.log(
          `run ${run}/${runs} ${s.name}: server ${last.rps.toFixed(0)} req/s, bare ${r.bare[r.bare.length - 1]!.rps.toFixed(0)} req/s`,
        );
      }
    }
    const rss = peakRssMb(server.child);
    console.log(
      `\n${runs} runs of ${seconds} s, ${connections} connections, one server process${pin ? ' on CPU 0, wrk on CPU 1' : ''}; medians (min–max)`,
    );
    console.log(
      '| Scenario | Server req/s | node:http req/s | Ratio | p50 ms | p99 ms server / node:http | CPU µs/req server / node:http |',
    );
    console.log('|---|---|---|---|---|---|---|');
    for (const [name, r] of results) {
      const srv = summarize(r.server.map((x) => x.rps));
      const lim = summarize(r.bare.map((x) => x.rps));
      const ratio = summarize(r.server.map((x, i) => x.rps / r.bare[i]!.rps));
      const p50 = summarize(r.server.map((x) => x.p50ms));
      const p99 = summarize(r.server.map((x) => x.p99ms));
      const bareP99 = summarize(r.bare.map((x) => x.p99ms));
      const cpu = summarize(r.cpuUs);
      const bareCpu = summarize(r.bareCpuUs);
      console.log(
        `| ${name} | ${spread(srv)} | ${spread(lim)} | ${spread(ratio, 2)} | ${spread(p50, 2)} | ${spread(p99, 2)} / ${spread(bareP99, 2)} | ${spread(cpu, 1)} / ${spread(bareCpu, 1)} |`,
      );
    }
    console.log(`server peak RSS: ${rss.toFixed(0)} MB`);
    const bareRps = summarize([...results.values()].flatMap((r) => r.bare.map((x) => x.rps))).median;
    const bound = p99Bound(bareRps);
    console.log(
      `p99 bound: 5 ms × 60,000 / ${bareRps.toFixed(0)} (bare node:http, median of all runs) = ${bound.toFixed(2)} ms`,
    );
    const targets: string[] = [];
    const ratioOf = (name: string) => {
      const r = results.get(name)!;
      return summarize(r.server.map((x, i) => x.rps / r.bare[i]!.rps)).median;
    };
    for (const s of list) {
      const r = results.get(s.name)!;
      const ratio = ratioOf(s.name);
      const p99 = summarize(r.server.map((x) => x.p99ms)).median;
      if (s.relativeTo !== undefined && results.has(s.relativeTo)) {
        const without = ratioOf(s.relativeTo);
        const bound = AS_OF_TARGET * without;
        targets.push(
          verdict(
            `${s.name} ratio (issue 33: ≥ ${AS_OF_TARGET} × ${without.toFixed(2)} without as_of)`,
            ratio.toFixed(2),
            `≥ ${bound.toFixed(2)}`,
            ratio >= bound,
          ),
        );
      } else targets.push(verdict(`${s.name} ratio`, ratio.toFixed(2), `≥ ${s.target}`, ratio >= s.target));
      targets.push(verdict(`${s.name} p99`, `${p99.toFixed(2)} ms`, `< ${bound.toFixed(2)} ms`, p99 < bound));
    }
    targets.push(
      verdict('server peak RSS', `${rss.toFixed(0)} MB`, `< ${RSS_TARGET_MB} MB`, rss < RSS_TARGET_MB),
    );
    const printTargets = () => {
      console.log(`\nTargets (issue 18${args.skipPeer ? '' : ', issue 35'}), medians of the runs:`);
      for (const line of targets) console.log(line);
    };
    if (args.restOnly || args.scenario !== undefined) return printTargets();
    // MCP tools/call lookup_ip in both eras against REST /v1/ip, same server, same IPs (bench-mcp.ts).
    const ips = uniform.map((p) => decodeURIComponent(p.slice('/v1/ip/'.length)));
    const mcp = await benchToolsCall({
      base,
      key,
      ips,
      seconds,
      runs,
      connections,
      ...(pin && { cpu: 1, serverCpu: 0 }),
    });
    console.log(`\nMCP tools/call lookup_ip against REST on the same ${ips.length} IPs; medians (min–max)`);
    for (const line of toolsCallTable(mcp)) console.log(line);
    for (const r of mcp.slice(1)) {
      const kept = summarize(againstBare(r, mcp[0]!)).median;
      targets.push(
        verdict(
          `${r.name}, ratio to REST each against its bare node:http`,
          kept.toFixed(2),
          `≥ ${MCP_TARGET}`,
          kept >= MCP_TARGET,
        ),
      );
    }
    if (!args.skipPeer) targets.push(await peer(server));
    printTargets();
    if (!args.skipMetering) await metering();
    if (!args.skipWorkers) await workers();
  } finally {
    await stop(bare.child);
    await stop(server.child);
    fs.rmSync(work, { recursive: true, force: true });
  }
}

await main();
