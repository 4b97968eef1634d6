/**
 * The release build's two threads: what buildRelease (build.ts) and its worker thread
 * (release-worker.ts) send each other, and the main thread's side of the worker: starting it,
 * posting to it, and waiting for what it sends back.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker, receiveMessageOnPort } from 'node:worker_threads';
import type { BuildOptions, BuildResult } from './build-types.js';
import type { SharedDomainNames } from './dns-tables/domains.js';
import type { IntervalArrays, Intervals } from './dns-tables/intervals.js';
import { PackedText } from './dns-tables/packed-text.js';

/** The tables the worker thread writes. */
export const WORKER_TABLES = [
  'provider_range',
  'provider_segment',
  'asn_range',
  'asn_segment',
  'asn',
  'domain_hosting',
  // Its last addresses only (ip-summaries.ts workerSummariesFrom): appended to the main thread's.
  'ip_summary',
] as const;

/**
 * domain_page is written by the worker thread into a file of its own, `${file}.pages`, closed as
 * soon as it is complete: the main thread copies it in while the worker writes its last tables.
 */
export function pagesFileOf(file: string): string {
  return `${file}.pages`;
}

/** Intervals as the worker receives them: the arrays in shared memory, the addresses packed. */
export interface SharedIntervals extends Omit<Intervals, 'values'> {
  /** The addresses, newline-separated (PackedText bytes). */
  valuesText: Uint8Array;
}

export function shareIntervals(iv: Intervals): SharedIntervals {
  const { values, ...arrays } = iv;
  return { ...arrays, valuesText: PackedText.of(values).bytes };
}

export function unshareIntervals(shared: SharedIntervals): { iv: IntervalArrays; values: PackedText } {
  const { valuesText, ...arrays } = shared;
  return {
    iv: arrays,
    values: new PackedText(Buffer.from(valuesText.buffer, valuesText.byteOffset, valuesText.length)),
  };
}

/** Messages from buildRelease to the worker, in this order. */
export type WorkerInput =
  { nameToDomain: Int32Array; domainNames: SharedDomainNames } | { intervals: SharedIntervals };

/**
 * What the worker sends back (release-worker.ts): the result, then flag 0 is set (on failure
 * too). Flag 1 is 1 once the pages file is complete, 2 when the worker failed before.
 */
export interface WorkerResult {
  error?: string;
  phases?: BuildResult['phases'];
  /** RangeTables.contributors. */
  contributors?: string[];
  /** max(last_observed) of the DNS state (null: no state). */
  lastObserved?: number | null;
}

/**
 * Starts release-worker.ts on `file`. buildRelease is synchronous: pages() and wait() block on
 * shared flags the worker sets (on failure too).
 */
export function startReleaseWorker(
  file: string,
  options: BuildOptions,
): {
  post: (m: WorkerInput) => void;
  /** Waits until the pages file is complete; false: the worker failed (wait() says why). */
  pages: () => boolean;
  wait: () => Required<Pick<WorkerResult, 'phases' | 'contributors' | 'lastObserved'>>;
  stop: () => void;
} {
  const flag = new Int32Array(new SharedArrayBuffer(8));
  const toWorker = new MessageChannel();
  const fromWorker = new MessageChannel();
  const url = new URL(`./release-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  const worker = new Worker(url, {
    workerData: {
      file,
      pagesFile: pagesFileOf(file),
      stateFile: options.stateFile,
      asnMappingPreference: options.asnMappingPreference,
      ownCategoryThreshold: options.ownCategoryThreshold,
      builtAt: options.builtAt,
      flag,
      input: toWorker.port2,
      output: fromWorker.port2,
    },
    transferList: [toWorker.port2, fromWorker.port2],
  });
  worker.unref();
  let stopped = false;
  const stop = () => {
    if (stopped) return;
    stopped = true;
    toWorker.port1.close();
    fromWorker.port1.close();
    void worker.terminate();
  };
  return {
    stop,
    post: (m) => toWorker.port1.postMessage(m),
    pages: () => {
      Atomics.wait(flag, 1, 0);
      return Atomics.load(flag, 1) === 1;
    },
    wait: () => {
      Atomics.wait(flag, 0, 0);
      const m = receiveMessageOnPort(fromWorker.port1)?.message as WorkerResult | undefined;
      stop();
      if (!m || m.error !== undefined) throw new Error(`release worker: ${m?.error ?? 'no result'}`);
      return { phases: m.phases!, contributors: m.contributors!, lastObserved: m.lastObserved ?? null };
    },
  };
}
