/**
 * One worker of `server serve --workers N`: the whole server (API, MCP, console) over the
 * release, opened read-only by this process; the counters and the refused-key throttle are the
 * primary's (without Redis), and the release swaps when the primary says so, in every worker
 * together. Each worker also runs the watch service (server/watch/service.ts): the run lease picks
 * the one process that computes a new release's events, the outbox lease the one that attempts
 * each delivery. SIGINT is the primary's to handle; SIGTERM or the primary's `drain` stop this worker
 * gracefully.
 */
import type { Settings } from '../../shared/config.js';
import { serve, type WorkerRole } from '../serve.js';
import { answerClusterScrapes } from '../observability/metrics.js';
import { holdRequests } from './hold.js';
import { IpcCounters, type IpcChannel } from './ipc-counters.js';
import { isOurs, type PrimaryMessage, type WorkerMessage } from './messages.js';

/** A hold the primary does not end (it is gone, or stuck) ends by itself after this long. */
const HOLD_LIMIT_MS = 2_000;

function send(message: WorkerMessage): void {
  if (process.connected) process.send!(message);
}

export async function runWorker(settings: Settings): Promise<void> {
  if (settings.METRICS_PORT !== '') answerClusterScrapes();
  // With Redis every worker counts there, like a replica; without, the primary counts for all.
  const role: WorkerRole = settings.REDIS_URL
    ? {}
    : {
        primary: { counters: new IpcCounters(process as unknown as IpcChannel) },
      };
  const server = await serve(settings, () => {}, undefined, role);
  // The requests held while the workers change release (the primary ends a hold within 1 s).
  let letGo: (() => void) | null = null;
  const endHold = () => {
    letGo?.();
    letGo = null;
  };
  let draining: Promise<void> | null = null;
  const drain = () => {
    endHold();
    return (draining ??= server.stop().then(
      () => process.exit(0),
      (error: Error) => {
        console.error(`server worker ${process.pid}: close failed: ${error.message}`);
        process.exit(1);
      },
    ));
  };
  process.on('message', (message: unknown) => {
    if (!isOurs<PrimaryMessage>(message)) return;
    if (message.ipscope === 'release-stage') {
      const id = server.releases.stage();
      const next = id ?? server.releases.current()?.id ?? null;
      send({ ipscope: 'release-staged', round: message.round, id, next });
    } else if (message.ipscope === 'release-hold') {
      letGo ??= holdRequests(server.app.server, HOLD_LIMIT_MS);
      send({ ipscope: 'release-held', round: message.round });
    } else if (message.ipscope === 'release-swap') {
      server.releases.swapStaged();
      endHold();
    } else if (message.ipscope === 'drain') {
      void drain();
    }
  });
  // Ctrl-C reaches the whole process group: the primary drains the workers in order.
  process.on('SIGINT', () => {});
  process.on('SIGTERM', () => void drain());
  // Without its primary a worker has no counters: it stops.
  process.on('disconnect', () => void drain());
  send({ ipscope: 'listening', url: server.url });
}
