/**
 * A webhook receiver on loopback for the watch tests: every request is verified with the
 * `standardwebhooks` package (a request that does not verify gets 401, whatever the plan says) and
 * recorded with when it arrived and when its reply ended (or its connection closed), so a test can
 * check that two attempts of one delivery never overlapped. `reply` decides each answer by the
 * request's number (1, 2, …): a status after a delay, or `hold` (never answered: the sender's
 * timeout, or its death, ends it). Also: a project watching WATCHED with an endpoint to it.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Test } from 'tap';
import { Webhook } from 'standardwebhooks';
import type { AccountsStore } from '../../accounts/index.js';
import { watchedEntries } from './watch-expected.js';

export interface ReceivedRequest {
  /** 1, 2, … in order of arrival. */
  n: number;
  id: string;
  body: string;
  verified: boolean;
  /** Date.now() when the request's body had arrived. */
  start: number;
  /** Date.now() when the reply ended or the connection closed; null while open. */
  end: number | null;
  /** The status answered; null while held or when the connection closed first. */
  status: number | null;
}

export type ReceiverReply = { status: number; delayMs?: number; body?: string } | 'hold';

export interface WebhookReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** The secret requests are verified with (set once the endpoint is created). */
  secret: string;
  /** Requests still open. */
  open(): number;
  /** Verified requests answered with a 2xx, by webhook-id. */
  delivered(): Map<string, ReceivedRequest[]>;
}

export async function startWebhookReceiver(
  t: Test,
  reply: (n: number, id: string) => ReceiverReply,
): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const receiver: WebhookReceiver = {
    url: '',
    requests,
    secret: '',
    open: () => requests.filter((r) => r.end === null).length,
    delivered() {
      const byId = new Map<string, ReceivedRequest[]>();
      for (const r of requests) {
        if (!r.verified || r.status === null || r.status < 200 || r.status >= 300) continue;
        byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
      }
      return byId;
    },
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      let verified = true;
      try {
        new Webhook(receiver.secret).verify(body, req.headers as Record<string, string>);
      } catch {
        verified = false;
      }
      const request: ReceivedRequest = {
        n: requests.length + 1,
        id: String(req.headers['webhook-id']),
        body,
        verified,
        start: Date.now(),
        end: null,
        status: null,
      };
      requests.push(request);
      res.on('close', () => (request.end ??= Date.now()));
      const planned: ReceiverReply = verified ? reply(request.n, request.id) : { status: 401 };
      if (planned === 'hold') return;
      setTimeout(() => {
        if (res.destroyed) return;
        request.status = planned.status;
        res.writeHead(planned.status).end(planned.body ?? '');
      }, planned.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return receiver;
}

/** Attempts of one webhook-id whose times overlap ([start, end] of one before the end of another). */
export function overlappingAttempts(requests: readonly ReceivedRequest[]): string[] {
  const byId = new Map<string, ReceivedRequest[]>();
  for (const r of requests) byId.set(r.id, [...(byId.get(r.id) ?? []), r]);
  const overlaps: string[] = [];
  for (const [id, list] of byId) {
    const sorted = [...list].sort((a, b) => a.start - b.start);
    for (let i = 1; i < sorted.length; i++) {
      const before = sorted[i - 1]!;
      if (before.end === null || sorted[i]!.start < before.end)
        overlaps.push(`${id} #${before.n}/#${sorted[i]!.n}`);
    }
  }
  return overlaps;
}

/**
 * A workspace `acme` with a project `web` watching WATCHED and an endpoint to the receiver for
 * every kind; the receiver verifies with the endpoint's secret.
 */
export async function watchingProject(
  store: AccountsStore,
  receiver: WebhookReceiver,
): Promise<{ projectId: string; endpointId: string }> {
  const ws = await store.createWorkspace({ name: 'acme' });
  const project = await store.createProject({ workspaceId: ws.id, name: 'web' });
  await store.addWatchEntries(project.id, watchedEntries(), 100);
  const created = await store.createEndpoint({ projectId: project.id, url: receiver.url, kinds: [] });
  receiver.secret = created.secret;
  return { projectId: project.id, endpointId: created.endpoint.id };
}

/** Polls `ok` every 50 ms until it holds, or fails after `ms`. */
export async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const started = Date.now();
  while (!(await ok())) {
    if (Date.now() - started > ms) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
