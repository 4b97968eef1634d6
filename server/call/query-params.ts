/**
 * REST query-parameter validation with the framework-level 422 body (docs/api.md#errors):
 * `{detail: [{loc: ["query", name], msg, type}]}`, one item per bad parameter. Path parameters are
 * checked by the query layer (invalid_ip, invalid_domain, …), not here.
 */
import type { z } from 'zod';
import { QueryValidationError, type ValidationIssue } from '../../shared/errors.js';

/** Parses the query string with `schema`; unknown parameters are ignored, as FastAPI does. */
export function parseQuery<S extends z.ZodType>(schema: S, query: unknown): z.output<S> {
  const result = schema.safeParse(query ?? {});
  if (result.success) return result.data;
  throw new QueryValidationError(result.error.issues.map(toValidationIssue));
}

function toValidationIssue(issue: z.core.$ZodIssue): ValidationIssue {
  const loc = ['query', ...issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p))];
  switch (issue.code) {
    case 'too_small':
      return issue.origin === 'string'
        ? { loc, msg: `String should have at least ${issue.minimum} characters`, type: 'string_too_short' }
        : {
            loc,
            msg: `Input should be greater than or equal to ${issue.minimum}`,
            type: 'greater_than_equal',
          };
    case 'too_big':
      return issue.origin === 'string'
        ? { loc, msg: `String should have at most ${issue.maximum} characters`, type: 'string_too_long' }
        : { loc, msg: `Input should be less than or equal to ${issue.maximum}`, type: 'less_than_equal' };
    case 'invalid_type':
      if (issue.expected === 'number' || issue.expected === 'int')
        return {
          loc,
          msg: 'Input should be a valid integer, unable to parse string as an integer',
          type: 'int_parsing',
        };
      if (issue.expected === 'string')
        return { loc, msg: 'Input should be a valid string', type: 'string_type' };
      return { loc, msg: issue.message, type: `${issue.expected}_type` };
    case 'invalid_value':
      return {
        loc,
        msg: 'Input should be a valid boolean, unable to interpret input (send true or false)',
        type: 'bool_parsing',
      };
    default:
      return { loc, msg: issue.message, type: 'value_error' };
  }
}
