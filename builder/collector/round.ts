/**
 * One collection round (`builder collect`): every seed name and its `www.` name, A and AAAA,
 * against one resolver, through the same answer-interval state machine as the NDJSON import;
 * then PTR queries for a rotating share of the observed IPs (ptr.ts).
 *
 * Resume: answers are committed to collect_batch as they arrive (a batch every few thousand
 * answers or every second) and applied to the in-memory state machine; nothing reaches dns_state
 * until every name has its answers, when the state is saved, the batches deleted and the round
 * moved to its PTR phase in ONE transaction. A round interrupted at any point (Ctrl-C, kill -9,
 * power loss) is resumed by the next collect: the committed answers are applied again to a fresh
 * state machine and only the names without one are asked. The state is never half-applied.
 */
import type { StateDb } from '../state.js';
import { ObservationApplier } from '../observations/applier.js';
import { emptyCounts, type ApplyCounts } from '../dns-state/machine.js';
import type { SaveResult } from '../dns-state/save.js';
import type { ObservationRecord } from '../sources/types.js';
import { normalizeDomain } from '../../shared/domain.js';
import type { Outcome } from '../../shared/vocabulary.js';
import { nowEpoch } from '../../shared/time.js';
import type { DnsClientStats, QueryClient, ResolverAddress } from './dns-client.js';
import { WorkerDnsClient } from './worker-client.js';
import { emptyOutcomes, pumpQueries, queueAheadFor, type OutcomeCounts } from './query-pump.js';
import { collectPtr, type PtrSummary } from './ptr.js';

export interface CollectOptions {
  resolver: ResolverAddress;
  timeoutMs: number;
  retries: number;
  /** Queries per second at most (0: no cap). */
  maxQps: number;
  maxInFlight: number;
  /** Share of the observed IPs whose PTR the round checks (0 to 1). */
  ptrShare: number;
  /** Clock in epoch seconds (tests move it between rounds). */
  now?: () => number;
  /** Aborting stops sending; answers to queries already sent are kept; the round resumes later. */
  signal?: AbortSignal;
  /** Progress lines (queries/s, outcomes, ETA). */
  progress?: (line: string) => void;
  progressEveryMs?: number;
  /** Answers per committed batch (default 4096). */
  batchSize?: number;
  /** Called after each committed batch with the answers of this run so far (tests interrupt here). */
  onBatch?: (answered: number) => void;
}

export interface ForwardSummary {
  /** Names resolved in the round (seed names and their www. names). */
  names: number;
  /** Answers of the round (names × 2 when complete). */
  answers: number;
  /** Answers that came from an earlier, interrupted run of the round. */
  resumedAnswers: number;
  /** Queries asked in this run. */
  asked: number;
  outcomes: OutcomeCounts;
  seconds: number;
  queriesPerSecond: number;
  counts: ApplyCounts;
  stats: DnsClientStats;
  /** The state save (present once the phase completed in this run). */
  save?: SaveResult;
  saveSeconds?: number;
  loadSeconds: number;
}

export interface RoundSummary {
  round: number;
  resumed: boolean;
  /** Stopped before the round was complete; the next collect resumes it. */
  interrupted: boolean;
  forward?: ForwardSummary;
  ptr?: PtrSummary;
  seconds: number;
}

interface RoundRow {
  id: number;
  started_at: number;
  phase: 'forward' | 'ptr' | 'done';
  names: number;
}

/** [name, 0 = A / 1 = AAAA, time, outcome, values, cnames] as stored in collect_batch. */
type StoredAnswer = [string, 0 | 1, number, Outcome, string[], string[]];

const PLAIN_NAME = /^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z](?:[a-z0-9-]{0,61}[a-z0-9])?$/;

/**
 * The names of a round in seed rank order: each seed domain and its `www.` name (a seed name that
 * already starts with `www.` is not prefixed again), normalised as the API normalises names
 * (shared/domain.ts); invalid or duplicate names are left out.
 */
export function roundNames(db: StateDb): string[] {
  const domains = db.prepare(`SELECT domain FROM seed ORDER BY rank, domain`).pluck().all() as string[];
  const seen = new Set<string>();
  const names: string[] = [];
  const add = (name: string): void => {
    let n: string | null = name;
    if (name.length > 253 || !PLAIN_NAME.test(name) || name.includes('xn--')) {
      const r = normalizeDomain(name);
      n = r.ok ? r.domain : null;
    }
    if (n !== null && !seen.has(n)) {
      seen.add(n);
      names.push(n);
    }
  };
  for (const d of domains) {
    add(d);
    if (!d.startsWith('www.')) add(`www.${d}`);
  }
  return names;
}

function toRecord(a: StoredAnswer): ObservationRecord {
  return {
    name: a[0],
    type: a[1] === 1 ? 'AAAA' : 'A',
    time: a[2],
    outcome: a[3],
    values: a[4],
    cnames: a[5],
  };
}

/** Runs (or resumes) one round. */
export async function collectRound(db: StateDb, options: CollectOptions): Promise<RoundSummary> {
  const started = performance.now();
  const now = options.now ?? nowEpoch;
  let round = db
    .prepare(
      `SELECT id, started_at, phase, names FROM collect_round WHERE phase != 'done' ORDER BY id DESC LIMIT 1`,
    )
    .get() as RoundRow | undefined;
  const resumed = round !== undefined;
  const resolverText = `${options.resolver.host}:${options.resolver.port}`;
  let names: string[] | null = null;
  if (!round || round.phase === 'forward') {
    names = roundNames(db);
    if (names.length === 0) {
      throw new Error('the seed list is empty: run "npx builder import tranco top-1m.csv" (or fetch) first');
    }
  }
  if (!round) {
    const startedAt = now();
    const id = db
      .prepare(`INSERT INTO collect_round (started_at, resolver, phase, names) VALUES (?, ?, 'forward', ?)`)
      .run(startedAt, resolverText, names!.length).lastInsertRowid as number;
    round = { id: Number(id), started_at: startedAt, phase: 'forward', names: names!.length };
  }
  // The sockets in a worker thread (worker-client.ts, docs/decisions/0010-collector-worker.md).
  const client = new WorkerDnsClient({
    resolver: options.resolver,
    timeoutMs: options.timeoutMs,
    retries: options.retries,
    maxQps: options.maxQps,
    maxInFlight: options.maxInFlight,
  });
  const summary: RoundSummary = { round: round.id, resumed, interrupted: false, seconds: 0 };
  try {
    if (round.phase === 'forward') {
      summary.forward = await collectForward(db, client, round, names!, options, now);
      if (summary.forward.save === undefined) {
        summary.interrupted = true;
        return summary;
      }
      round.phase = 'ptr';
    }
    if (round.phase === 'ptr') {
      summary.ptr = await collectPtr(db, client, round.id, options, now);
      if (summary.ptr.interrupted) {
        summary.interrupted = true;
        return summary;
      }
      db.prepare(`UPDATE collect_round SET phase = 'done', finished_at = ? WHERE id = ?`).run(
        now(),
        round.id,
      );
    }
    return summary;
  } finally {
    client.close();
    summary.seconds = (performance.now() - started) / 1000;
  }
}

async function collectForward(
  db: StateDb,
  client: QueryClient,
  round: RoundRow,
  names: string[],
  options: CollectOptions,
  now: () => number,
): Promise<ForwardSummary> {
  const loadStarted = performance.now();
  const applier = new ObservationApplier(db);
  const counts = emptyCounts();
  const outcomes = emptyOutcomes();
  // Answers committed by an earlier run of this round: applied again, not asked again.
  const done = new Set<string>();
  let resumedAnswers = 0;
  const batches = db
    .prepare(`SELECT answers FROM collect_batch WHERE round_id = ? ORDER BY id`)
    .pluck()
    .iterate(round.id) as IterableIterator<string>;
  for (const text of batches) {
    const answers = JSON.parse(text) as StoredAnswer[];
    applier.apply(answers.map(toRecord), counts);
    for (const a of answers) {
      done.add(`${a[1]}${a[0]}`);
      outcomes[a[3]]++;
    }
    resumedAnswers += answers.length;
  }
  const loadSeconds = (performance.now() - loadStarted) / 1000;

  const insertBatch = db.prepare(`INSERT INTO collect_batch (round_id, answers) VALUES (?, ?)`);
  const batchSize = options.batchSize ?? 4096;
  let batch: StoredAnswer[] = [];
  let answered = 0;
  const flush = (): void => {
    if (batch.length === 0) return;
    insertBatch.run(round.id, JSON.stringify(batch));
    applier.apply(batch.map(toRecord), counts);
    answered += batch.length;
    batch = [];
    options.onBatch?.(answered);
  };
  const flushTimer = setInterval(flush, 1000);
  let task = 0;
  const total = names.length * 2;
  let pump;
  try {
    pump = await pumpQueries<null>(
      client,
      () => {
        while (task < total) {
          const aaaa = task & 1;
          const name = names[task >> 1]!;
          task++;
          if (resumedAnswers > 0 && done.has(`${aaaa}${name}`)) continue;
          return { name, type: aaaa === 1 ? 'AAAA' : 'A', tag: null };
        }
        return null;
      },
      (_tag, name, type, r) => {
        batch.push([name, type === 'AAAA' ? 1 : 0, now(), r.outcome, r.values, r.cnames]);
        if (batch.length >= batchSize) flush();
      },
      {
        label: `collect round ${round.id}`,
        total,
        answeredBefore: resumedAnswers,
        outcomes,
        queueAhead: queueAheadFor(options.maxInFlight, options.maxQps),
        signal: options.signal,
        progress: options.progress,
        progressEveryMs: options.progressEveryMs,
      },
    );
  } finally {
    clearInterval(flushTimer);
    flush();
  }
  const summary: ForwardSummary = {
    names: names.length,
    answers: resumedAnswers + answered,
    resumedAnswers,
    asked: pump.asked,
    outcomes,
    seconds: pump.seconds,
    queriesPerSecond: pump.seconds > 0 ? pump.asked / pump.seconds : 0,
    counts,
    stats: { ...client.stats },
    loadSeconds,
  };
  if (pump.interrupted) return summary;
  // Every name has its answers: state, batches and phase change in one transaction.
  const saveStarted = performance.now();
  summary.save = db.transaction(() => {
    const save = applier.save();
    db.prepare(`DELETE FROM collect_batch`).run();
    db.prepare(`UPDATE collect_round SET phase = 'ptr', forward_done_at = ?, summary = ? WHERE id = ?`).run(
      now(),
      JSON.stringify({ answers: summary.answers, outcomes, counts }),
      round.id,
    );
    return save;
  })();
  summary.saveSeconds = (performance.now() - saveStarted) / 1000;
  return summary;
}
