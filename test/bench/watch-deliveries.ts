/**
 * bench-watch's deliveries (issue 34): events of the pair, put into a fresh outbox with one
 * endpoint per project (every kind admitted), so that inserting N events makes N deliveries; the
 * Deliverer (server/watch/deliverer.ts) with the sender of the server (send.ts: SSRF guard,
 * signing, undici) drains them to a receiver on loopback. The receiver is a node:http server in a
 * process of its own (`runReceiver`, forked): it verifies every delivery with the
 * `standardwebhooks` package under its endpoint's secret and answers 204 (401 when it fails).
 */
import { fork } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import type { AccountsStore } from '../../accounts/index.js';
import type { AttemptResult, NewWatchEvent } from '../../accounts/watch-types.js';
import { Deliverer } from '../../server/watch/deliverer.js';
import { createSender, type Sender } from '../../server/watch/send.js';
import { parseAllowedAddresses } from '../../server/watch/ssrf.js';

interface ReceiverCounts {
  received: number;
  verified: number;
  refused: number;
}

type ToReceiver = { secrets: Record<string, string> } | { report: true };
type FromReceiver = { port: number } | { ready: true } | ({ counts: true } & ReceiverCounts);

/** The receiver process: listens on 127.0.0.1:0, tells its port, then answers its parent's messages. */
export function runReceiver(): void {
  const hooks = new Map<string, Webhook>();
  const counts: ReceiverCounts = { received: 0, verified: 0, refused: 0 };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      counts.received++;
      let ok = false;
      try {
        hooks
          .get(req.url ?? '')
          ?.verify(Buffer.concat(chunks).toString('utf8'), req.headers as Record<string, string>);
        ok = hooks.has(req.url ?? '');
      } catch {
        ok = false;
      }
      if (ok) counts.verified++;
      else counts.refused++;
      res.writeHead(ok ? 204 : 401).end();
    });
  });
  const send = (message: FromReceiver) => process.send!(message);
  process.on('message', (message: ToReceiver) => {
    if ('secrets' in message) {
      for (const [urlPath, secret] of Object.entries(message.secrets))
        hooks.set(urlPath, new Webhook(secret));
      send({ ready: true });
    } else send({ counts: true, ...counts });
  });
  process.on('disconnect', () => {
    server.closeAllConnections();
    server.close(() => process.exit(0));
  });
  server.listen(0, '127.0.0.1', () => send({ port: (server.address() as AddressInfo).port }));
}

export interface DeliveryFigures {
  deliveries: number;
  wallS: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  failedAttempts: number;
  attempts: number;
  delivered: number;
  received: number;
  verified: number;
  refused: number;
}

/** The value below which `q` of the sorted values lie (nearest rank). */
function quantile(sorted: readonly number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))]!;
}

/** The sender of the server, each attempt's result also kept here. */
function recording(sender: Sender, results: AttemptResult[]): Sender {
  return {
    async send(url, id, body, secrets, now) {
      const result = await sender.send(url, id, body, secrets, now);
      results.push(result);
      return result;
    },
    close: () => sender.close(),
  };
}

/** Delivers `events` (of other projects: each source project gets one of its own here) from `store`, empty. */
export async function benchDeliveries(
  store: AccountsStore,
  events: readonly NewWatchEvent[],
  receiverScript: string,
  perWorkspace: number,
): Promise<DeliveryFigures> {
  const receiver = fork(receiverScript, ['--step', 'receiver'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
  });
  const next = () =>
    new Promise<FromReceiver>((resolve, reject) => {
      receiver.once('message', resolve);
      receiver.once('exit', (code) => reject(new Error(`the receiver exited (${code})`)));
    });
  try {
    const { port } = (await next()) as { port: number };
    const projectOf = new Map<string, string>();
    const secrets: Record<string, string> = {};
    const endpoints: string[] = [];
    let workspace = '';
    for (const source of new Set(events.map((e) => e.projectId))) {
      const n = projectOf.size;
      if (n % perWorkspace === 0)
        workspace = (await store.createWorkspace({ name: `outbox-${n / perWorkspace}` })).id;
      const project = await store.createProject({ workspaceId: workspace, name: `project-${n}` });
      const urlPath = `/hooks/${n}`;
      const { endpoint, secret } = await store.createEndpoint({
        projectId: project.id,
        url: `http://127.0.0.1:${port}${urlPath}`,
        kinds: [],
      });
      projectOf.set(source, project.id);
      secrets[urlPath] = secret;
      endpoints.push(endpoint.id);
    }
    receiver.send({ secrets } satisfies ToReceiver);
    await next();
    const inserted = await store.insertWatchEvents(
      events.map((e) => ({ ...e, projectId: projectOf.get(e.projectId)! })),
    );
    if (inserted !== events.length) throw new Error(`${inserted} of ${events.length} events inserted`);

    const results: AttemptResult[] = [];
    // WEBHOOK_ALLOW_HTTP and WEBHOOK_ALLOWED_ADDRESSES=127.0.0.1: a receiver on loopback.
    const sender = recording(
      createSender({ allowHttp: true, allowed: parseAllowedAddresses('127.0.0.1') }),
      results,
    );
    const deliverer = new Deliverer({ store, sender, owner: 'bench-watch' });
    const started = performance.now();
    const attempted = await deliverer.drain();
    const wallS = (performance.now() - started) / 1000;
    await sender.close();

    let delivered = 0;
    for (const id of endpoints)
      for (const d of await store.listDeliveries(id))
        if (d.state === 'delivered' && d.attempts === 1) delivered++;
    receiver.send({ report: true } satisfies ToReceiver);
    const counts = (await next()) as ReceiverCounts;
    const durations = results.map((r) => r.durationMs).sort((a, b) => a - b);
    return {
      deliveries: events.length,
      wallS,
      perSecond: attempted / wallS,
      p50Ms: quantile(durations, 0.5),
      p99Ms: quantile(durations, 0.99),
      failedAttempts: results.filter((r) => !r.ok).length,
      attempts: attempted,
      delivered,
      received: counts.received,
      verified: counts.verified,
      refused: counts.refused,
    };
  } finally {
    receiver.removeAllListeners();
    receiver.disconnect();
  }
}
