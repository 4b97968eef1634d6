/**
 * PTR names for a share of the observed IPs (the addresses of the current answers in dns_state),
 * rotating: each round checks the IPs never checked first, then those checked longest ago, so
 * every observed IP is checked within 1 / share rounds.
 *
 * Per IP the ptr table keeps `names` (sorted, lowercase, no trailing dot), `status` (the outcome
 * of the latest check), `checked_at` (latest check) and `last_confirmed` (latest good answer,
 * positive or negative). As for forward answers, a failed check (timeout, servfail, malformed)
 * keeps the earlier names and last_confirmed. Results are written in batches as they arrive; a
 * PTR phase interrupted at any point resumes with the IPs of its share not yet checked.
 */
import type { StateDb } from '../state.js';
import { parseIp } from '../../shared/ip.js';
import { outcomeClass } from '../../shared/vocabulary.js';
import type { DnsClientStats, QueryClient } from './dns-client.js';
import { emptyOutcomes, pumpQueries, queueAheadFor, type OutcomeCounts } from './query-pump.js';

export interface PtrSummary {
  /** IPs in the current answers. */
  observedIps: number;
  /** IPs the round checks (share of observedIps, at least one when the share is above 0). */
  target: number;
  /** Checked in an earlier run of this round. */
  resumed: number;
  /** Checked in this run. */
  asked: number;
  outcomes: OutcomeCounts;
  seconds: number;
  interrupted: boolean;
  stats: DnsClientStats;
}

export interface PtrOptions {
  ptrShare: number;
  signal?: AbortSignal;
  progress?: (line: string) => void;
  progressEveryMs?: number;
  maxInFlight: number;
  /** Queries per second at most (0: no cap): how far ahead the pump queues. */
  maxQps: number;
  batchSize?: number;
}

/** The name a PTR query asks for: d.c.b.a.in-addr.arpa, or 32 nibbles then ip6.arpa. */
export function reverseName(ip: string): string {
  const parsed = parseIp(ip);
  if (!parsed) throw new Error(`${JSON.stringify(ip)} is not an IP address`);
  if (parsed.version === 4) return `${ip.split('.').reverse().join('.')}.in-addr.arpa`;
  const hex = parsed.value.toString(16).padStart(32, '0');
  return `${[...hex].reverse().join('.')}.ip6.arpa`;
}

const OBSERVED_IPS = `SELECT DISTINCT j.value AS ip FROM dns_state, json_each(dns_state.vals) AS j WHERE dns_state.vals != '[]'`;

export async function collectPtr(
  db: StateDb,
  client: QueryClient,
  roundId: number,
  options: PtrOptions,
  now: () => number,
): Promise<PtrSummary> {
  const started = performance.now();
  let row = db.prepare(`SELECT ptr_started_at, ptr_target FROM collect_round WHERE id = ?`).get(roundId) as {
    ptr_started_at: number | null;
    ptr_target: number | null;
  };
  const share = Math.min(1, Math.max(0, options.ptrShare));
  // Counting the observed IPs reads every state row: not done for a share of 0.
  const observedIps =
    share > 0 || row.ptr_target
      ? (db.prepare(`SELECT count(*) FROM (${OBSERVED_IPS})`).pluck().get() as number)
      : 0;
  if (row.ptr_started_at === null || row.ptr_target === null) {
    const target = share > 0 ? Math.max(1, Math.ceil(observedIps * share)) : 0;
    row = { ptr_started_at: now(), ptr_target: Math.min(target, observedIps) };
    db.prepare(`UPDATE collect_round SET ptr_started_at = ?, ptr_target = ? WHERE id = ?`).run(
      row.ptr_started_at,
      row.ptr_target,
      roundId,
    );
  }
  const startedAt = row.ptr_started_at!;
  const target = row.ptr_target!;
  const resumed = db
    .prepare(`SELECT count(*) FROM ptr WHERE checked_at >= ?`)
    .pluck()
    .get(startedAt) as number;
  const remaining = Math.max(0, target - resumed);
  // Never checked first, then the longest ago; ties in address text order.
  const ips =
    remaining === 0
      ? []
      : (db
          .prepare(
            `SELECT o.ip FROM (${OBSERVED_IPS}) AS o LEFT JOIN ptr AS p ON p.ip = o.ip
             WHERE p.checked_at IS NULL OR p.checked_at < ?
             ORDER BY p.checked_at IS NOT NULL, p.checked_at, o.ip LIMIT ?`,
          )
          .pluck()
          .all(startedAt, remaining) as string[]);

  const upsert = db.prepare(
    `INSERT INTO ptr (ip, names, status, checked_at, last_confirmed) VALUES (?, ?, ?, ?, ?)
     ON CONFLICT (ip) DO UPDATE SET
       status = excluded.status,
       checked_at = excluded.checked_at,
       names = CASE WHEN excluded.last_confirmed IS NULL THEN ptr.names ELSE excluded.names END,
       last_confirmed = coalesce(excluded.last_confirmed, ptr.last_confirmed)`,
  );
  let batch: Array<[string, string, string, number, number | null]> = [];
  const writeBatch = db.transaction((rows: typeof batch) => {
    for (const r of rows) upsert.run(...r);
  });
  const flush = (): void => {
    if (batch.length === 0) return;
    writeBatch(batch);
    batch = [];
  };
  const batchSize = options.batchSize ?? 4096;
  const outcomes = emptyOutcomes();
  const timer = setInterval(flush, 1000);
  let next = 0;
  let pump;
  try {
    pump = await pumpQueries<string>(
      client,
      () => {
        if (next >= ips.length) return null;
        const ip = ips[next++]!;
        return { name: reverseName(ip), type: 'PTR', tag: ip };
      },
      (ip, _name, _type, r) => {
        const t = now();
        const good = outcomeClass(r.outcome) !== 'transient';
        batch.push([ip, JSON.stringify(r.values), r.outcome, t, good ? t : null]);
        if (batch.length >= batchSize) flush();
      },
      {
        label: `collect round ${roundId} PTR`,
        total: target,
        answeredBefore: resumed,
        outcomes,
        queueAhead: queueAheadFor(options.maxInFlight, options.maxQps),
        signal: options.signal,
        progress: options.progress,
        progressEveryMs: options.progressEveryMs,
      },
    );
  } finally {
    clearInterval(timer);
    flush();
  }
  return {
    observedIps,
    target,
    resumed,
    asked: pump.asked,
    outcomes,
    seconds: (performance.now() - started) / 1000,
    interrupted: pump.interrupted,
    stats: { ...client.stats },
  };
}
