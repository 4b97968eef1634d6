/**
 * One operation of the OpenAPI document (server/api-docs/openapi.ts) before it is written out, and
 * the parameter objects of an operation of the table.
 */
import { z } from 'zod';
import type { Operation } from '../../shared/operations.js';
import { PATH_PARAMETERS, QUERY_PARAMETERS } from '../../shared/parameters.js';

export type JsonSchema = Record<string, unknown>;

export function strip(schema: JsonSchema): JsonSchema {
  const { $schema: _schema, $id: _id, ...rest } = schema;
  return rest;
}

export interface OperationSpec {
  method: 'get' | 'post';
  path: string;
  operationId: string;
  summary: string;
  description: string;
  tag: string;
  parameters: JsonSchema[];
  /** A component schema id, or the media types of a 200 written out (documents, MCP). */
  response: string | Record<string, unknown>;
  /** The browser-origin check runs (403 for foreign web pages): /v1 and /mcp. */
  origin: boolean;
  requestBody?: Record<string, unknown>;
  /** Statuses answered with bodies of their own (MCP's JSON-RPC errors, 202). */
  extraResponses?: Record<string, unknown>;
  /** Error statuses of this operation (docs/api.md#operations; 500 is added to every one). */
  errors: readonly number[];
  secured: boolean;
  /** The security scheme of a secured operation (default bearerAuth). */
  scheme?: string;
  /** 422 may also be the `detail` list of a query parameter out of range. */
  validatesQuery?: boolean;
  successStatuses?: number[];
}

/** The parameters of an operation, as OpenAPI parameter objects. */
export function parametersOf(op: Operation): JsonSchema[] {
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
    const schema = strip(z.toJSONSchema(p.schema, { target: 'draft-2020-12', io: 'input' }) as JsonSchema);
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
