/**
 * The primary process of `server serve --workers N` (docs/decisions/0019): forks N workers that
 * share the port (node:cluster), owns what must be counted once (without Redis: the in-process
 * counters with their usage ledger, and the refused-key throttle), leads the release swaps so
 * that every worker serves a new release from the same moment, restarts a worker that dies, and
 * on SIGTERM or SIGINT drains every worker before it writes the last counts and exits.
 */
import cluster, { type Worker } from 'node:cluster';
import os from 'node:os';
import { createServerLogger } from '../observability/log.js';
import { startClusterMetricsServer, type MetricsListener } from '../observability/metrics.js';
import { RateLimiterClusterMaster } from 'rate-limiter-flexible';
import type { Settings } from '../../shared/config.js';
import { openConfiguredAccountsStore } from '../../accounts/open.js';
import type { MemoryCounters } from '../limits/memory-counters.js';
import { embeddedCounters, throttledLog } from '../limits/from-settings.js';
import { CounterHost } from './counter-host.js';
import { LEASE_UNITS } from './ipc-counters.js';
import { isOurs, type PrimaryMessage, type WorkerMessage } from './messages.js';
import { ReleaseRounds } from './release-rounds.js';

/** How long a drained worker may take to finish its requests before it is killed. */
const DRAIN_TIMEOUT_MS = 30_000;

/** The WORKERS setting as a process count: 0 is one per core available to this process. */
export function workerCount(setting: number): number {
  return setting === 0 ? os.availableParallelism() : setting;
}

export async function runPrimary(
  settings: Settings,
  count: number,
  out: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<void> {
  const logger = createServerLogger({ level: settings.LOG_LEVEL, base: { service: 'ipscope-server' } }).child(
    {
      component: 'cluster',
    },
  );
  const log = throttledLog((message, err) =>
    err === undefined ? logger.info(message) : logger.warn({ err }, message),
  );
  // Opened (and created or upgraded) here first, so that no two workers race to create it.
  const store = openConfiguredAccountsStore(settings);
  const shared = !settings.REDIS_URL;
  let counters: MemoryCounters | null = null;
  if (shared) {
    if (settings.METERING === 'on') counters = embeddedCounters(settings, store, log);
    new RateLimiterClusterMaster();
  }
  // Units are lent to workers only while the budget holds more than 4 leases per worker: the last
  // units of every limit are taken one at a time.
  const host = counters ? new CounterHost(counters, { headroom: 4 * LEASE_UNITS * count }) : null;

  const listening = new Set<Worker>();
  const rounds = new ReleaseRounds<Worker>(() => listening, sendTo);
  let stopping = false;
  let crashes: number[] = [];
  let announced = false;
  let announce: (url: string) => void = () => {};
  const firstListening = new Promise<string>((resolve) => (announce = resolve));

  const fork = () => {
    const worker = cluster.fork();
    const peer = host?.connect((message) => sendTo(worker, message));
    worker.on('exit', () => peer?.closed());
    worker.on('message', (message: unknown) => {
      if (!isOurs<WorkerMessage>(message)) return;
      if (message.ipscope === 'counters') {
        peer?.handle(message);
      } else if (message.ipscope === 'listening') {
        listening.add(worker);
        if (listening.size === count && !announced) {
          announced = true;
          announce(message.url);
        } else if (announced) {
          rounds.start(); // a restarted worker opened CURRENT itself: bring the others along
        }
      } else if (message.ipscope === 'release-staged') {
        rounds.staged(worker, message);
      } else if (message.ipscope === 'release-held') {
        rounds.held(worker, message.round);
      }
    });
    return worker;
  };

  cluster.on('exit', (worker, code, signal) => {
    listening.delete(worker);
    rounds.gone(worker);
    if (stopping) return;
    if (!announced) {
      // A worker that cannot start (port taken, unreadable settings) would fail again: give up.
      console.error(
        `server: a worker exited (${signal ?? `code ${code}`}) before all ${count} were listening; stopping`,
      );
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(1);
    }
    const now = Date.now();
    crashes = [...crashes.filter((t) => now - t < 60_000), now];
    const delay = Math.min(5_000, 100 * 2 ** (crashes.length - 1));
    logger.error(
      { pid: worker.process.pid, code, signal, restart_in_ms: delay },
      `worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); starting another`,
    );
    setTimeout(() => {
      if (!stopping) fork();
    }, delay).unref();
  });

  for (let i = 0; i < count; i++) fork();
  const url = await firstListening;
  // The same first line as a single process (scripts read the URL from it), then the workers.
  out(`listening on ${url}`);
  out(`workers: ${count} (pids ${[...listening].map((w) => w.process.pid).join(', ')})`);
  // /metrics of all workers together: the primary asks each for its numbers at every scrape.
  let metrics: MetricsListener | null = null;
  if (settings.METRICS_PORT !== '') {
    try {
      metrics = await startClusterMetricsServer({
        stateDir: settings.STATE_DIR,
        host: settings.HOST,
        port: Number(settings.METRICS_PORT),
      });
    } catch (error) {
      console.error(
        `server: cannot listen on METRICS_PORT ${settings.METRICS_PORT}: ${(error as Error).message}`,
      );
      stopping = true;
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(1);
    }
    out(`metrics on ${metrics.url}`);
  }
  const poll = setInterval(() => rounds.start(), settings.RELEASE_POLL_MS);
  poll.unref();

  let signals = 0;
  const shutdown = async (signal: NodeJS.Signals) => {
    signals += 1;
    if (signals > 1) {
      console.error(`server: ${signal} again, exiting without waiting`);
      for (const w of Object.values(cluster.workers ?? {})) w?.process.kill('SIGKILL');
      process.exit(1);
    }
    console.error(`server: ${signal}, draining ${listening.size} workers (waiting for requests in flight)`);
    stopping = true;
    clearInterval(poll);
    rounds.stop();
    const workers = Object.values(cluster.workers ?? {}).filter((w): w is Worker => w !== undefined);
    await Promise.all(workers.map((w) => drainWorker(w)));
    await metrics?.close();
    try {
      await counters?.close();
    } catch (error) {
      console.error(`server: counted requests could not be written at shutdown: ${(error as Error).message}`);
    }
    await store.close();
    process.exit(0);
  };
  process.on('SIGTERM', (s) => void shutdown(s));
  process.on('SIGINT', (s) => void shutdown(s));
}

function sendTo(worker: Worker, message: PrimaryMessage): void {
  if (worker.isConnected()) worker.send(message);
}

/**
 * Asks a worker to finish its requests and exit; kills it after DRAIN_TIMEOUT_MS. Resolves once it
 * exited and its IPC channel is read to the end (its last counter batch is applied by then).
 */
function drainWorker(worker: Worker): Promise<void> {
  const exited = worker.isDead()
    ? Promise.resolve()
    : new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  const disconnected = worker.isConnected()
    ? new Promise<void>((resolve) => worker.once('disconnect', () => resolve()))
    : Promise.resolve();
  const timer = setTimeout(() => worker.process.kill('SIGKILL'), DRAIN_TIMEOUT_MS);
  sendTo(worker, { ipscope: 'drain' });
  return Promise.all([exited, disconnected]).then(() => clearTimeout(timer));
}
