/**
 * The builder's Prometheus metrics (docs/decisions/0020): the builder is a cron job, not a
 * process that can be scraped, so each command adds its figures to <STATE_DIR>/builder-metrics.json
 * and rewrites <STATE_DIR>/builder.prom (text format, rendered by prom-client, replaced by rename).
 * `server serve` appends that file to its /metrics when METRICS_PORT is set and it shares the
 * state directory; elsewhere node_exporter's textfile collector can read it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';

export const BUILDER_METRICS_FILE = 'builder.prom';
const STATE_FILE = 'builder-metrics.json';

interface Figures {
  runs: Record<string, { ok: number; failed: number; lastSeconds: number; lastAt: number }>;
  feeds: Record<string, { statuses: Record<string, number>; lastSeconds: number }>;
  collector: Record<string, number>;
  /** Quality-gate drops (files written before them have none): "feed measure outcome" → count. */
  feedDrops?: Record<string, number>;
  /** "measure outcome" → count. */
  releaseDrops?: Record<string, number>;
}

/** A measure of a feed snapshot over the quality gate's limit (drop-gate.ts). */
export interface DropFigure {
  feed: string;
  measure: string;
  /** refused: the previous snapshot kept; accepted: taken with --accept-drop. */
  outcome: 'refused' | 'accepted';
}

/** A measure of a release over the quality gate's limit (release/release-gate.ts). */
export interface ReleaseDropFigure {
  measure: string;
  /** refused: not published; forced: published with --force. */
  outcome: 'refused' | 'forced';
}

function load(stateDir: string): Figures {
  try {
    return JSON.parse(fs.readFileSync(path.join(stateDir, STATE_FILE), 'utf8')) as Figures;
  } catch {
    return { runs: {}, feeds: {}, collector: {} };
  }
}

async function save(stateDir: string, figures: Figures): Promise<void> {
  fs.mkdirSync(stateDir, { recursive: true });
  const registry = new Registry();
  const runs = new Counter({
    name: 'ipscope_builder_runs_total',
    help: 'Builder commands run, by command and result.',
    labelNames: ['command', 'result'],
    registers: [registry],
  });
  const runSeconds = new Gauge({
    name: 'ipscope_builder_last_run_seconds',
    help: 'Duration of the last run of each builder command.',
    labelNames: ['command'],
    registers: [registry],
  });
  const runAt = new Gauge({
    name: 'ipscope_builder_last_run_timestamp_seconds',
    help: 'When the last run of each builder command ended (Unix time).',
    labelNames: ['command'],
    registers: [registry],
  });
  const fetches = new Counter({
    name: 'ipscope_builder_feed_fetches_total',
    help: 'Feed fetches, by feed and outcome (updated, not_modified, kept_previous).',
    labelNames: ['feed', 'status'],
    registers: [registry],
  });
  const feedSeconds = new Gauge({
    name: 'ipscope_builder_feed_last_seconds',
    help: 'Duration of the last import of each feed (0 when nothing new was fetched).',
    labelNames: ['feed'],
    registers: [registry],
  });
  const feedDrops = new Counter({
    name: 'ipscope_builder_feed_drops_total',
    help: 'Feed snapshots that fell by more than the quality gate allows, by feed, measure (rows, ipv4, ipv6) and outcome (refused: the previous snapshot kept; accepted: --accept-drop).',
    labelNames: ['feed', 'measure', 'outcome'],
    registers: [registry],
  });
  const releaseDrops = new Counter({
    name: 'ipscope_builder_release_drops_total',
    help: 'Releases that fell by more than the quality gate allows against the current one, by measure (routed_ipv4, routed_ipv6, current_answers) and outcome (refused: not published; forced: --force).',
    labelNames: ['measure', 'outcome'],
    registers: [registry],
  });
  const answers = new Counter({
    name: 'ipscope_builder_collector_answers_total',
    help: 'DNS answers of the collector, by outcome (positive, nxdomain, nodata, timeout, servfail, malformed).',
    labelNames: ['outcome'],
    registers: [registry],
  });
  for (const [command, r] of Object.entries(figures.runs)) {
    runs.inc({ command, result: 'ok' }, r.ok);
    runs.inc({ command, result: 'failed' }, r.failed);
    runSeconds.set({ command }, r.lastSeconds);
    runAt.set({ command }, r.lastAt);
  }
  for (const [feed, f] of Object.entries(figures.feeds)) {
    for (const [status, n] of Object.entries(f.statuses)) fetches.inc({ feed, status }, n);
    feedSeconds.set({ feed }, f.lastSeconds);
  }
  for (const [outcome, n] of Object.entries(figures.collector)) answers.inc({ outcome }, n);
  for (const [key, n] of Object.entries(figures.feedDrops ?? {})) {
    const [feed, measure, outcome] = key.split(' ') as [string, string, string];
    feedDrops.inc({ feed, measure, outcome }, n);
  }
  for (const [key, n] of Object.entries(figures.releaseDrops ?? {})) {
    const [measure, outcome] = key.split(' ') as [string, string];
    releaseDrops.inc({ measure, outcome }, n);
  }
  const write = (name: string, text: string) => {
    const tmp = path.join(stateDir, `.${name}.${process.pid}.tmp`);
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, path.join(stateDir, name));
  };
  write(STATE_FILE, `${JSON.stringify(figures)}\n`);
  write(BUILDER_METRICS_FILE, await registry.metrics());
}

/** Runs one builder command and records its result and duration (the command's own result kept). */
export async function measuredRun<T>(
  stateDir: string,
  command: string,
  run: () => T | Promise<T>,
): Promise<T> {
  const started = performance.now();
  let ok = false;
  try {
    const result = await run();
    ok = process.exitCode === undefined || process.exitCode === 0;
    return result;
  } finally {
    const figures = load(stateDir);
    const entry = (figures.runs[command] ??= { ok: 0, failed: 0, lastSeconds: 0, lastAt: 0 });
    if (ok) entry.ok += 1;
    else entry.failed += 1;
    entry.lastSeconds = (performance.now() - started) / 1000;
    entry.lastAt = Math.floor(Date.now() / 1000);
    await save(stateDir, figures).catch((error: Error) =>
      console.error(`builder: could not write ${BUILDER_METRICS_FILE}: ${error.message}`),
    );
  }
}

/**
 * Adds the fetch outcome and duration of each feed, the collector's outcome counts and the
 * quality gates' drops.
 */
export async function recordFigures(
  stateDir: string,
  add: {
    feeds?: Array<{ feed: string; status: string; seconds: number }>;
    collector?: Record<string, number>;
    drops?: DropFigure[];
    releaseDrops?: ReleaseDropFigure[];
  },
): Promise<void> {
  const figures = load(stateDir);
  for (const { feed, status, seconds } of add.feeds ?? []) {
    const entry = (figures.feeds[feed] ??= { statuses: {}, lastSeconds: 0 });
    entry.statuses[status] = (entry.statuses[status] ?? 0) + 1;
    entry.lastSeconds = seconds;
  }
  for (const [outcome, n] of Object.entries(add.collector ?? {}))
    figures.collector[outcome] = (figures.collector[outcome] ?? 0) + n;
  for (const { feed, measure, outcome } of add.drops ?? []) {
    const key = `${feed} ${measure} ${outcome}`;
    (figures.feedDrops ??= {})[key] = (figures.feedDrops[key] ?? 0) + 1;
  }
  for (const { measure, outcome } of add.releaseDrops ?? []) {
    const key = `${measure} ${outcome}`;
    (figures.releaseDrops ??= {})[key] = (figures.releaseDrops[key] ?? 0) + 1;
  }
  await save(stateDir, figures);
}
