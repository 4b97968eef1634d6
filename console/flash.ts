/**
 * One-time and short-lived things a page shows after a form's redirect (post/redirect/get): a new
 * key, new recovery codes, a playground run. They travel in a `__Host-` cookie sealed with
 * AES-256-GCM under a key derived from the session's token, and bound to what they are for (the
 * purpose is the additional data), so the cookie is useless outside its session and page. Nothing
 * of them is stored on the server, so every worker of `--workers N` can show them.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto';
import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { addCookie, readCookies } from './security.js';

export const FLASH_COOKIE = '__Host-ipscope-flash';
/** How long a sealed value may wait for its page. */
const FLASH_MAX_AGE_S = 600;
/** Browsers keep cookies of up to 4,096 bytes, name and attributes included. */
export const FLASH_MAX_CHARS = 3_800;

const keyOf = (sessionToken: string) =>
  createHash('sha256').update(`ipscope console flash\u0000${sessionToken}`).digest();

export function seal(sessionToken: string, purpose: string, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyOf(sessionToken), iv);
  cipher.setAAD(Buffer.from(purpose));
  const body = Buffer.concat([cipher.update(deflateRawSync(JSON.stringify(value))), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

export function unseal<T>(sessionToken: string, purpose: string, sealed: string): T | null {
  try {
    const raw = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyOf(sessionToken), raw.subarray(0, 12));
    decipher.setAAD(Buffer.from(purpose));
    decipher.setAuthTag(raw.subarray(12, 28));
    const body = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]);
    return JSON.parse(inflateRawSync(body).toString('utf8')) as T;
  } catch {
    return null;
  }
}

const flashCookie = (value: string, maxAgeS: number) =>
  `${FLASH_COOKIE}=${value}; Path=/; Secure; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}`;

/** Sets the flash cookie for the page the redirect leads to. */
export function setFlash(reply: FastifyReply, sealed: string): void {
  addCookie(reply, flashCookie(sealed, FLASH_MAX_AGE_S));
}

/** The flash of this request for `purpose`, or null. */
export function readFlash<T>(request: FastifyRequest, sessionToken: string, purpose: string): T | null {
  const sealed = readCookies(request.headers.cookie).get(FLASH_COOKIE);
  return sealed === undefined ? null : unseal<T>(sessionToken, purpose, sealed);
}

/** Deletes the flash cookie: what it held cannot be shown again. */
export function clearFlash(reply: FastifyReply): void {
  addCookie(reply, flashCookie('', 0));
}
