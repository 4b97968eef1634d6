/**
 * The events of a release pair computed on a worker thread (docs/decisions/0034, "Off the serving
 * thread"): the diff and the domain_page pass read both release files for minutes at full scale
 * and are synchronous, so on the serving thread they would stop every request meanwhile. The
 * thread opens its own handles of both files (a swap cannot close them) and hands back the events;
 * the caller's thread stays free to answer and to renew the run's lease.
 *
 * The events come back in chunks of CHUNK, the next one sent only once this thread has taken the
 * last (an acknowledgement): 403,632 events in one message took this thread 640–820 ms to
 * deserialize, one stall; chunks sent all at once are taken in one turn too (550 ms); with the
 * acknowledgement the longest stall was 47–73 ms (docs/performance.md, bench-watch).
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { NewWatchEvent, WatchEntry } from '../../accounts/watch-types.js';

export interface ComputeInput {
  olderFile: string;
  newerFile: string;
  entries: WatchEntry[];
  /** Events per message (default CHUNK). */
  chunk?: number;
}

/** Events per message from the thread. */
export const CHUNK = 5_000;

/** From the thread: a chunk (answer `next` for the following one), the end, or the failure. */
export type ComputeMessage = { events: NewWatchEvent[] } | { done: true } | { error: string };

/** Resolves with the pair's events (computeWatchEvents), computed on a thread of its own. */
export function computeEventsOffThread(input: ComputeInput): Promise<NewWatchEvent[]> {
  const url = new URL(`./compute-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  return new Promise((resolve, reject) => {
    const worker = new Worker(url, { workerData: input });
    const events: NewWatchEvent[] = [];
    let end: { done: true } | { error: string } | undefined;
    worker.on('message', (m: ComputeMessage) => {
      if ('events' in m) {
        for (const e of m.events) events.push(e);
        worker.postMessage('next');
      } else end = m;
    });
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (end && 'done' in end) resolve(events);
      else
        reject(new Error(`watch events thread: ${end?.error ?? `exited with code ${code} and no result`}`));
    });
  });
}
