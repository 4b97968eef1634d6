/**
 * What a call's key is (docs/api.md#authentication): `Authorization: Bearer <key>`, read from the
 * header by the transport and checked by the envelope. Missing, malformed, unknown, revoked and
 * expired keys all get the same 401 `unauthorized`, so the answer does not reveal which keys exist.
 */
import type { AccountsStore, KeyPrincipal } from '../../accounts/index.js';

/** What the server needs of the accounts store. */
export type AccountsPort = Pick<AccountsStore, 'verifyKey' | 'ping'> & {
  /** A key verified moments ago, without waiting (server/limits/key-verifier.ts); else undefined. */
  peekKey?(token: string): KeyPrincipal | undefined;
};

/** The message of every refusal of a key in the URL (REST 401 and the MCP tool error). */
export const KEY_IN_URL_MESSAGE =
  'API keys are not accepted in the URL: remove the key from the URL and send the header "Authorization: Bearer <API_KEY>"';

/** Longer tokens are refused without a look-up (keys are 35 characters). */
const MAX_TOKEN_LENGTH = 256;
const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;
const BARE = /^[\x21-\x7e]+$/;

/** The key of an Authorization header, or null when there is none or it is not a Bearer token. */
export function bearerToken(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.length > MAX_TOKEN_LENGTH + 16) return null;
  const match = BEARER.exec(value);
  return match && match[1]!.length <= MAX_TOKEN_LENGTH ? match[1]! : null;
}

/** The key of a header that carries it bare (`X-API-Key`, as DNSDB clients send it), or null. */
export function headerToken(header: string | string[] | undefined): string | null {
  const value = Array.isArray(header) ? header[0] : header;
  return value !== undefined && value.length <= MAX_TOKEN_LENGTH && BARE.test(value) ? value : null;
}
