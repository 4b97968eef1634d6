/**
 * The events of a release pair computed on a worker thread (docs/decisions/0034, "Off the serving
 * thread"): the diff and the domain_page pass read both release files for minutes at full scale
 * and are synchronous, so on the serving thread they would stop every request meanwhile. The
 * thread opens its own handles of both files (a swap cannot close them) and hands back the events;
 * the caller's thread stays free to answer and to renew the run's lease.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { NewWatchEvent, WatchEntry } from '../../accounts/watch-types.js';

export interface ComputeInput {
  olderFile: string;
  newerFile: string;
  entries: WatchEntry[];
}

export type ComputeReply = { events: NewWatchEvent[] } | { error: string };

/** Resolves with the pair's events (computeWatchEvents), computed on a thread of its own. */
export function computeEventsOffThread(input: ComputeInput): Promise<NewWatchEvent[]> {
  const url = new URL(`./compute-worker${path.extname(fileURLToPath(import.meta.url))}`, import.meta.url);
  return new Promise((resolve, reject) => {
    const worker = new Worker(url, { workerData: input });
    let reply: ComputeReply | undefined;
    worker.once('message', (m: ComputeReply) => (reply = m));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (reply && 'events' in reply) resolve(reply.events);
      else
        reject(new Error(`watch events thread: ${reply?.error ?? `exited with code ${code} and no result`}`));
    });
  });
}
