/**
 * The DNSDB API v2 form (docs/api.md#dnsdb-api, docs/decisions/0031), under /dnsdb/v2, for the
 * passive-DNS tools analysts already use: rrset lookups by name, rdata lookups by address or prefix,
 * `ping` and `rate_limit`. The key travels in the `X-API-Key` header (a key in the URL is refused
 * as everywhere); each lookup runs through the call envelope with the operations of
 * shared/dnsdb-operations.ts, so keys, limits and metering are the API's. An answer is written in
 * DNSDB's streaming framing (newline-delimited JSON): `{"cond":"begin"}`, one `{"obj":…}` per
 * record, then `{"cond":"succeeded"}`, or `{"cond":"limited",…}` when `limit` cut it short.
 */
import {
  DNSDB_OPERATIONS,
  DNSDB_PING_PATH,
  DNSDB_RATE_LIMIT_PATH,
  pathForms,
} from '../../shared/dnsdb-operations.js';
import { operationById, type Operation } from '../../shared/operations.js';
import type { DnsdbAnswer } from '../../shared/queries/index.js';
import type { CallResult, Envelope, Recipient } from '../call/envelope.js';
import { headerToken } from '../call/keys.js';
import type { Exchange } from '../http/exchange.js';
import { hasKeyInQuery } from '../http/redact.js';
import type { Params, Query, RouteSpec } from '../http/router.js';

const NDJSON = 'application/x-ndjson';

const ping = operationById('ping')!;

/** The key as DNSDB clients send it. */
const tokenOf = (ex: Exchange) => headerToken(ex.req.headers['x-api-key']);

/** Writes a lookup's result: the records in the streaming framing, or the refusal as the API answers it. */
function stream(ex: Exchange): Recipient {
  return {
    result(result: CallResult) {
      if (result.answer === null) return ex.result(result);
      const answer = result.answer.value as DnsdbAnswer;
      const lines = [JSON.stringify({ cond: 'begin' })];
      for (const record of answer.records) lines.push(JSON.stringify({ obj: record }));
      lines.push(
        JSON.stringify(
          answer.limited ? { cond: 'limited', msg: 'Result limit reached' } : { cond: 'succeeded' },
        ),
      );
      ex.write(result.status, NDJSON, result.headers, `${lines.join('\n')}\n`);
    },
  };
}

function lookup(
  envelope: Envelope,
  op: Operation,
  ex: Exchange,
  path: string | undefined,
  query: Query,
): void {
  envelope.call(
    {
      op,
      credential: { token: tokenOf(ex), keyInUrl: hasKeyInQuery(query) },
      client: ex,
      args: { from: 'rest', path, query },
      withValue: true,
    },
    stream(ex),
  );
}

/** A lookup's handler: the path parameter, and the segments of the tail as arguments. */
function lookupHandler(envelope: Envelope, op: Operation) {
  return (ex: Exchange, params: Params, query: Query) => {
    const tail: Record<string, string> = {};
    for (const name of op.pathTail ?? []) {
      const value = params[name];
      if (value !== undefined) tail[name] = value;
    }
    lookup(envelope, op, ex, params[op.pathParameter!], { ...query, ...tail });
  };
}

/** `rate_limit`: the key's monthly quota (it counts one request, as /v1/ping does). */
function rateLimit(envelope: Envelope) {
  return (ex: Exchange, _params: Params, query: Query) =>
    envelope.call(
      {
        op: ping,
        credential: { token: tokenOf(ex), keyInUrl: hasKeyInQuery(query) },
        client: ex,
        args: { from: 'rest', path: undefined, query },
      },
      {
        result(result) {
          if (result.answer === null) return ex.result(result);
          const number = (name: string) => {
            const value = result.headers[name];
            return value === undefined ? 'unlimited' : Number(value);
          };
          const now = new Date();
          const reset = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1) / 1000;
          const rate = {
            reset: result.headers['x-quota-limit'] === undefined ? 'n/a' : reset,
            limit: number('x-quota-limit'),
            remaining: number('x-quota-remaining'),
          };
          ex.json(200, { rate }, result.headers);
        },
      },
    );
}

export function dnsdbRoutes(envelope: Envelope): RouteSpec[] {
  return [
    { path: DNSDB_PING_PATH, method: 'GET', access: 'public', handler: (ex) => ex.json(200, { ping: 'ok' }) },
    { path: DNSDB_RATE_LIMIT_PATH, method: 'GET', access: 'key', handler: rateLimit(envelope) },
    ...DNSDB_OPERATIONS.flatMap((op) =>
      pathForms(op).map((path): RouteSpec => ({
        path,
        method: 'GET',
        access: 'key',
        handler: lookupHandler(envelope, op),
      })),
    ),
  ];
}
