/**
 * The OpenAPI 3.1 description served at /v1/openapi.json: the operations of the table
 * (shared/operations.ts) with their parameters and error statuses (docs/api.md#operations),
 * the unkeyed routes (/health, this document, /llms-full.txt), POST /mcp, and the refusals every
 * route can give (the 308 of a trailing slash, 401 for a key in the URL, 403 for a foreign web
 * page, the framework's `{detail}` for 404, 405 and malformed requests), with the response schemas
 * of shared/api-schemas.ts. Tests validate every response they receive against it
 * (test/helpers/contract.ts).
 */
import { z } from 'zod';
import { apiRegistry } from '../../shared/api-schemas.js';
import { OPERATIONS } from '../../shared/operations.js';
import { QUERY_PARAMETERS, type QueryParameter } from '../../shared/parameters.js';
import { MCP_PATH } from '../mcp/path.js';
import { DNSDB_SCHEME, DNSDB_SPECS } from './openapi-dnsdb.js';
import { parametersOf, strip, type JsonSchema, type OperationSpec } from './operation-spec.js';

export const API_VERSION = '1.0.0';

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });
const REQUEST_ID_HEADER = {
  description: 'Identifies the request in logs and support requests.',
  required: true,
  schema: { type: 'string' },
};
function requestIdHeaders(): Record<string, unknown> {
  return { 'X-Request-ID': REQUEST_ID_HEADER };
}
const LIMIT_HEADERS = {
  'X-RateLimit-Limit': integerHeader('Requests per minute of the plan.'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current minute.'),
  'X-RateLimit-Reset': integerHeader('Seconds until the per-minute window resets.'),
  'X-Quota-Limit': integerHeader('Requests per month of the workspace.'),
  'X-Quota-Used': integerHeader('Requests used this month.'),
  'X-Quota-Remaining': integerHeader('Requests left this month.'),
  'X-Project-Quota-Limit': integerHeader("The monthly cap of the key's project (only when it has one)."),
  'X-Project-Quota-Used': integerHeader('Requests of the project used this month (only with a cap).'),
  'X-Project-Quota-Remaining': integerHeader('Requests left under the cap this month (only with a cap).'),
};
const RETRY_AFTER = { 'Retry-After': integerHeader('Seconds to wait before retrying.') };

const OPERATION_SPECS: OperationSpec[] = [
  ...OPERATIONS.map((op): OperationSpec => ({
    method: 'get',
    path: op.path,
    operationId: op.id,
    summary: op.summary,
    description: op.description,
    tag: op.tag,
    parameters: parametersOf(op),
    response: op.response,
    errors: op.errors,
    secured: true,
    origin: true,
    // A parameter with a code of its own (as_of) is refused with it, never in a `detail` list.
    validatesQuery: op.query.some((name) => (QUERY_PARAMETERS[name] as QueryParameter).code === undefined),
  })),
  {
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Service health.',
    description:
      'No key, not counted. 503 `unhealthy` when the database is unreachable. When no data release is loaded only the lookups fail (503 `release_unavailable`); the service stays healthy and the `release` block reports it.',
    tag: 'Service',
    parameters: [],
    response: 'Health',
    errors: [],
    secured: false,
    origin: false,
    successStatuses: [200, 503],
  },
  ...DNSDB_SPECS,
  {
    method: 'get',
    path: '/v1/openapi.json',
    operationId: 'openapi',
    summary: 'This description of the API.',
    description: 'No key. The OpenAPI 3.1 document of the REST API, version `1.0.0`.',
    tag: 'Service',
    parameters: [],
    response: { 'application/json': { schema: { type: 'object' } } },
    errors: [],
    secured: false,
    origin: true,
  },
  {
    method: 'get',
    path: '/llms-full.txt',
    operationId: 'llmsFull',
    summary: 'A plain-text guide for agents.',
    description: 'No key. How to call the service and read its answers, for agents and their developers.',
    tag: 'Service',
    parameters: [],
    response: { 'text/plain': { schema: { type: 'string' } } },
    errors: [],
    secured: false,
    origin: false,
  },
  {
    method: 'post',
    path: MCP_PATH,
    operationId: 'mcp',
    summary: 'MCP server (Streamable HTTP, JSON responses).',
    description:
      'One JSON-RPC message per request, answered with JSON (never SSE). Both protocol eras: `MCP-Protocol-Version: 2026-07-28` on every request, or `initialize` first. Listing tools needs no key; a tool call runs the same key check, rate limit and quota as the REST API, and a refusal is a tool error (`isError: true`) reading `Error executing tool <tool>: <error code>: <message>`. Tools: ' +
      OPERATIONS.filter((op) => op.tool)
        .map((op) => `\`${op.id}\` = \`GET ${op.path}\``)
        .join('; ') +
      '.',
    tag: 'MCP',
    parameters: [],
    requestBody: {
      required: true,
      description: 'A JSON-RPC 2.0 message, at most 1 MiB.',
      content: json(ref('JsonRpcMessage')),
    },
    response: { 'application/json': { schema: ref('JsonRpcResponse') } },
    errors: [413, 503],
    secured: false,
    origin: true,
    extraResponses: {
      '202': {
        description: 'A notification or response was accepted; no body.',
        headers: requestIdHeaders(),
      },
      ...Object.fromEntries(
        [
          [400, 'Parse error or an invalid message or protocol headers (JSON-RPC error).'],
          [406, 'Accept must list application/json and text/event-stream (JSON-RPC error).'],
          [415, 'Content-Type must be application/json (JSON-RPC error).'],
        ].map(([status, description]) => [
          String(status),
          { description, headers: requestIdHeaders(), content: json(ref('JsonRpcResponse')) },
        ]),
      ),
    },
  },
];

const STATUS_TEXT: Record<number, string> = {
  400: '`invalid_cursor`: the cursor was not issued for this query. Resend the query the cursor came from, or start without a cursor.',
  401: '`unauthorized`: key missing, mistyped, revoked, expired, or sent in the URL. Fix the header.',
  402: '`quota_exceeded` (wait for next month) or `project_cap_exceeded` (raise or remove the cap).',
  410: '`cursor_expired`: the data release changed since the cursor was issued. Restart without a cursor.',
  422: 'The path parameter is invalid (`invalid_ip`, `non_public_ip`, `invalid_domain`, `invalid_asn`), or `as_of` is malformed, in the future or before the oldest release kept (`as_of_out_of_range`, on the operations that take it).',
  429: '`rate_limited`: wait `Retry-After` seconds.',
  413: '`payload_too_large`: the request body is over 1 MiB. Send less.',
  500: '`internal_error`: retry once.',
  503: '`release_unavailable` (no lookup data loaded: retry later) or `service_unavailable` (wait `Retry-After` seconds).',
};

function responses(op: OperationSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const status of op.successStatuses ?? [200]) {
    out[String(status)] = {
      description: status === 200 ? 'OK' : 'Unhealthy: the accounts database does not answer.',
      headers: { 'X-Request-ID': REQUEST_ID_HEADER, ...(op.secured ? LIMIT_HEADERS : {}) },
      content: typeof op.response === 'string' ? json(ref(op.response)) : op.response,
    };
  }
  Object.assign(out, op.extraResponses);
  // The trailing-slash redirect runs before any route, for every method (POST /mcp/ too).
  out['308'] = { $ref: '#/components/responses/TrailingSlashRedirect' };
  for (const status of [...new Set([...op.errors, 401, ...(op.origin ? [403] : []), 500])].sort()) {
    if (status === 401 && !op.secured) {
      out['401'] = { $ref: '#/components/responses/KeyInUrl' };
      continue;
    }
    if (status === 403) {
      out['403'] = { $ref: '#/components/responses/ForeignOrigin' };
      continue;
    }
    let schema: JsonSchema = ref('Error');
    if (status === 422 && op.validatesQuery) schema = { oneOf: [ref('Error'), ref('ValidationError')] };
    // A 400 may also be the framework's (malformed percent-encoding in the path).
    if (status === 400) schema = { oneOf: [ref('Error'), ref('Detail')] };
    const description =
      status === 422 && op.validatesQuery
        ? `${STATUS_TEXT[422]} Or \`{detail: [...]}\` for a query parameter out of range (limit 1 to 1000, cursor over 1024 characters).`
        : status === 401 && op.path === MCP_PATH
          ? 'Never: a refused key is a tool error.'
          : STATUS_TEXT[status];
    out[String(status)] = {
      description,
      headers: {
        'X-Request-ID': REQUEST_ID_HEADER,
        ...(status === 429 || status === 503 ? RETRY_AFTER : {}),
      },
      content: json(schema),
    };
  }
  if (op.path === MCP_PATH) delete out['401'];
  out.default = { $ref: '#/components/responses/RequestRefused' };
  return out;
}

const detailResponse = (description: string, headers: Record<string, unknown> = {}) => ({
  description,
  headers: { 'X-Request-ID': REQUEST_ID_HEADER, ...headers },
  content: json(ref('Detail')),
});

/** Answers of every route, or of no route, that are not an operation's own. */
const COMMON_RESPONSES = {
  NotFound: detailResponse('An unknown path: `{"detail": "Not Found"}`.'),
  MethodNotAllowed: detailResponse(
    'A method the path does not serve (every method but GET and HEAD on the GET routes, every one but POST on /mcp): `{"detail": "Method Not Allowed"}`. HEAD is answered wherever GET is, with the same status and headers and no body.',
    { Allow: { description: 'The methods the path serves.', required: true, schema: { type: 'string' } } },
  ),
  TrailingSlashRedirect: {
    description:
      'The path was sent with a trailing slash: redirected (308, method and body kept) to the path without it, query string kept. Clients commonly drop the Authorization header on a redirect, which ends in 401.',
    headers: {
      'X-Request-ID': REQUEST_ID_HEADER,
      Location: {
        description: 'The same path without the trailing slash.',
        required: true,
        schema: { type: 'string' },
      },
    },
  },
  KeyInUrl: {
    description:
      '`unauthorized`: the URL holds something shaped like an API key (any parameter, the path). Keys go in the Authorization header only.',
    headers: { 'X-Request-ID': REQUEST_ID_HEADER },
    content: json(ref('Error')),
  },
  ForeignOrigin: detailResponse(
    'A request from a web page other than the console: `{"detail": "Forbidden"}`. The console gets CORS headers, and its preflight (OPTIONS with Origin) 204.',
  ),
  RequestRefused: detailResponse(
    'Refused by the HTTP layer before any route: 400 (malformed request line, header or percent-encoding), 408 (headers or body not received in time; the connection is closed), 431 (request line and headers over 16 KiB).',
  ),
};

/** JSON-RPC 2.0 as MCP uses it over HTTP (one message per request, JSON answers). */
const JSON_RPC_SCHEMAS = {
  JsonRpcMessage: {
    type: 'object',
    description: 'A JSON-RPC 2.0 request, notification or response (MCP).',
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'integer'] },
      method: { type: 'string' },
      params: { type: 'object' },
      result: { type: 'object' },
      error: { type: 'object' },
    },
    required: ['jsonrpc'],
  },
  JsonRpcResponse: {
    type: 'object',
    description:
      'A JSON-RPC 2.0 response: `result` (tool results carry `content`, `structuredContent`, `isError`) or `error`.',
    properties: {
      jsonrpc: { const: '2.0' },
      id: { type: ['string', 'integer', 'null'] },
      result: { type: 'object' },
      error: {
        type: 'object',
        properties: { code: { type: 'integer' }, message: { type: 'string' }, data: {} },
        required: ['code', 'message'],
        additionalProperties: false,
      },
    },
    required: ['jsonrpc'],
    additionalProperties: false,
  },
};

export function buildOpenApiDocument(): Record<string, unknown> {
  const components = z.toJSONSchema(apiRegistry, {
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
  }).schemas;
  const schemas = Object.fromEntries(
    Object.entries(components).map(([id, schema]) => [id, strip(schema as JsonSchema)]),
  );
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATION_SPECS) {
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      description: op.description,
      tags: [op.tag],
      parameters: op.parameters,
      ...(op.requestBody && { requestBody: op.requestBody }),
      responses: responses(op),
      // /mcp: tool listing needs no key, tool calls do.
      security: op.secured
        ? [{ [op.scheme ?? 'bearerAuth']: [] }]
        : op.path === MCP_PATH
          ? [{}, { bearerAuth: [] }]
          : [],
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'ipscope: public IP, domain DNS-observation and ASN lookups',
      version: API_VERSION,
      license: { name: 'MIT', identifier: 'MIT' },
      description:
        'Answers from DNS answers the service records itself, IP ranges that cloud, hosting and CDN providers publish, usage lists operators publish and an imported IP-to-ASN mapping. `null` means unknown, never false; an empty list means not observed here. A plain-text guide for agents is at /llms-full.txt.',
    },
    servers: [{ url: '/' }],
    tags: [
      { name: 'IP', description: 'Lookups by IP address.' },
      { name: 'Domain', description: 'Lookups by domain name.' },
      { name: 'ASN', description: 'Lookups by autonomous system.' },
      { name: 'Service', description: 'Health, key check and documents.' },
      { name: 'MCP', description: 'The lookups as MCP tools.' },
      { name: 'DNSDB', description: 'Passive-DNS lookups in the DNSDB API v2 form, for DNSDB clients.' },
      {
        name: 'Watch',
        description:
          "The change feed of the key's project's watch entries (the same events its webhooks deliver).",
      },
    ],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas: { ...schemas, ...JSON_RPC_SCHEMAS },
      responses: COMMON_RESPONSES,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key (starts with `sk_`) from the console, as `Authorization: Bearer <API_KEY>`. Never in the URL.',
        },
        ...DNSDB_SCHEME,
      },
    },
  };
}
