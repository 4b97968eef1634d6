/**
 * The console's defences that every request passes through: security headers with a
 * Content-Security-Policy without 'unsafe-inline', the session cookie (`__Host-`, HttpOnly, Secure,
 * SameSite=Lax), CSRF tokens and the same-origin `Origin` check of every POST.
 *
 * Tokens: the session cookie holds 256 random bits; the store keeps only their sha256 (the session
 * id), so a leaked database opens no session. The CSRF token of a signed-in page is derived from the
 * session token (sha256 of a label and the token), so it needs no storage and is useless without
 * the HttpOnly cookie; before sign-in a random `__Host-` cookie is the token (double submit).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';

export const SESSION_COOKIE = '__Host-ipscope-session';
export const CSRF_COOKIE = '__Host-ipscope-csrf';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-content-type-options': 'nosniff',
  'x-frame-options': 'DENY',
  // Not no-referrer: under it browsers send `Origin: null` with the console's own forms.
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  'strict-transport-security': 'max-age=31536000',
};

/** 256 random bits, base64url (43 characters). */
export const randomToken = (bytes = 32): string => randomBytes(bytes).toString('base64url');

export const sha256 = (text: string): string => createHash('sha256').update(text).digest('hex');

export function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The CSRF token of a signed-in session. */
export const csrfOfSession = (sessionToken: string): string =>
  createHash('sha256').update(`ipscope console csrf\u0000${sessionToken}`).digest('base64url');

export function readCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  for (const part of (header ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0) continue;
    const name = part.slice(0, eq).trim();
    if (!cookies.has(name)) cookies.set(name, part.slice(eq + 1).trim());
  }
  return cookies;
}

/** A `__Host-` cookie: Secure, Path=/, no Domain; HttpOnly and SameSite=Lax. `maxAgeS` 0 deletes it. */
export function hostCookie(name: string, value: string, maxAgeS: number): string {
  return `${name}=${value}; Path=/; Secure; HttpOnly; SameSite=Lax; Max-Age=${maxAgeS}`;
}

export function addCookie(reply: FastifyReply, cookie: string): void {
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous : [String(previous)];
  reply.header('set-cookie', [...list, cookie]);
}

/** The loopback names of this machine, as a URL's hostname writes them. */
const LOOPBACK = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * Whether a form's `Origin` is the console's own. Exactly CONSOLE_URL's origin, except when that
 * origin is itself a loopback address (a local run such as `make demo`): then the same scheme and
 * port on another loopback name (localhost, 127.0.0.1, [::1]) is the same console on the same
 * machine. A deployment with a public origin accepts only that origin.
 */
export function sameConsoleOrigin(origin: string | undefined, consoleOrigin: string): boolean {
  if (origin === undefined) return false;
  if (origin === consoleOrigin) return true;
  const own = new URL(consoleOrigin);
  if (!LOOPBACK.has(own.hostname)) return false;
  let sent: URL;
  try {
    sent = new URL(origin);
  } catch {
    return false;
  }
  return (
    sent.origin === origin &&
    LOOPBACK.has(sent.hostname) &&
    sent.protocol === own.protocol &&
    sent.port === own.port
  );
}

/** Why a POST was refused before its handler ran, or null when it may go on. */
export function refuseForgery(
  request: FastifyRequest,
  consoleOrigin: string,
  expectedCsrf: string | null,
): string | null {
  if (!sameConsoleOrigin(request.headers.origin, consoleOrigin)) {
    return 'the form was not sent from this console';
  }
  const body = request.body as Record<string, string> | undefined;
  const sent = body?._csrf;
  if (typeof sent !== 'string' || expectedCsrf === null || !sameText(sent, expectedCsrf)) {
    return 'the form has expired: reload the page and send it again';
  }
  return null;
}
