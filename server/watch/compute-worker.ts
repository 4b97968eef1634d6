/** The worker thread of compute-thread.ts: the events of one release pair, then it exits. */
import { parentPort, workerData } from 'node:worker_threads';
import { openRelease, type Release } from '../../shared/queries/index.js';
import { computeWatchEvents } from './compute.js';
import type { ComputeInput, ComputeReply } from './compute-thread.js';
import { WatchIndex } from './subjects.js';

const { olderFile, newerFile, entries } = workerData as ComputeInput;
const opened: Release[] = [];
let reply: ComputeReply;
try {
  const older = openRelease(olderFile);
  opened.push(older);
  const newer = openRelease(newerFile);
  opened.push(newer);
  reply = { events: await computeWatchEvents(older, newer, new WatchIndex(entries)) };
} catch (error) {
  reply = { error: (error as Error).message };
} finally {
  for (const r of opened) r.close();
}
parentPort!.postMessage(reply);
