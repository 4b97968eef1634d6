/**
 * One delivery attempt: the URL checked again (scheme, credentials, every address public), a POST
 * of the signed body over a connection whose resolver is the same check (ssrf.ts), no redirect
 * followed, connect and reply timeouts, and the reply read up to REPLY_CAP bytes.
 */
import { Agent, request } from 'undici';
import type { AttemptResult } from '../../accounts/watch-types.js';
import { webhookHeaders } from './signing.js';
import { checkWebhookUrl, guardedLookup, type GuardOptions } from './ssrf.js';

export const CONNECT_TIMEOUT_MS = 5_000;
export const REPLY_TIMEOUT_MS = 10_000;
/** Bytes of a reply read at most; the log keeps the first REPLY_HEAD of them. */
export const REPLY_CAP = 1_024;
export const REPLY_HEAD = 256;

/**
 * The timeouts of an attempt under a delivery lease of `leaseMs`: the defaults, shortened to a
 * quarter (connect) and a half (reply) of a lease under 60 s, so an attempt ends inside its lease
 * and no other process can claim the delivery while it is in flight.
 */
export function timeoutsWithin(leaseMs: number): { connectMs: number; replyMs: number } {
  return {
    connectMs: Math.min(CONNECT_TIMEOUT_MS, Math.floor(leaseMs / 4)),
    replyMs: Math.min(REPLY_TIMEOUT_MS, Math.floor(leaseMs / 2)),
  };
}

export interface Sender {
  send(url: string, id: string, body: string, secrets: readonly string[], now?: Date): Promise<AttemptResult>;
  close(): Promise<void>;
}

export function createSender(
  guard: GuardOptions,
  timeouts = { connectMs: CONNECT_TIMEOUT_MS, replyMs: REPLY_TIMEOUT_MS },
): Sender {
  const agent = new Agent({
    connect: { timeout: timeouts.connectMs, lookup: guardedLookup(guard) as never },
    headersTimeout: timeouts.replyMs,
    bodyTimeout: timeouts.replyMs,
    keepAliveTimeout: 4_000,
  });
  return {
    async send(url, id, body, secrets, now = new Date()) {
      const started = performance.now();
      const result = (status: number | null, error: string | null, replyHead = ''): AttemptResult => ({
        startedAt: now,
        durationMs: performance.now() - started,
        status,
        error,
        replyHead,
        ok: status !== null && status >= 200 && status < 300,
      });
      try {
        await checkWebhookUrl(url, guard);
        const reply = await request(url, {
          method: 'POST',
          dispatcher: agent,
          headers: {
            'content-type': 'application/json',
            'user-agent': 'ipscope-webhooks',
            ...webhookHeaders(id, now, body, secrets),
          },
          body,
          signal: AbortSignal.timeout(timeouts.connectMs + timeouts.replyMs),
        });
        const chunks: Buffer[] = [];
        let length = 0;
        try {
          for await (const chunk of reply.body as AsyncIterable<Buffer>) {
            chunks.push(chunk);
            length += chunk.length;
            if (length >= REPLY_CAP) break;
          }
        } finally {
          reply.body.destroy();
        }
        const head = Buffer.concat(chunks).subarray(0, REPLY_HEAD).toString('utf8');
        const redirect = reply.statusCode >= 300 && reply.statusCode < 400 ? 'redirect not followed' : null;
        return result(reply.statusCode, redirect, head);
      } catch (error) {
        const e = error as Error & { code?: string; cause?: Error };
        const message =
          e.cause?.message && e.cause.message !== e.message ? `${e.message}: ${e.cause.message}` : e.message;
        return result(null, (e.code ? `${e.code}: ` : '') + message);
      }
    },
    close: () => agent.close(),
  };
}
