/** The worker thread of compute-thread.ts: the events of one release pair, in chunks, then it exits. */
import { parentPort, workerData } from 'node:worker_threads';
import { openRelease, type Release } from '../../shared/queries/index.js';
import { computeWatchEvents } from './compute.js';
import { CHUNK, type ComputeInput, type ComputeMessage } from './compute-thread.js';
import { WatchIndex } from './subjects.js';

const port = parentPort!;
const send = (m: ComputeMessage) => port.postMessage(m);
const { olderFile, newerFile, entries, chunk = CHUNK } = workerData as ComputeInput;
const opened: Release[] = [];
try {
  const older = openRelease(olderFile);
  opened.push(older);
  const newer = openRelease(newerFile);
  opened.push(newer);
  const events = await computeWatchEvents(older, newer, new WatchIndex(entries));
  for (const r of opened.splice(0)) r.close();
  for (let i = 0; i < events.length; i += chunk) {
    send({ events: events.slice(i, i + chunk) });
    await new Promise((resolve) => port.once('message', resolve));
  }
  send({ done: true });
} catch (error) {
  send({ error: (error as Error).message });
} finally {
  for (const r of opened) r.close();
  port.close();
}
