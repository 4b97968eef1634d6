/**
 * Runs a list of queries through a DnsClient with a bounded queue, stops early when asked (the
 * queries already sent still get their answers), and reports progress: queries/s, outcomes so far
 * and the time left.
 */
import { OUTCOMES, type Outcome } from '../../shared/vocabulary.js';
import type { QueryClient, QueryResult, QueryType } from './dns-client.js';

export type OutcomeCounts = Record<Outcome, number>;

export function emptyOutcomes(): OutcomeCounts {
  return Object.fromEntries(OUTCOMES.map((o) => [o, 0])) as OutcomeCounts;
}

export function formatOutcomes(o: OutcomeCounts): string {
  return OUTCOMES.map((k) => `${k} ${o[k].toLocaleString('en-US')}`).join(', ');
}

/**
 * Queries to keep queued in the client besides those in flight (PumpOptions.queueAhead). The
 * client's workers return results every few milliseconds and the pump tops their queues up only
 * then, so a short queue can run dry between two top-ups (the likely reason, not measured, why
 * `make bench-collect` with two DNS threads did 145,809 q/s with 4 × maxInFlight and
 * 156,999–158,280 with 16 ×). Under a
 * queries-per-second cap, at most a quarter of a second of queries more, so that an interrupted
 * round, which lets the queued queries finish, still stops within about that.
 */
export function queueAheadFor(maxInFlight: number, maxQps: number): number {
  const ahead = maxInFlight * 16;
  return maxQps > 0 ? Math.min(ahead, maxInFlight + Math.ceil(maxQps / 4)) : ahead;
}

export interface PumpOptions {
  /** Label of the progress lines. */
  label: string;
  /** Queries of the whole phase, for the ETA (those answered in an earlier run included). */
  total: number;
  /** Answered in an earlier run of the same phase. */
  answeredBefore: number;
  /** Outcomes so far (updated in place). */
  outcomes: OutcomeCounts;
  /** Queries kept queued in the client beyond those it may have in flight. */
  queueAhead: number;
  signal?: AbortSignal;
  progress?: (line: string) => void;
  progressEveryMs?: number;
}

export interface PumpResult {
  /** Queries asked and answered in this run. */
  asked: number;
  seconds: number;
  interrupted: boolean;
}

/**
 * Asks next() for queries until it returns null (or the signal aborts) and hands every result to
 * onResult, in the order the answers arrive.
 */
export function pumpQueries<T>(
  client: QueryClient,
  next: () => { name: string; type: QueryType; tag: T } | null,
  onResult: (tag: T, name: string, type: QueryType, result: QueryResult) => void,
  options: PumpOptions,
): Promise<PumpResult> {
  const started = performance.now();
  let asked = 0;
  let answered = 0;
  let exhausted = false;
  let stopped = options.signal?.aborted ?? false;
  const everyMs = options.progressEveryMs ?? 2000;
  const report = (final: boolean): void => {
    if (!options.progress) return;
    const seconds = (performance.now() - started) / 1000;
    const rate = seconds > 0 ? answered / seconds : 0;
    const done = options.answeredBefore + answered;
    const left = Math.max(0, options.total - done);
    const eta = rate > 0 ? `, ETA ${Math.ceil(left / rate)} s` : '';
    options.progress(
      `${options.label}: ${done.toLocaleString('en-US')}/${options.total.toLocaleString('en-US')} queries, ` +
        `${Math.round(rate).toLocaleString('en-US')} q/s, ${formatOutcomes(options.outcomes)}${final ? '' : eta}`,
    );
  };
  return new Promise((resolve) => {
    const timer = setInterval(() => report(false), everyMs);
    const onAbort = (): void => {
      stopped = true;
      fill();
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    let finished = false;
    function fill(): void {
      while (!stopped && !exhausted && client.pending < options.queueAhead) {
        const q = next();
        if (q === null) {
          exhausted = true;
          break;
        }
        asked++;
        client.query(q.name, q.type, (result) => {
          answered++;
          options.outcomes[result.outcome]++;
          onResult(q.tag, q.name, q.type, result);
          fill();
        });
      }
      if (!finished && (stopped || exhausted) && answered === asked) {
        finished = true;
        clearInterval(timer);
        options.signal?.removeEventListener('abort', onAbort);
        report(true);
        resolve({ asked, seconds: (performance.now() - started) / 1000, interrupted: stopped && !exhausted });
      }
    }
    fill();
  });
}
