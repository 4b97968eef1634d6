/**
 * The key check of every /v1 operation (SPEC.md Authentication): `Authorization: Bearer <key>`.
 * Missing, malformed, unknown, revoked and expired keys all get the same 401 `unauthorized`, so the
 * answer does not reveal which keys exist; a key-like query parameter is refused even next to a
 * valid header (keys in URLs end up in logs and browser histories). It runs as an onRequest hook,
 * so the key is checked before any parameter.
 */
import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from '../shared/errors.js';
import type { AccountsStore, KeyPrincipal } from '../accounts/index.js';
import type { RefusedKeyThrottle } from './limits/refused-keys.js';
import { KEY_IN_URL_MESSAGE, hasKeyInQuery, urlCarriesKey } from './http/redact.js';
import { MCP_PATH } from './mcp/path.js';

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
      throw new ApiError('unauthorized', KEY_IN_URL_MESSAGE);
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

/**
 * Every route but POST /mcp (which answers it as a tool error): a URL holding anything shaped like
 * a key, under any name or in the path, is refused 401 before anything else looks at it (the
 * trailing-slash redirect would echo it in Location). A plain callback: no promise per request.
 */
export function keyInUrlHook(refusedKeys?: RefusedKeyThrottle) {
  return function refuseKeyInUrl(
    request: FastifyRequest,
    _reply: FastifyReply,
    done: HookHandlerDoneFunction,
  ) {
    const url = request.url;
    if (!urlCarriesKey(url) || url === MCP_PATH || url.startsWith(`${MCP_PATH}?`)) return done();
    const refusal = new ApiError('unauthorized', KEY_IN_URL_MESSAGE);
    if (refusedKeys === undefined) return done(refusal);
    // Too many refused keys from this address: 429 with Retry-After instead of 401.
    refusedKeys.refused(request.ip).then(
      () => done(refusal),
      (error: unknown) => done(error as Error),
    );
  };
}
