/**
 * `make bench-watch` (issue 34): the events of a full-scale release pair for 1,000 projects'
 * watchlists of 100 entries each, then 10,000 webhook deliveries to a receiver on loopback.
 *
 *   node dist/test/bench/bench-watch.js --from var/bench --dir var/bench-watch [--shared ../shared/data]
 *
 * The pair (watch-pair.ts): the release of `make bench-build` in --from and the next one, built
 * in --dir from a copy of its state with a day's churn. The watchlists (watch-entries.ts) are
 * drawn from the pair's changes. Each measured step runs in a process of its own (this script
 * with --step), so its peak RSS is its own:
 *
 * - compute: a fresh accounts store (SQLite in --dir; with TEST_DATABASE_URL also PostgreSQL, in
 *   a schema of its own dropped afterwards) with the projects and their entries, the older release
 *   computed first (it starts the chain), then `computeReleaseEvents` of the newer one timed: wall
 *   time, events computed, events inserted (each with a delivery: every project has an endpoint,
 *   which nothing sends to here), peak RSS; meanwhile the longest stall of this process's event
 *   loop (the diff runs on a worker thread) and whether another owner's claim, every 10 s, finds
 *   the run's lease held (the computer renews it: a computation may outlast RUN_LEASE_MS).
 * - deliver (watch-deliveries.ts): 10,000 of those events (round robin over the projects) into a
 *   fresh outbox, one endpoint each, drained by the Deliverer: deliveries/s, wall time, p50/p99 of
 *   the attempts, failures, and what the receiver verified.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { openAccountsStore, type AccountsStore } from '../../accounts/index.js';
import { openPgAccountsStore } from '../../accounts/pg-store.js';
import type { NewWatchEvent } from '../../accounts/watch-types.js';
import { RUN_LEASE_MS, computeReleaseEvents } from '../../server/watch/runs.js';
import { openRelease } from '../../shared/queries/index.js';
import { benchDeliveries, runReceiver, type DeliveryFigures } from './watch-deliveries.js';
import { drawWatchlists, type DrawnEntry } from './watch-entries.js';
import { releasePair, type ReleasePair } from './watch-pair.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const script = fileURLToPath(import.meta.url);

const { values } = parseArgs({
  options: {
    step: { type: 'string' },
    store: { type: 'string', default: 'sqlite' },
    from: { type: 'string', default: path.join(root, 'var/bench') },
    dir: { type: 'string', default: path.join(root, 'var/bench-watch') },
    shared: { type: 'string', default: path.join(root, '../shared/data') },
    domains: { type: 'string', default: '1000000' },
    rounds: { type: 'string', default: '3' },
    projects: { type: 'string', default: '1000' },
    entries: { type: 'string', default: '100' },
    deliveries: { type: 'string', default: '10000' },
    seed: { type: 'string', default: '34' },
  },
});
const dir = path.resolve(values.dir);
const projects = Number(values.projects);
const perProject = Number(values.entries);
const deliveries = Number(values.deliveries);
const seed = Number(values.seed);
const PER_WORKSPACE = 10;
const DATABASE_URL = process.env.TEST_DATABASE_URL;
const files = {
  pair: path.join(dir, 'pair.json'),
  entries: path.join(dir, `watchlists-${projects}x${perProject}-seed${seed}.json`),
  draw: path.join(dir, `watchlists-${projects}x${perProject}-seed${seed}.draw.json`),
  events: path.join(dir, 'events.ndjson'),
};
const peakRssMb = () => process.resourceUsage().maxRSS / 1024;
const readJson = <T>(file: string) => JSON.parse(fs.readFileSync(file, 'utf8')) as T;

/** A server process computing a pair keeps answering: its event loop stalls at most this long. */
const STALL_TARGET_MS = 250;

interface ComputeFigures {
  store: string;
  entries: number;
  setupS: number;
  wallS: number;
  events: number;
  inserted: number;
  kinds: Record<string, number>;
  peakRssMb: number;
  /** The longest stall of the calling thread's event loop while it computed (ms). */
  stallMs: number;
  /** Claims by another owner while it computed, every 10 s, and how many found the lease held. */
  claims: number;
  held: number;
}

/** A fresh store of the kind, and how to remove it. */
function freshStore(kind: string, name: string): { store: AccountsStore; drop: () => Promise<void> } {
  if (kind === 'sqlite') {
    const file = path.join(dir, `${name}.sqlite`);
    for (const f of [file, `${file}-wal`, `${file}-shm`]) fs.rmSync(f, { force: true });
    return { store: openAccountsStore(file), drop: async () => {} };
  }
  const schema = `bench_watch_${name}_${process.pid}`;
  return {
    store: openPgAccountsStore({ url: DATABASE_URL!, schema }),
    drop: async () => {
      const client = new pg.Client({ connectionString: DATABASE_URL });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    },
  };
}

async function computeStep(kind: string): Promise<ComputeFigures> {
  const pair = readJson<ReleasePair>(files.pair);
  const watchlists = readJson<DrawnEntry[][]>(files.entries);
  const { store, drop } = freshStore(kind, 'accounts');
  try {
    let started = performance.now();
    const projectIds: string[] = [];
    let workspace = '';
    for (const [i, entries] of watchlists.entries()) {
      if (i % PER_WORKSPACE === 0)
        workspace = (await store.createWorkspace({ name: `ws-${i / PER_WORKSPACE}` })).id;
      const project = await store.createProject({ workspaceId: workspace, name: `project-${i}` });
      await store.addWatchEntries(project.id, entries, perProject);
      // An endpoint each, so that inserting the events inserts their deliveries (never sent here).
      await store.createEndpoint({ projectId: project.id, url: `http://127.0.0.1:9/hooks/${i}`, kinds: [] });
      projectIds.push(project.id);
    }
    const setupS = (performance.now() - started) / 1000;
    const open = (id: string) => openRelease(path.join(pair.releasesDir, `${id}.sqlite`));
    const older = open(pair.older);
    const first = await computeReleaseEvents(store, pair.releasesDir, older, 'bench-watch');
    older.close();
    if (first.status !== 'started_chain') throw new Error(`the older release: ${first.status}`);
    const newer = open(pair.newer);
    // While it computes: how long this thread's event loop stalls (a server answers on it), and
    // whether another process asking for the run finds its lease held (renewed past RUN_LEASE_MS).
    const delay = monitorEventLoopDelay({ resolution: 10 });
    delay.enable();
    let claims = 0;
    let held = 0;
    const asking = setInterval(() => {
      void store.claimWatchRun(pair.newer, 'another-process', RUN_LEASE_MS).then((answer) => {
        claims += 1;
        if (answer === 'held') held += 1;
      });
    }, 10_000);
    started = performance.now();
    const outcome = await computeReleaseEvents(store, pair.releasesDir, newer, 'bench-watch');
    const wallS = (performance.now() - started) / 1000;
    clearInterval(asking);
    delay.disable();
    const stallMs = delay.max / 1e6;
    const rss = peakRssMb();
    newer.close();
    if (outcome.status !== 'computed') throw new Error(`the newer release: ${outcome.status}`);

    // The change feed of each project: the events by kind, and (once) the sample to deliver.
    const kinds: Record<string, number> = {};
    const byProject: NewWatchEvent[][] = [];
    const keep = Math.ceil(deliveries / projects) * 4;
    for (const projectId of projectIds) {
      const events = await store.listEvents({ projectId, limit: 1_000_000 });
      for (const e of events) kinds[e.kind] = (kinds[e.kind] ?? 0) + 1;
      byProject.push(
        events.slice(0, keep).map((e) => ({
          id: e.id,
          projectId: e.projectId,
          release: e.release,
          previousRelease: e.previousRelease,
          kind: e.kind,
          subject: e.subject,
          payload: e.payload,
        })),
      );
    }
    if (kind === 'sqlite') {
      const sample: NewWatchEvent[] = [];
      for (let i = 0; sample.length < deliveries && byProject.some((l) => l.length > i); i++)
        for (const list of byProject) if (list[i] && sample.length < deliveries) sample.push(list[i]!);
      fs.writeFileSync(files.events, sample.map((e) => JSON.stringify(e)).join('\n') + '\n');
    }
    const entries = watchlists.reduce((sum, l) => sum + l.length, 0);
    return {
      store: kind,
      entries,
      setupS,
      wallS,
      events: outcome.events,
      inserted: outcome.inserted,
      kinds,
      peakRssMb: rss,
      stallMs,
      claims,
      held,
    };
  } finally {
    await store.close();
    await drop();
  }
}

async function deliverStep(kind: string): Promise<DeliveryFigures & { store: string; peakRssMb: number }> {
  const events = fs
    .readFileSync(files.events, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => JSON.parse(l) as NewWatchEvent);
  const { store, drop } = freshStore(kind, 'outbox');
  try {
    const figures = await benchDeliveries(store, events, script, PER_WORKSPACE);
    return { store: kind, ...figures, peakRssMb: peakRssMb() };
  } finally {
    await store.close();
    await drop();
  }
}

/** This script again with --step: its figures are the last line of its output. */
function child<T>(step: string, store = 'sqlite'): T {
  const args = ['--step', step, '--store', store, '--dir', dir, '--projects', String(projects)];
  args.push('--entries', String(perProject), '--deliveries', String(deliveries), '--seed', String(seed));
  const r = spawnSync(process.execPath, [script, ...args], {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 << 20,
  });
  if (r.status !== 0) throw new Error(`--step ${step} --store ${store} failed (${r.status}):\n${r.stdout}`);
  return JSON.parse(r.stdout.trim().split('\n').at(-1)!) as T;
}

const n = (x: number) => x.toLocaleString('en-US');
const loadavg = () => fs.readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

async function main(): Promise<void> {
  const pair = await releasePair({
    root,
    from: path.resolve(values.from),
    dir,
    shared: path.resolve(values.shared),
    domains: Number(values.domains),
    rounds: Number(values.rounds),
    seed,
  });
  console.log(`pair: ${pair.older} -> ${pair.newer} (${pair.releasesDir}); load ${loadavg()}`);
  const drawn = child<{ seconds: number; pools: Record<string, number>; changes: Record<string, number> }>(
    'draw',
  );
  console.log(
    `changes (builder diff): ${Object.entries(drawn.changes)
      .map(([k, v]) => `${k} ${n(v)}`)
      .join(', ')}`,
  );
  console.log(
    `watchlists: ${n(projects)} projects × ${perProject} entries drawn from ${Object.entries(drawn.pools)
      .map(([k, v]) => `${n(v)} ${k === 'prefix' ? 'prefixes' : `${k}s`}`)
      .join(', ')} that changed (${drawn.seconds.toFixed(1)} s, not measured)`,
  );
  const stores = DATABASE_URL ? ['sqlite', 'postgresql'] : ['sqlite'];
  if (!DATABASE_URL) console.log('TEST_DATABASE_URL not set: SQLite only');
  const computed = stores.map((s) => child<ComputeFigures>('compute', s));
  const delivered = stores.map((s) =>
    child<DeliveryFigures & { store: string; peakRssMb: number }>('deliver', s),
  );

  for (const c of computed)
    console.log(
      `${c.store}: ${n(c.entries)} entries (and an endpoint a project) stored in ${c.setupS.toFixed(1)} s`,
    );
  console.log(`load at the end ${loadavg()}`);
  console.log(
    `\nevents by kind: ${Object.entries(computed[0]!.kinds)
      .map(([k, v]) => `${k} ${n(v)}`)
      .join(', ')}`,
  );
  console.log(
    `\n| Events of the pair (${n(projects)} × ${perProject} entries) | Store | Wall s | Events | Inserted | Peak RSS MB | Longest stall ms | Lease held |`,
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|');
  for (const c of computed)
    console.log(
      `| computeReleaseEvents | ${c.store} | ${c.wallS.toFixed(1)} | ${n(c.events)} | ${n(c.inserted)} | ${c.peakRssMb.toFixed(0)} | ${c.stallMs.toFixed(0)} | ${c.held}/${c.claims} |`,
    );
  console.log(
    `\n| Deliveries to loopback | Store | Deliveries | Wall s | Deliveries/s | p50 ms | p99 ms | Failed | Verified | Peak RSS MB |`,
  );
  console.log('|---|---|---:|---:|---:|---:|---:|---:|---:|---:|');
  for (const d of delivered)
    console.log(
      `| Deliverer.drain | ${d.store} | ${n(d.deliveries)} | ${d.wallS.toFixed(1)} | ${d.perSecond.toFixed(0)} | ${d.p50Ms.toFixed(2)} | ${d.p99Ms.toFixed(2)} | ${d.failedAttempts} | ${n(d.verified)} | ${d.peakRssMb.toFixed(0)} |`,
    );
  const stall = Math.max(...computed.map((c) => c.stallMs));
  const heldThroughout = computed.every((c) => c.held === c.claims);
  const clean = delivered.every(
    (d) =>
      d.deliveries === deliveries &&
      d.failedAttempts === 0 &&
      d.attempts === d.deliveries &&
      d.delivered === d.deliveries &&
      d.verified === d.deliveries &&
      d.refused === 0,
  );
  console.log(
    `\ntargets: the run's lease held throughout (another process asking every 10 s): ${heldThroughout ? 'met' : 'NOT met'}; ` +
      `the computing process's event loop never stalls over ${STALL_TARGET_MS} ms: ${stall <= STALL_TARGET_MS ? 'met' : 'NOT met'} (${stall.toFixed(0)} ms); ` +
      `${n(deliveries)} deliveries, each once, 0 failures, all verified: ${clean ? 'met' : 'NOT met'}`,
  );
}

if (values.step === 'receiver') runReceiver();
else if (values.step === 'draw') {
  // The draw of these options is kept: the pair does not change once built.
  if (fs.existsSync(files.draw)) {
    console.log(fs.readFileSync(files.draw, 'utf8'));
    process.exit(0);
  }
  const pair = readJson<ReleasePair>(files.pair);
  const file = (id: string) => path.join(pair.releasesDir, `${id}.sqlite`);
  const drawn = await drawWatchlists({
    olderFile: file(pair.older),
    newerFile: file(pair.newer),
    projects,
    perProject,
    seed,
  });
  fs.writeFileSync(files.entries, JSON.stringify(drawn.projects));
  fs.writeFileSync(
    files.draw,
    JSON.stringify({ seconds: drawn.seconds, pools: drawn.pools, changes: drawn.changes }),
  );
  console.log(fs.readFileSync(files.draw, 'utf8'));
} else if (values.step === 'compute') console.log(JSON.stringify(await computeStep(values.store)));
else if (values.step === 'deliver') console.log(JSON.stringify(await deliverStep(values.store)));
else await main();
