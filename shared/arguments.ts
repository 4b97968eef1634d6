/**
 * The argument schemas of an operation, derived from its parameters (shared/parameters.ts): the MCP
 * input schema (JSON types), the REST query-string schema (text parsed into those types), and the
 * parsing of a tool call's arguments with the error codes of the error table.
 */
import { z } from 'zod';
import { ApiError } from './errors.js';
import { TOOLS, type Operation } from './operations.js';
import { PATH_PARAMETERS, QUERY_PARAMETERS, type CallArguments, type QueryParameter } from './parameters.js';

/** The MCP input schema of a tool: the path parameter and the query parameters, JSON-typed. */
export function argumentSchema(op: Operation): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  if (op.pathParameter) {
    const p = PATH_PARAMETERS[op.pathParameter];
    shape[op.pathParameter] = p.schema.meta({ description: p.description });
  }
  for (const name of op.query) {
    const p = QUERY_PARAMETERS[name];
    shape[name] = p.schema.optional().meta({ description: p.description });
  }
  return z.object(shape);
}

/** Query-string integers: digits only (no sign, exponent, blank or fraction); seconds may be negative. */
const DIGITS = /^[0-9]{1,10}$/;
const SECONDS = /^-?[0-9]{1,12}$/;

/**
 * The REST query-string schema of an operation: each query parameter's text parsed into its JSON
 * type (`true`/`false`; digits), then checked against the same schema, with its fallback.
 */
export function queryStringSchema(op: Operation): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const name of [...op.query, ...(op.pathTail ?? [])]) {
    const p: QueryParameter = QUERY_PARAMETERS[name];
    let field: z.ZodType;
    if (p.kind === 'boolean') field = z.stringbool({ truthy: ['true'], falsy: ['false'] });
    else if (p.kind === 'integer' || p.kind === 'seconds') {
      const form = p.kind === 'integer' ? DIGITS : SECONDS;
      field = z.preprocess((v) => (typeof v === 'string' && form.test(v) ? Number(v) : v), p.schema);
    } else field = p.schema;
    field = p.fallback === undefined ? field.optional() : field.default(p.fallback as never);
    shape[name] = field.meta({ description: p.description });
  }
  return z.object(shape);
}

/**
 * The arguments of an MCP tool call parsed with its input schema. A bad value of the looked-up
 * thing (ip, domain, asn) gets that thing's error code; any other bad argument the code
 * `invalid_arguments` (REST answers those with a 422 `detail` list instead).
 */
const TOOL_SCHEMAS = new Map(TOOLS.map((op) => [op.id, argumentSchema(op)]));

export function parseToolArguments(op: Operation, raw: unknown): CallArguments {
  const schema = TOOL_SCHEMAS.get(op.id) ?? argumentSchema(op);
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data as CallArguments;
  const issue = result.error.issues[0]!;
  const field = typeof issue.path[0] === 'string' ? issue.path[0] : '';
  if (op.pathParameter !== undefined && field === op.pathParameter)
    throw new ApiError(PATH_PARAMETERS[op.pathParameter].code);
  const coded = codedRefusal(op, [field]);
  if (coded !== null) throw coded;
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw new ApiError('invalid_arguments', `${where}${argumentMessage(issue)}`);
}

function argumentMessage(issue: z.core.$ZodIssue): string {
  switch (issue.code) {
    case 'too_small':
      return `should be at least ${issue.minimum}`;
    case 'too_big':
      return issue.origin === 'string'
        ? `should have at most ${issue.maximum} characters`
        : `should be at most ${issue.maximum}`;
    case 'invalid_type':
      return issue.expected === 'int' ? 'should be an integer' : `should be a ${issue.expected}`;
    default:
      return issue.message;
  }
}

/**
 * The refusal of a bad value of a query parameter that has an Errors-table code of its own (as_of:
 * as_of_out_of_range), when one of `names` (the parameters with a bad value) is such a parameter;
 * null when none is. REST and MCP refuse it with that code instead of their generic refusal.
 */
export function codedRefusal(op: Operation, names: ReadonlyArray<string | number>): ApiError | null {
  for (const name of names) {
    if (typeof name !== 'string' || !(op.query as readonly string[]).includes(name)) continue;
    const p: QueryParameter = QUERY_PARAMETERS[name as keyof typeof QUERY_PARAMETERS];
    if (p.code !== undefined) return new ApiError(p.code);
  }
  return null;
}
