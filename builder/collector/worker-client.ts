/**
 * A DnsClient in a worker thread (dns-worker.ts), with the same interface: queries are posted to
 * the worker in batches (all those queued in one turn of the event loop), and results come back in
 * batches. Sending a datagram to a resolver on the same machine costs the sender most of the
 * receiver's network stack too (the profile had a third of the collector's time in dgram's send);
 * in a worker it runs beside the main thread's state machine and SQLite batches instead of between
 * them (docs/decisions/0010-collector-worker.md).
 *
 * Retries, TCP fallback, the caps and the outcome of every answer are DnsClient's, unchanged.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
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

export class WorkerDnsClient implements QueryClient {
  readonly stats: DnsClientStats = { sent: 0, retries: 0, tcp: 0, stray: 0 };
  private readonly worker: Worker;
  private readonly callbacks = new Map<number, Callback>();
  private nextSeq = 0;
  private outFirst = 0;
  private outNames: string[] = [];
  private outTypes: number[] = [];
  private scheduled = false;
  private closed = false;

  constructor(options: DnsClientOptions) {
    const url = new URL(`./dns-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
    this.worker = new Worker(url, { workerData: options });
    this.worker.on('message', (m: FromWorker) => this.onResults(m));
    // An error in the worker is thrown here ('error' has no listener): the round stops and the
    // next collect resumes it, as with an error in the main thread.
    this.worker.on('exit', (code) => {
      if (!this.closed) throw new Error(`the DNS worker thread exited (code ${code}) with queries pending`);
    });
    this.worker.unref();
  }

  /** Queries queued or in flight. */
  get pending(): number {
    return this.callbacks.size;
  }

  /** Queues a query; the callback gets its result (every query gets exactly one). */
  query(name: string, type: QueryType, callback: Callback): void {
    if (this.closed) throw new Error('DnsClient is closed');
    // Keep the process alive while queries are out.
    if (this.callbacks.size === 0) this.worker.ref();
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
    this.worker.postMessage({ close: true } satisfies ToWorker);
    void this.worker.terminate();
  }

  private post(): void {
    this.scheduled = false;
    if (this.outNames.length === 0 || this.closed) return;
    const message: ToWorker = { first: this.outFirst, names: this.outNames, types: this.outTypes };
    this.outNames = [];
    this.outTypes = [];
    this.worker.postMessage(message);
  }

  private onResults(m: FromWorker): void {
    const s = this.stats;
    [s.sent, s.retries, s.tcp, s.stray] = m.stats;
    const r = JSON.parse(m.results) as Array<number | string[]>;
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
    if (this.callbacks.size === 0) this.worker.unref();
  }
}
