/**
 * A DnsClient in worker threads (dns-worker.ts), with the same interface: queries are posted to a
 * worker in batches (all those queued in one turn of the event loop), and results come back in
 * batches. Sending a datagram to a resolver on the same machine costs the sender most of the
 * receiver's network stack too (the profile had a third of the collector's time in dgram's send);
 * in a worker it runs beside the main thread's state machine and SQLite batches instead of between
 * them (docs/decisions/0010-collector-worker.md).
 *
 * With more than one worker (`threads`), each has its own socket and its share of the caps (in
 * flight, queries per second), so the resolver sees the same limits as from one; each turn's
 * queries are split so that the workers' pending queries come out even. Retries, TCP fallback, the caps and the outcome of
 * every answer are DnsClient's, unchanged.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { Worker } from 'node:worker_threads';
import { OUTCOMES } from '../../shared/vocabulary.js';
import type { DnsClientOptions, DnsClientStats, QueryClient, QueryResult, QueryType } from './dns-client.js';

/** Main thread → worker: queries numbered first, first + 1, …; or close. */
export type ToWorker = { close?: false; first: number; names: string[]; types: number[] } | { close: true };

/** Worker → main thread: per result [seq, outcome index, attempts × 2 + tcp, values, cnames]. */
export interface FromWorker {
  /** JSON of the results. */
  results: string;
  /** sent, retries, tcp, stray of the worker's DnsClient. */
  stats: [number, number, number, number];
}

type Callback = (result: QueryResult) => void;

const TYPE_CODE: Record<QueryType, number> = { A: 0, AAAA: 1, PTR: 2 };

/**
 * DNS worker threads by default: two where the machine has more than one core (with one, its
 * socket worker was the busiest thread of a round, at 82 % of a core, with the main thread at 28 %
 * and a core's worth idle; docs/decisions/0010-collector-worker.md), else one.
 */
export function defaultDnsThreads(): number {
  return os.availableParallelism() > 1 ? 2 : 1;
}

/** `total` split into `parts` shares that add up to it (the first ones one more). */
function shares(total: number, parts: number): number[] {
  return Array.from({ length: parts }, (_, i) => Math.floor(total / parts) + (i < total % parts ? 1 : 0));
}

interface DnsThread {
  worker: Worker;
  /** Queries posted to it and not answered yet. */
  pending: number;
  /** Its DnsClient's last stats: sent, retries, tcp, stray. */
  stats: [number, number, number, number];
}

export interface WorkerDnsClientOptions extends DnsClientOptions {
  /** Worker threads, each with its own socket (default: defaultDnsThreads()). */
  threads?: number;
}

export class WorkerDnsClient implements QueryClient {
  readonly stats: DnsClientStats = { sent: 0, retries: 0, tcp: 0, stray: 0 };
  private readonly threads: DnsThread[];
  private readonly callbacks = new Map<number, Callback>();
  private nextSeq = 0;
  private outFirst = 0;
  private outNames: string[] = [];
  private outTypes: number[] = [];
  private scheduled = false;
  private closed = false;

  constructor(options: WorkerDnsClientOptions) {
    const { threads: asked, ...clientOptions } = options;
    // Never more threads than units of the in-flight cap: each needs at least one.
    const count = Math.max(1, Math.min(asked ?? defaultDnsThreads(), options.maxInFlight));
    const inFlight = shares(options.maxInFlight, count);
    const url = new URL(`./dns-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
    this.threads = inFlight.map((maxInFlight) => {
      const workerData: DnsClientOptions = {
        ...clientOptions,
        maxInFlight,
        maxQps: options.maxQps > 0 ? options.maxQps / count : 0,
      };
      const thread: DnsThread = { worker: new Worker(url, { workerData }), pending: 0, stats: [0, 0, 0, 0] };
      thread.worker.on('message', (m: FromWorker) => this.onResults(thread, m));
      // An error in a worker is thrown here ('error' has no listener): the round stops and the
      // next collect resumes it, as with an error in the main thread.
      thread.worker.on('exit', (code) => {
        if (!this.closed) throw new Error(`a DNS worker thread exited (code ${code}) with queries pending`);
      });
      thread.worker.unref();
      return thread;
    });
  }

  /** Queries queued or in flight. */
  get pending(): number {
    return this.callbacks.size;
  }

  /** Queues a query; the callback gets its result (every query gets exactly one). */
  query(name: string, type: QueryType, callback: Callback): void {
    if (this.closed) throw new Error('DnsClient is closed');
    // Keep the process alive while queries are out.
    if (this.callbacks.size === 0) for (const t of this.threads) t.worker.ref();
    const seq = this.nextSeq++;
    this.callbacks.set(seq, callback);
    if (this.outNames.length === 0) this.outFirst = seq;
    this.outNames.push(name);
    this.outTypes.push(TYPE_CODE[type]);
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => this.post());
    }
  }

  /** The same as a promise. */
  resolve(name: string, type: QueryType): Promise<QueryResult> {
    return new Promise((resolve) => this.query(name, type, resolve));
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.threads) {
      t.worker.postMessage({ close: true } satisfies ToWorker);
      void t.worker.terminate();
    }
  }

  /**
   * This turn's queries, split between the workers so that their pending queries come out as even
   * as they can (consecutive numbers to each: a message carries its first number).
   */
  private post(): void {
    this.scheduled = false;
    const names = this.outNames;
    const types = this.outTypes;
    if (names.length === 0 || this.closed) return;
    this.outNames = [];
    this.outTypes = [];
    const threads = this.threads;
    let total = names.length;
    for (const t of threads) total += t.pending;
    const even = Math.ceil(total / threads.length);
    let from = 0;
    for (let i = 0; i < threads.length && from < names.length; i++) {
      const thread = threads[i]!;
      const last = i === threads.length - 1;
      const to = last ? names.length : Math.min(names.length, from + Math.max(0, even - thread.pending));
      if (to === from) continue;
      const message: ToWorker = {
        first: this.outFirst + from,
        names: names.slice(from, to),
        types: types.slice(from, to),
      };
      thread.pending += to - from;
      thread.worker.postMessage(message);
      from = to;
    }
  }

  private onResults(thread: DnsThread, m: FromWorker): void {
    thread.stats = m.stats;
    const s = this.stats;
    s.sent = s.retries = s.tcp = s.stray = 0;
    for (const t of this.threads) {
      s.sent += t.stats[0];
      s.retries += t.stats[1];
      s.tcp += t.stats[2];
      s.stray += t.stats[3];
    }
    const r = JSON.parse(m.results) as Array<number | string[]>;
    thread.pending -= r.length / 5;
    for (let i = 0; i < r.length; i += 5) {
      const seq = r[i] as number;
      const callback = this.callbacks.get(seq)!;
      this.callbacks.delete(seq);
      const attempts = r[i + 2] as number;
      callback({
        outcome: OUTCOMES[r[i + 1] as number]!,
        values: r[i + 3] as string[],
        cnames: r[i + 4] as string[],
        attempts: attempts >> 1,
        tcp: (attempts & 1) === 1,
      });
    }
    if (this.callbacks.size === 0) for (const t of this.threads) t.worker.unref();
  }
}
