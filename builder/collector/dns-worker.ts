/**
 * The worker thread of WorkerDnsClient (worker-client.ts): runs a DnsClient (socket, retries, TCP
 * fallback, caps) on the queries the main thread posts and posts the results back in batches (every
 * few milliseconds, as one JSON string), so the main thread pays one message and one wake-up per
 * batch and the sends and receives run beside its state work.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { OUTCOMES, type Outcome } from '../../shared/vocabulary.js';
import { DnsClient, type DnsClientOptions, type QueryResult } from './dns-client.js';
import type { ToWorker, FromWorker } from './worker-client.js';

const TYPES = ['A', 'AAAA', 'PTR'] as const;
const OUTCOME_CODE = new Map<Outcome, number>(OUTCOMES.map((o, i) => [o, i]));
/** Results posted at once at most. */
const MAX_BATCH = 512;
/** Time a result waits for others before it is posted, in milliseconds. */
const BATCH_MS = 3;

const port = parentPort!;
const client = new DnsClient(workerData as DnsClientOptions);
let results: Array<number | string[]> = [];
let scheduled = false;

function post(): void {
  scheduled = false;
  if (results.length === 0) return;
  const s = client.stats;
  // One string: cheaper to copy across threads than the arrays themselves.
  const message: FromWorker = {
    results: JSON.stringify(results),
    stats: [s.sent, s.retries, s.tcp, s.stray],
  };
  results = [];
  port.postMessage(message);
}

function onResult(seq: number, r: QueryResult): void {
  results.push(seq, OUTCOME_CODE.get(r.outcome)!, r.attempts * 2 + (r.tcp ? 1 : 0), r.values, r.cnames);
  if (results.length >= MAX_BATCH * 5) post();
  else if (!scheduled) {
    scheduled = true;
    setTimeout(post, BATCH_MS);
  }
}

port.on('message', (m: ToWorker) => {
  if (m.close) {
    client.close();
    port.close();
    return;
  }
  for (let i = 0; i < m.names.length; i++) {
    const seq = m.first + i;
    client.query(m.names[i]!, TYPES[m.types[i]!]!, (r) => onResult(seq, r));
  }
});
