/**
 * The cost of metering (rate limit, quota, counting) on /v1/ip uniform, measured in one run against
 * the same server program with METERING=off: once on the embedded stores (SQLite accounts,
 * in-process counters) and once with PostgreSQL + Redis (TEST_DATABASE_URL / TEST_REDIS_URL, or
 * this machine's defaults; skipped, with the reason, when they do not answer). The key's plan has
 * limits high enough that nothing is refused, so every request is counted. Each variant runs
 * several server processes (PROCESSES_PER_VARIANT); every run measures each of them once, each run
 * starting with the next variant, all pinned to the same core; the Redis is a private redis-server
 * pinned to that core too, so its work is paid for out of the server's throughput.
 *
 * Besides req/s it reports CPU time per answered request (utime + stime from /proc of the server,
 * plus the private Redis for the shared variant). On a saturated core throughput is 1 / CPU per
 * request, so `1 - cpu(unmetered) / cpu(metered)` is the throughput cost, and unlike req/s it does
 * not move when other work on the machine steals the core.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import pg from 'pg';
import { Redis } from 'ioredis';
import { cpuSeconds, settled, type ServerBenchOptions } from './processes.js';
import { runWrk, spread, summarize, type WrkResult } from './wrk.js';

export interface MeteringBenchOptions extends ServerBenchOptions {
  root: string;
  cpu?: number;
}

/**
 * Server processes per variant: each run measures every one of them once. Two processes of the same
 * program, started alike, can differ by 17 % in CPU per request for as long as they live (the
 * unmetered server at 15.6 and 13.3 µs, 2026-12-08, medians of three runs each), as much as the
 * costs measured here: with one process per variant, that offset was the cost's spread from one
 * full run to the next (embedded 2.0–16.5 % over four runs of 2026-12-04).
 */
const PROCESSES_PER_VARIANT = 3;

/** Seconds of unmeasured load per server before the first turn. */
const WARM_UP_SECONDS = 10;

const DATABASE_URL = process.env.TEST_DATABASE_URL || 'postgres://postgres@127.0.0.1:5432/test';
const REDIS_SERVER = '/usr/bin/redis-server';
let REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';

async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** A private redis-server pinned to `cpu` (none when redis-server is not installed). */
async function startPrivateRedis(cpu: number | undefined): Promise<ChildProcess | null> {
  if (!fs.existsSync(REDIS_SERVER)) return null;
  const port = await freePort();
  const args = ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'];
  const child =
    cpu === undefined
      ? spawn(REDIS_SERVER, args, { stdio: 'ignore' })
      : spawn('taskset', ['-c', String(cpu), REDIS_SERVER, ...args], { stdio: 'ignore' });
  for (let i = 0; i < 100; i++) {
    const probe = new Redis({ port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      REDIS_URL = `redis://127.0.0.1:${port}`;
      return child;
    } catch {
      probe.disconnect();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  child.kill('SIGKILL');
  return null;
}

async function sharedStoresReachable(): Promise<string | null> {
  try {
    const client = new pg.Client({ connectionString: DATABASE_URL, connectionTimeoutMillis: 1_000 });
    await client.connect();
    await client.end();
  } catch (error) {
    return `PostgreSQL at ${DATABASE_URL} does not answer (${(error as Error).message})`;
  }
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  redis.on('error', () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    return `Redis at ${REDIS_URL} does not answer (${(error as Error).message})`;
  } finally {
    redis.disconnect();
  }
  return null;
}

export async function benchMetering(options: MeteringBenchOptions): Promise<string[]> {
  const server = path.join(options.root, 'bin/server.js');
  const serveArgs = (extra: string[] = []) => [
    server,
    ...extra,
    'serve',
    '--workers',
    '1',
    '--port',
    '0',
    '--releases-dir',
    options.releasesDir,
    '--log-level',
    'warn',
  ];
  // target: issue 35's most CPU that variant's metering may cost, in %.
  const variants: Array<{
    name: string;
    env: NodeJS.ProcessEnv;
    args: string[];
    key: string;
    target?: number;
  }> = [
    {
      name: 'unmetered (METERING=off)',
      env: { METERING: 'off' },
      args: serveArgs(['--accounts-db', options.accounts]),
      key: options.key,
    },
    {
      name: 'metered, embedded',
      target: 5,
      env: options.limits,
      args: serveArgs(['--accounts-db', options.accounts]),
      key: options.key,
    },
  ];
  const schema = `bench_${process.pid}`;
  const prefix = `ipscope-bench:${process.pid}:`;
  // The private Redis first: REDIS_URL names it once it answers, and the shared variant must use it.
  const redisServer = await startPrivateRedis(options.cpu === undefined ? undefined : 0);
  const sharedEnv = { DATABASE_URL, DATABASE_SCHEMA: schema, REDIS_URL, REDIS_KEY_PREFIX: prefix };
  const unreachable = await sharedStoresReachable();
  if (unreachable === null) {
    const created = spawnSync(
      process.execPath,
      [server, 'keys', 'create', '--project', 'bench', '--label', 'bench'],
      {
        encoding: 'utf8',
        env: { ...process.env, ...sharedEnv },
      },
    );
    const key = /\bkey: (sk_[A-Za-z0-9]+)/.exec(created.stdout)?.[1];
    if (!key) throw new Error(`could not create a key in PostgreSQL:\n${created.stdout}${created.stderr}`);
    variants.push({
      name: 'metered, PostgreSQL + Redis',
      target: 10,
      env: { ...options.limits, ...sharedEnv },
      args: serveArgs(),
      key,
    });
  }
  const processes = PROCESSES_PER_VARIANT;
  /** The server processes of each variant. */
  const started: Array<Array<{ child: ChildProcess; port: number }>> = [];
  const stats = unreachable === null ? new Redis(REDIS_URL) : null;
  stats?.on('error', () => {});
  try {
    for (const v of variants) {
      const own: Array<{ child: ChildProcess; port: number }> = [];
      started.push(own);
      for (let p = 0; p < processes; p++) own.push(await options.startProcess(v.args, 0, v.env));
    }
    // Each server first loads the release's range tables (seconds of CPU on the full-scale release),
    // all on the same core: none is measured before all are idle (a first unmetered run once met
    // the other two still loading, and its 50 connections timed out).
    for (const own of started) for (const s of own) await settled(s.child.pid!);
    const results = variants.map(() => [] as WrkResult[]);
    const cpuPerRequest = variants.map(() => [] as number[]);
    /** Script calls (EVALSHA, EVAL) per answered request of the shared variant: how well takes batch. */
    const scriptsPerRequest: number[] = [];
    /** The private redis-server's CPU per answered request of the shared variant (part of its CPU). */
    const redisPerRequest: number[] = [];
    const redisCpu = () => (redisServer ? cpuSeconds(redisServer.pid!) : 0);
    const scriptCalls = async () => {
      if (stats === null) return 0;
      const info = await stats.info('commandstats');
      let calls = 0;
      for (const m of info.matchAll(/^cmdstat_(?:evalsha|eval):calls=(\d+),/gm)) calls += Number(m[1]);
      return calls;
    };
    const cpuOf = (i: number, p: number) =>
      cpuSeconds(started[i]![p]!.child.pid!) + (i === 2 ? redisCpu() : 0);
    const common = { paths: options.paths, connections: options.connections, cpu: options.cpu };
    // Warm-up: the release pages, the JIT and the heap of every server. 2 s was too short: in the
    // full runs of 2026-12-04 (bc4411c) every variant's CPU per request fell run after run (the
    // unmetered server's 83.5, 64.5, 59.1, 50.2, 50.9, 46.9 µs), so the medians mixed cold turns
    // with warm ones.
    for (const [i, v] of variants.entries()) {
      for (const s of started[i]!) {
        await runWrk({
          ...common,
          url: `http://127.0.0.1:${s.port}`,
          seconds: WARM_UP_SECONDS,
          headers: { authorization: `Bearer ${v.key}` },
        });
      }
    }
    for (let run = 1; run <= options.runs; run++) {
      // Each run starts with the next variant (unmetered, embedded, shared; then embedded, shared,
      // unmetered; …): a machine that speeds up or slows down within a run weighs on each in turn.
      for (let k = 0; k < variants.length; k++) {
        const i = (k + run - 1) % variants.length;
        const v = variants[i]!;
        // One turn per process of the variant; the run's figures are those of all its turns together
        // (CPU per request: the CPU of its turns over their requests; req/s: their mean).
        const turns: WrkResult[] = [];
        let cpu = 0;
        let scripts = 0;
        let redisUs = 0;
        /** CPU µs per request of each process's turn (shown: how far processes of one program differ). */
        const perProcess: number[] = [];
        for (const [p, s] of started[i]!.entries()) {
          const cpuBefore = cpuOf(i, p);
          const scriptsBefore = i === 2 ? await scriptCalls() : 0;
          const redisBefore = i === 2 ? redisCpu() : 0;
          const r = await runWrk({
            ...common,
            url: `http://127.0.0.1:${s.port}`,
            seconds: options.seconds,
            headers: { authorization: `Bearer ${v.key}` },
          });
          // A refused or wrong answer is a fault of the server: stop. Socket errors (timeouts,
          // resets) are what a stalling machine gives: the run is kept and its errors shown.
          if (r.non2xx > 0) throw new Error(`${v.name}: ${r.non2xx} non-2xx answers`);
          const used = cpuOf(i, p) - cpuBefore;
          cpu += used;
          perProcess.push((used / r.requests) * 1e6);
          if (i === 2) {
            scripts += (await scriptCalls()) - scriptsBefore;
            redisUs += (redisCpu() - redisBefore) * 1e6;
          }
          turns.push(r);
        }
        const requests = turns.reduce((n, x) => n + x.requests, 0);
        const r: WrkResult = {
          non2xx: 0,
          rps: turns.reduce((n, x) => n + x.rps, 0) / turns.length,
          requests,
          p50ms: summarize(turns.map((x) => x.p50ms)).median,
          p99ms: summarize(turns.map((x) => x.p99ms)).median,
          errors: turns.reduce((n, x) => n + x.errors, 0),
        };
        const cpuUs = (cpu / requests) * 1e6;
        results[i]!.push(r);
        cpuPerRequest[i]!.push(cpuUs);
        if (i === 2) {
          scriptsPerRequest.push(scripts / requests);
          if (redisServer) redisPerRequest.push(redisUs / requests);
        }
        console.log(
          `metering run ${run}/${options.runs} ${v.name}: ${r.rps.toFixed(0)} req/s, ${cpuUs.toFixed(1)} µs CPU per request` +
            ` (its processes: ${perProcess.map((us) => us.toFixed(1)).join(', ')})` +
            (i === 2
              ? `, ${scriptsPerRequest.at(-1)!.toFixed(3)} Redis script calls per request` +
                (redisServer ? ` (Redis's CPU ${redisPerRequest.at(-1)!.toFixed(1)} µs of it)` : '')
              : '') +
            (r.errors > 0 ? `, ${r.errors} socket errors` : ''),
        );
      }
    }
    const lines = [
      `/v1/ip uniform with and without metering, ${processes} server processes per variant, ${options.runs} runs of one ${options.seconds} s turn per process, ${options.connections} connections; medians of the runs (min–max)`,
      '| Server | req/s | Ratio to unmetered | CPU µs per request | Metering cost (CPU) | p50 ms | p99 ms | socket errors |',
      '|---|---|---|---|---|---|---|---|',
    ];
    for (const [i, v] of variants.entries()) {
      const rps = summarize(results[i]!.map((x) => x.rps));
      const ratio = summarize(results[i]!.map((x, run) => x.rps / results[0]![run]!.rps));
      const cpu = summarize(cpuPerRequest[i]!);
      const cost = summarize(cpuPerRequest[i]!.map((us, run) => 100 * (1 - cpuPerRequest[0]![run]! / us)));
      const p50 = summarize(results[i]!.map((x) => x.p50ms));
      const p99 = summarize(results[i]!.map((x) => x.p99ms));
      lines.push(
        `| ${v.name} | ${spread(rps)} | ${spread(ratio, 2)} | ${spread(cpu, 1)} | ${i === 0 ? '–' : `${spread(cost, 1)} %`} | ${spread(p50, 2)} | ${spread(p99, 2)} | ${results[i]!.reduce((n, x) => n + x.errors, 0)} |`,
      );
    }
    lines.push(
      'Metering cost (CPU) = 1 - CPU per request unmetered / metered: the throughput lost on a saturated core' +
        (redisServer
          ? ' (the shared variant includes its private redis-server, pinned to the same core).'
          : '.'),
    );
    if (unreachable !== null) lines.push(`PostgreSQL + Redis not measured: ${unreachable}`);
    else
      lines.push(
        `Redis script calls per request (shared variant, each a batch of takes): ${spread(summarize(scriptsPerRequest), 3)}` +
          (redisServer
            ? `; the private redis-server's CPU per request: ${spread(summarize(redisPerRequest), 1)} µs`
            : ''),
      );
    // Issue 35's targets: the median metering cost of each metered variant.
    lines.push('Targets (issue 35), medians of the runs:');
    for (const [i, v] of variants.entries()) {
      const bound = v.target;
      if (bound === undefined) continue;
      const cost = summarize(cpuPerRequest[i]!.map((us, run) => 100 * (1 - cpuPerRequest[0]![run]! / us)));
      lines.push(
        `- metering cost, ${v.name.replace('metered, ', '')}: ${cost.median.toFixed(1)} % (target ≤ ${bound} %): ${cost.median <= bound ? 'met' : 'NOT met'}`,
      );
    }
    return lines;
  } finally {
    stats?.disconnect();
    for (const own of started) for (const s of own) await options.stop(s.child);
    if (unreachable === null) {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
      const redis = new Redis(REDIS_URL);
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
    redisServer?.kill('SIGKILL');
  }
}
