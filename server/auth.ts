/**
 * The key check of every /v1 operation (SPEC.md Authentication): `Authorization: Bearer <key>`.
 * Missing, malformed, unknown, revoked and expired keys all get the same 401 `unauthorized`, so the
 * answer does not reveal which keys exist; a key-like query parameter is refused even next to a
 * valid header (keys in URLs end up in logs and browser histories). It runs as an onRequest hook,
 * so the key is checked before any parameter.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../shared/errors.js';
import type { AccountsStore, KeyPrincipal } from './accounts/index.js';
import type { RefusedKeyThrottle } from './limits/refused-keys.js';
import { hasKeyInQuery } from './redact.js';

/** What the server needs of the accounts store. */
export type AccountsPort = Pick<AccountsStore, 'verifyKey' | 'ping'> & {
  /** A key verified moments ago, without waiting (server/limits/key-verifier.ts); else undefined. */
  peekKey?(token: string): KeyPrincipal | undefined;
};

declare module 'fastify' {
  interface FastifyRequest {
    /** Who the request acts for, once the key check passed (null on routes without a key). */
    principal: KeyPrincipal | null;
  }
}

/** Longer tokens are refused without a look-up (keys are 35 characters). */
const MAX_TOKEN_LENGTH = 256;
const BEARER = /^Bearer +([\x21-\x7e]+) *$/i;

export function bearerToken(header: string | undefined): string | null {
  if (header === undefined || header.length > MAX_TOKEN_LENGTH + 16) return null;
  const match = BEARER.exec(header);
  return match && match[1]!.length <= MAX_TOKEN_LENGTH ? match[1]! : null;
}

export function keyCheckHook(accounts: AccountsPort, refusedKeys?: RefusedKeyThrottle) {
  return async function checkKey(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    if (hasKeyInQuery(request.query)) {
      // Too many refused keys from this address: 429 with Retry-After instead of 401.
      await refusedKeys?.refused(request.ip);
      throw new ApiError(
        'unauthorized',
        'API keys are not accepted in the URL: remove the key from the query string and send the header "Authorization: Bearer <API_KEY>"',
      );
    }
    const token = bearerToken(request.headers.authorization);
    const principal = token === null ? null : await accounts.verifyKey(token);
    if (principal === null) {
      await refusedKeys?.refused(request.ip);
      throw new ApiError('unauthorized');
    }
    request.principal = principal;
  };
}
