/**
 * The OpenAPI 3.1 description served at /v1/openapi.json: the operations of the table
 * (shared/operations.ts) with their parameters and the error statuses SPEC.md lists per operation,
 * the unkeyed routes, and the response schemas of shared/api-schemas.ts.
 */
import { z } from 'zod';
import { apiRegistry } from '../shared/api-schemas.js';
import { OPERATIONS, PATH_PARAMETERS, QUERY_PARAMETERS, type Operation } from '../shared/operations.js';

export const API_VERSION = '1.0.0';

type JsonSchema = Record<string, unknown>;

interface OperationSpec {
  method: 'get';
  path: string;
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  parameters: JsonSchema[];
  response: string;
  /** Error statuses of SPEC.md "Endpoints" for this operation (500 is added to every one). */
  errors: readonly number[];
  secured: boolean;
  /** 422 may also be the `detail` list of a query parameter out of range. */
  validatesQuery?: boolean;
  successStatuses?: number[];
}

/** The parameters of an operation, as OpenAPI parameter objects. */
function parametersOf(op: Operation): JsonSchema[] {
  const out: JsonSchema[] = [];
  if (op.pathParameter !== undefined) {
    const p = PATH_PARAMETERS[op.pathParameter];
    out.push({
      name: op.pathParameter,
      in: 'path',
      required: true,
      description: p.description,
      example: p.examples[0],
      schema: { type: 'string' },
    });
  }
  for (const name of op.query) {
    const p = QUERY_PARAMETERS[name];
    const schema = strip(z.toJSONSchema(p.schema, { target: 'draft-2020-12' }) as JsonSchema);
    out.push({
      name,
      in: 'query',
      required: false,
      description: p.description,
      schema: 'fallback' in p ? { ...schema, default: p.fallback } : schema,
    });
  }
  return out;
}

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
    validatesQuery: op.query.length > 0,
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
  for (const op of OPERATION_SPECS) {
    paths[op.path] ??= {};
    paths[op.path]![op.method] = {
      operationId: op.operationId,
      summary: op.summary,
      description: op.description,
      tags: [op.tag],
      parameters: op.parameters,
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
