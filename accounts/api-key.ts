/**
 * API key format: `sk_` + 26 random base62 characters + a 6-character base62 checksum.
 *
 * - 26 characters drawn uniformly from 62 symbols carry 26 × log2(62) ≈ 154.8 bits; even after the
 *   four body characters that `displayKey` shows, ≈ 131 unknown bits remain (≥ 128).
 * - The checksum (sha256 of `sk_` + body, reduced to 6 base62 characters, ≈ 35.7 bits) lets a
 *   mistyped or truncated key be refused without touching the accounts store: a random change
 *   passes it with a probability of about 1 in 57 billion.
 * - Only `hashKey(key)` is stored; the plaintext is shown once, when the key is created.
 */
import { createHash, randomBytes } from 'node:crypto';

export const KEY_PREFIX = 'sk_';
export const KEY_BODY_LENGTH = 26;
export const KEY_CHECKSUM_LENGTH = 6;
export const KEY_LENGTH = KEY_PREFIX.length + KEY_BODY_LENGTH + KEY_CHECKSUM_LENGTH;

const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const KEY_SHAPE = new RegExp(`^${KEY_PREFIX}[0-9A-Za-z]{${KEY_BODY_LENGTH + KEY_CHECKSUM_LENGTH}}$`);

/**
 * `length` characters drawn uniformly from `alphabet` (rejection sampling: bytes at or above the
 * largest multiple of the alphabet size are dropped, so no symbol is favoured).
 */
export function randomString(length: number, alphabet: string = BASE62): string {
  const limit = 256 - (256 % alphabet.length);
  let out = '';
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte >= limit) continue;
      out += alphabet[byte % alphabet.length];
      if (out.length === length) break;
    }
  }
  return out;
}

function checksum(prefixAndBody: string): string {
  const digest = createHash('sha256').update(prefixAndBody).digest();
  let n = digest.readBigUInt64BE(0);
  let out = '';
  for (let i = 0; i < KEY_CHECKSUM_LENGTH; i++) {
    out = BASE62[Number(n % 62n)] + out;
    n /= 62n;
  }
  return out;
}

/** A new random key (plaintext). Show it once; store only `hashKey(key)`. */
export function generateKey(): string {
  const head = KEY_PREFIX + randomString(KEY_BODY_LENGTH);
  return head + checksum(head);
}

/**
 * True when `token` has the shape of a key and its checksum matches. Cheap (one sha256 of 29
 * bytes) and needs no store: mistyped, truncated and made-up tokens stop here.
 */
export function looksLikeKey(token: string): boolean {
  if (token.length !== KEY_LENGTH || !KEY_SHAPE.test(token)) return false;
  const split = KEY_LENGTH - KEY_CHECKSUM_LENGTH;
  return checksum(token.slice(0, split)) === token.slice(split);
}

/**
 * What the store keeps: sha256 of the whole key, hex. A slow password hash (scrypt, argon2)
 * protects low-entropy secrets against guessing; a key has ≥ 128 random bits, so nobody can
 * enumerate preimages of a leaked hash, and a fast hash keeps the check on every request cheap
 * and lets the store find the key by an indexed equality lookup (no per-key salt to try).
 */
export function hashKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** How a key is shown after creation: its first and last characters, e.g. `sk_AbCd…wxYz`. */
export function displayKey(key: string): string {
  return `${key.slice(0, KEY_PREFIX.length + 4)}…${key.slice(-4)}`;
}

/**
 * Something shaped like a key inside any text (a URL, a log line): the prefix and at least 20 of
 * the 32 base62 characters that follow it, so a truncated or padded key counts too. The one
 * declaration of that shape: the URL refusal and the log redaction (server/redact.ts) use it.
 */
const KEY_SHAPE_IN_TEXT = new RegExp(`${KEY_PREFIX}[0-9A-Za-z]{20,}`, 'gi');

/** True when `text` holds something shaped like a key anywhere in it. */
export function containsKeyShape(text: string): boolean {
  KEY_SHAPE_IN_TEXT.lastIndex = 0;
  return KEY_SHAPE_IN_TEXT.test(text);
}

/** `text` with everything shaped like a key replaced by `replacement`. */
export function redactKeyShapes(text: string, replacement = 'REDACTED'): string {
  return text.replace(KEY_SHAPE_IN_TEXT, replacement);
}
