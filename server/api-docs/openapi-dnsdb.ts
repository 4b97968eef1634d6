/**
 * The DNSDB API v2 form in the OpenAPI document (docs/api.md#dnsdb-api): its lookups, one path per
 * form of the path (an rrset lookup may end in `/{rrtype}` and `/{rrtype}/{bailiwick}`), `ping` and
 * `rate_limit`, secured by the `X-API-Key` header that DNSDB clients send.
 */
import {
  DNSDB_OPERATIONS,
  DNSDB_PING_PATH,
  DNSDB_RATE_LIMIT_PATH,
  pathForms,
} from '../../shared/dnsdb-operations.js';
import { QUERY_PARAMETERS } from '../../shared/parameters.js';
import { parametersOf, type OperationSpec } from './operation-spec.js';

const SCHEME = 'dnsdbKey';

export const DNSDB_SCHEME = {
  [SCHEME]: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description:
      'The same API key as `Authorization: Bearer`, in the header DNSDB clients send. Never in the URL.',
  },
};

const STREAM = {
  'application/x-ndjson': {
    schema: {
      type: 'string',
      description:
        'Newline-delimited JSON: `{"cond":"begin"}`, one `{"obj": record}` per record (rrname, rrtype, rdata, time_first, time_last in epoch seconds; no count, no bailiwick), then `{"cond":"succeeded"}`, or `{"cond":"limited","msg":"Result limit reached"}` when more records than `limit` matched.',
    },
  },
};

const json = (properties: Record<string, unknown>) => ({
  'application/json': {
    schema: { type: 'object', properties, required: Object.keys(properties), additionalProperties: false },
  },
});

const common = { method: 'get', tag: 'DNSDB', scheme: SCHEME, origin: true } as const;

export const DNSDB_SPECS: OperationSpec[] = [
  ...DNSDB_OPERATIONS.flatMap((op) =>
    pathForms(op).map((path, n): OperationSpec => ({
      ...common,
      path,
      operationId: n === 0 ? op.id : `${op.id}_${op.pathTail!.slice(0, n).join('_')}`,
      summary: op.summary,
      description: op.description,
      parameters: [
        ...parametersOf(op),
        ...(op.pathTail ?? []).slice(0, n).map((name) => ({
          name,
          in: 'path',
          required: true,
          description: QUERY_PARAMETERS[name].description,
          schema: { type: 'string' },
        })),
      ],
      response: STREAM,
      errors: op.errors,
      secured: true,
      validatesQuery: true,
    })),
  ),
  {
    ...common,
    path: DNSDB_PING_PATH,
    operationId: 'dnsdb_ping',
    summary: 'DNSDB liveness.',
    description: 'No key, not counted: `{"ping":"ok"}`.',
    parameters: [],
    response: json({ ping: { const: 'ok' } }),
    errors: [],
    secured: false,
    origin: false,
  },
  {
    ...common,
    path: DNSDB_RATE_LIMIT_PATH,
    operationId: 'dnsdb_rate_limit',
    summary: "The key's monthly quota, in DNSDB's form.",
    description:
      'Counted as one request, as GET /v1/ping is. `limit` and `remaining` are the workspace quota of the month (`unlimited` without one), `reset` the first second of the next month in epoch seconds (`n/a` without a quota).',
    parameters: [],
    response: json({
      rate: {
        type: 'object',
        properties: {
          reset: { type: ['integer', 'string'] },
          limit: { type: ['integer', 'string'] },
          remaining: { type: ['integer', 'string'] },
        },
        required: ['reset', 'limit', 'remaining'],
        additionalProperties: false,
      },
    }),
    errors: [401, 402, 429, 503],
    secured: true,
  },
];
