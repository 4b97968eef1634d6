/**
 * The keyed operations of the REST API, one GET route each, generated from the operation table
 * (shared/operations.ts). A route reads its transport (the key from the Authorization header, a key
 * named in the query string, the path parameter, the query string) and writes the result the call
 * envelope gives (server/call/envelope.ts); the envelope does everything between.
 */
import { OPERATIONS, type Operation } from '../../../shared/operations.js';
import type { Envelope } from '../../call/envelope.js';
import { bearerToken } from '../../call/keys.js';
import { hasKeyInQuery } from '../redact.js';
import type { Handler, RouteSpec } from '../router.js';

export function operationRoutes(envelope: Envelope): RouteSpec[] {
  return OPERATIONS.map((op) => ({
    path: op.path,
    method: 'GET',
    access: 'key',
    handler: lookup(envelope, op),
  }));
}

function lookup(envelope: Envelope, op: Operation): Handler {
  const parameter = op.pathParameter;
  return (ex, params, query) =>
    envelope.call(
      {
        op,
        credential: { token: bearerToken(ex.req.headers.authorization), keyInUrl: hasKeyInQuery(query) },
        client: ex,
        args: { from: 'rest', path: parameter === undefined ? undefined : params[parameter], query },
      },
      ex,
    );
}
