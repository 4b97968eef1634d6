/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/): `webhook-signature` is
 * `v1,` + base64 HMAC-SHA256 of `${id}.${timestamp}.${body}` under the secret's bytes (the base64
 * after `whsec_`); during a rotation each secret signs and the signatures are space separated.
 * The tests verify these with the `standardwebhooks` package, not with this code.
 */
import { createHmac } from 'node:crypto';

export const SECRET_PREFIX = 'whsec_';

export function sign(secret: string, id: string, timestampSeconds: number, body: string): string {
  const key = Buffer.from(
    secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret,
    'base64',
  );
  const mac = createHmac('sha256', key).update(`${id}.${timestampSeconds}.${body}`).digest('base64');
  return `v1,${mac}`;
}

/** The three headers of one delivery attempt. */
export function webhookHeaders(
  id: string,
  at: Date,
  body: string,
  secrets: readonly string[],
): Record<'webhook-id' | 'webhook-timestamp' | 'webhook-signature', string> {
  const timestamp = Math.floor(at.getTime() / 1000);
  return {
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((s) => sign(s, id, timestamp, body)).join(' '),
  };
}
