/**
 * The OpenAPI 3.1 description served at /v1/openapi.json, generated from the zod schemas the routes
 * parse with (shared/api-schemas.ts), with the error statuses SPEC.md lists per operation.
 */
import { z } from 'zod';
import {
  apiRegistry,
  AsnPathParams,
  DomainPathParams,
  IpDomainsQuery,
  IpPathParams,
  PagedQuery,
} from '../shared/api-schemas.js';

export const API_VERSION = '1.0.0';

type JsonSchema = Record<string, unknown>;

interface OperationSpec {
  method: 'get';
  path: string;
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  pathParams?: z.ZodObject;
  query?: z.ZodObject;
  response: string;
  /** Error statuses of SPEC.md "Endpoints" for this operation (500 is added to every one). */
  errors: number[];
  secured: boolean;
  /** 422 may also be the `detail` list of a query parameter out of range. */
  validatesQuery?: boolean;
  successStatuses?: number[];
}

const LOOKUP_ERRORS = [401, 402, 422, 429, 503];
const PAGED_ERRORS = [400, 401, 402, 410, 422, 429, 503];

const OPERATIONS: OperationSpec[] = [
  {
    method: 'get',
    path: '/v1/ip/{ip}',
    operationId: 'lookup_ip',
    summary: 'What is this IP: network, provider range, PTR name, how many domains are on it?',
    description:
      'Counts one request. A private, reserved or other special-purpose address answers 200 with `is_bogon: true`, its block in `bogon` and nothing else, and is not counted. A CIDR range is `invalid_ip`.',
    tag: 'IP',
    pathParams: IpPathParams,
    response: 'IpLookup',
    errors: LOOKUP_ERRORS,
    secured: true,
  },
  {
    method: 'get',
    path: '/v1/ip/{ip}/domains',
    operationId: 'ip_domains',
    summary: 'Which domains were seen resolving to this IP, and when? (reverse IP)',
    description:
      'Items oldest first, one per answer interval; without `include_ended=true` only current intervals. A bogon address is refused with `non_public_ip`. Each page counts one request.',
    tag: 'IP',
    pathParams: IpPathParams,
    query: IpDomainsQuery,
    response: 'IpDomainsPage',
    errors: PAGED_ERRORS,
    secured: true,
    validatesQuery: true,
  },
  {
    method: 'get',
    path: '/v1/domain/{domain}/history',
    operationId: 'domain_history',
    summary: 'What has this domain resolved to over time? (DNS history)',
    description:
      'Covers popular registered domains; a new or long-tail domain is usually empty (`observed: false`). Each page counts one request.',
    tag: 'Domain',
    pathParams: DomainPathParams,
    query: PagedQuery,
    response: 'DomainHistoryPage',
    errors: PAGED_ERRORS,
    secured: true,
    validatesQuery: true,
  },
  {
    method: 'get',
    path: '/v1/domain/{domain}/hosting',
    operationId: 'domain_hosting',
    summary: 'Which networks has this domain moved through?',
    description:
      "Runs oldest first; a move happened between a run's `last_confirmed` and its `ended_at`. Counts one request.",
    tag: 'Domain',
    pathParams: DomainPathParams,
    response: 'DomainHosting',
    errors: LOOKUP_ERRORS,
    secured: true,
  },
  {
    method: 'get',
    path: '/v1/asn/{asn}',
    operationId: 'lookup_asn',
    summary: 'What does this AS number route, and what kind of network is it?',
    description:
      'The cursor pages the `ranges` list (IPv4 first, then IPv6). An AS number the mapping does not list answers with no ranges. Each page counts one request.',
    tag: 'ASN',
    pathParams: AsnPathParams,
    query: PagedQuery,
    response: 'AsnLookup',
    errors: PAGED_ERRORS,
    secured: true,
    validatesQuery: true,
  },
  {
    method: 'get',
    path: '/v1/ping',
    operationId: 'ping',
    summary: 'Checks that the key works.',
    description: 'Counts one request against the rate limit and monthly quota, like a lookup.',
    tag: 'Service',
    response: 'Ping',
    errors: [401, 402, 429, 503],
    secured: true,
  },
  {
    method: 'get',
    path: '/health',
    operationId: 'health',
    summary: 'Service health.',
    description:
      'No key, not counted. 503 `unhealthy` when the database is unreachable. When no data release is loaded only the lookups fail (503 `release_unavailable`); the service stays healthy and the `release` block reports it.',
    tag: 'Service',
    response: 'Health',
    errors: [],
    secured: false,
    successStatuses: [200, 503],
  },
];

const STATUS_TEXT: Record<number, string> = {
  400: '`invalid_cursor`: the cursor was not issued for this query. Resend the query the cursor came from, or start without a cursor.',
  401: '`unauthorized`: key missing, mistyped, revoked, expired, or sent in the URL. Fix the header.',
  402: '`quota_exceeded` (wait for next month) or `project_cap_exceeded` (raise or remove the cap).',
  410: '`cursor_expired`: the data release changed since the cursor was issued. Restart without a cursor.',
  422: 'The path parameter is invalid (`invalid_ip`, `non_public_ip`, `invalid_domain`, `invalid_asn`).',
  429: '`rate_limited`: wait `Retry-After` seconds.',
  500: '`internal_error`: retry once.',
  503: '`release_unavailable` (no lookup data loaded: retry later) or `service_unavailable` (wait `Retry-After` seconds).',
};

const ref = (id: string) => ({ $ref: `#/components/schemas/${id}` });
const json = (schema: JsonSchema) => ({ 'application/json': { schema } });

const integerHeader = (description: string) => ({ description, schema: { type: 'integer' } });
const REQUEST_ID_HEADER = {
  description: 'Identifies the request in logs and support requests.',
  schema: { type: 'string' },
};
const LIMIT_HEADERS = {
  'X-RateLimit-Limit': integerHeader('Requests per minute of the plan.'),
  'X-RateLimit-Remaining': integerHeader('Requests left in the current minute.'),
  'X-RateLimit-Reset': integerHeader('Seconds until the per-minute window resets.'),
  'X-Quota-Limit': integerHeader('Requests per month of the workspace.'),
  'X-Quota-Used': integerHeader('Requests used this month.'),
  'X-Quota-Remaining': integerHeader('Requests left this month.'),
};
const RETRY_AFTER = { 'Retry-After': integerHeader('Seconds to wait before retrying.') };

function strip(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

function parameters(object: z.ZodObject | undefined, where: 'path' | 'query'): JsonSchema[] {
  if (!object) return [];
  return Object.entries(object.shape).map(([name, field]) => {
    // Output side: the parameter as the route receives it (typed, with its default).
    const schema = strip(z.toJSONSchema(field as z.ZodType, { target: 'draft-2020-12', io: 'output' }));
    const { description, examples, ...rest } = schema as JsonSchema & {
      description?: string;
      examples?: unknown[];
    };
    const required = where === 'path' || !(field as z.ZodType).safeParse(undefined).success;
    return {
      name,
      in: where,
      required,
      ...(description ? { description } : {}),
      ...(examples && examples.length > 0 ? { example: examples[0] } : {}),
      schema: rest,
    };
  });
}

function responses(op: OperationSpec): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const status of op.successStatuses ?? [200]) {
    out[String(status)] = {
      description: status === 200 ? 'OK' : 'Unhealthy: the accounts database does not answer.',
      headers: { 'X-Request-ID': REQUEST_ID_HEADER, ...(op.secured ? LIMIT_HEADERS : {}) },
      content: json(ref(op.response)),
    };
  }
  for (const status of [...op.errors, 500]) {
    const error =
      status === 422 && op.validatesQuery ? { oneOf: [ref('Error'), ref('ValidationError')] } : ref('Error');
    const description =
      status === 422 && op.validatesQuery
        ? `${STATUS_TEXT[422]} Or \`{detail: [...]}\` for a query parameter out of range (limit 1 to 1000, cursor over 1024 characters).`
        : STATUS_TEXT[status];
    out[String(status)] = {
      description,
      headers: {
        'X-Request-ID': REQUEST_ID_HEADER,
        ...(status === 429 || status === 503 ? RETRY_AFTER : {}),
      },
      content: json(error),
    };
  }
  return out;
}

export function buildOpenApiDocument(): Record<string, unknown> {
  const components = z.toJSONSchema(apiRegistry, {
    target: 'draft-2020-12',
    uri: (id) => `#/components/schemas/${id}`,
  }).schemas;
  const schemas = Object.fromEntries(
    Object.entries(components).map(([id, schema]) => [id, strip(schema as JsonSchema)]),
  );
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of OPERATIONS) {
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      description: op.description,
      tags: [op.tag],
      parameters: [...parameters(op.pathParams, 'path'), ...parameters(op.query, 'query')],
      responses: responses(op),
      security: op.secured ? [{ bearerAuth: [] }] : [],
    };
  }
  return {
    openapi: '3.1.0',
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: 'ipscope: public IP, domain DNS-observation and ASN lookups',
      version: API_VERSION,
      description:
        'Answers from DNS answers the service records itself, IP ranges that cloud, hosting and CDN providers publish, usage lists operators publish and an imported IP-to-ASN mapping. `null` means unknown, never false; an empty list means not observed here. A plain-text guide for agents is at /llms-full.txt.',
    },
    servers: [{ url: '/' }],
    tags: [{ name: 'IP' }, { name: 'Domain' }, { name: 'ASN' }, { name: 'Service' }],
    security: [{ bearerAuth: [] }],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'An API key (starts with `sk_`) from the console, as `Authorization: Bearer <API_KEY>`. Never in the URL.',
        },
      },
    },
  };
}
