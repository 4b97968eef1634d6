/**
 * The call envelope: one operation call for one caller, in SPEC.md's order, for every transport
 * (REST routes, the fast lane, the MCP SDK path, the MCP plain-call path). The transports only
 * translate: they find the caller (the key check), hand in the raw arguments, and write the
 * outcome in their own form.
 *
 * 1. The key: a caller whose key was refused gets that refusal (401, or 429 from the refused-key
 *    throttle) and nothing else happens.
 * 2. The parameters, then the lookup (parse errors and lookup refusals are kept, not yet answered).
 * 3. One unit reserved. A meter refusal (429, 402, 503) is the answer whatever step 2 found: the
 *    limits come before the parameters, as they always have on the wire.
 * 4. The unit settled: an answered, billable lookup commits it; a refused or unbilled one (a bogon
 *    lookup_ip) releases it. The outcome carries the final limit headers (Reservation.commit /
 *    release return them).
 *
 * The lookup runs before the unit is reserved, with the page size the principal's plan suggests;
 * when the reservation's plan allows a different page for the requested limit, it runs again (a
 * plan whose page size is below the request).
 *
 * call() returns the outcome at once when the meter can grant without waiting (the fast lane's
 * synchronous path), otherwise a promise of it.
 */
import type { KeyPrincipal } from '../../accounts/index.js';
import { ApiError } from '../../shared/errors.js';
import {
  ArgumentError,
  parseToolArguments,
  queryStringSchema,
  type CallArguments,
  type Operation,
  type RunContext,
} from '../../shared/operations.js';
import type { Release } from '../../shared/queries/index.js';
import { answerOf, type Answer } from './answer-cache.js';
import { SETTLED, type Meter, type Reservation } from '../metering.js';
import { pageLimit } from './page-size.js';
import { QueryValidationError, parseQuery, type ValidationIssue } from './query-params.js';

/** The key check's outcome, found by the transport. */
export type Caller =
  { principal: KeyPrincipal; refusal?: undefined } | { principal: null; refusal: ApiError };

/** The arguments as the transport received them. */
export type RawArguments =
  { from: 'rest'; path: string | undefined; query: unknown } | { from: 'tool'; args: unknown };

/** Why a call was not answered, in every form a transport writes it. */
export interface Refusal {
  /** The Errors-table code, or `invalid_arguments` for an MCP argument REST answers with `detail`. */
  code: string;
  message: string;
  /** The REST body: `{error, message}`, or `{detail: [...]}` for a query parameter out of range. */
  body: { error: string; message: string } | { detail: ValidationIssue[] };
}

export interface CallOutcome {
  status: number;
  /** Limit headers (final) and Retry-After, to add to the transport's own. */
  headers: Readonly<Record<string, string>>;
  /** The answer of a 200. */
  answer: Answer | null;
  /** The refusal of any other status. */
  refusal: Refusal | null;
  /** Resolves once the counters have the unit's outcome. */
  settled: Promise<void>;
}

export interface CallOptions {
  /** The answer carries the response object (the MCP SDK path's structuredContent). */
  withValue?: boolean;
  /**
   * Only an answer is wanted (the fast paths): anything else returns null without a unit taken or
   * kept, and the transport leaves the request to the full path.
   */
  answersOnly?: boolean;
}

export interface EnvelopeDeps {
  releases: { current(): Release | null };
  meter: Meter;
  /** A refusal of the meter (429 rate_limited, 402 quota_exceeded or project_cap_exceeded), for the metrics. */
  onMeterRefusal?(code: string): void;
  /** A failure that is not a refusal (a bug): logged, answered 500 internal_error. */
  logError(error: unknown, op: Operation): void;
}

export interface Envelope {
  call(op: Operation, caller: Caller, raw: RawArguments, options?: CallOptions): Outcome;
}

export type Outcome = CallOutcome | null | Promise<CallOutcome | null>;

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export function createEnvelope(deps: EnvelopeDeps): Envelope {
  const restSchemas = new Map<Operation, ReturnType<typeof queryStringSchema>>();

  function parse(op: Operation, raw: RawArguments): CallArguments {
    if (raw.from === 'tool') return parseToolArguments(op, raw.args);
    let schema = restSchemas.get(op);
    if (schema === undefined) restSchemas.set(op, (schema = queryStringSchema(op)));
    const args = op.query.length === 0 ? {} : (parseQuery(schema, raw.query) as CallArguments);
    if (op.pathParameter !== undefined) args[op.pathParameter] = raw.path;
    return args;
  }

  /** A lookup and the page size it used, for a page-size ceiling. */
  function lookUp(
    op: Operation,
    args: CallArguments,
    release: Release | null,
    ceiling: (requested: number) => number,
    withValue: boolean,
  ): { answer: Answer; asked: number | undefined; used: number | undefined } {
    let asked: number | undefined;
    let used: number | undefined;
    const context: RunContext = {
      release,
      pageSize: (requested) => {
        asked = requested;
        return (used = ceiling(requested));
      },
    };
    return { answer: answerOf(op, args, context, withValue), asked, used };
  }

  function refusalOf(
    error: unknown,
    op: Operation,
  ): { status: number; refusal: Refusal; retryAfter?: number } {
    if (error instanceof ApiError) {
      return {
        status: error.status,
        refusal: { code: error.code, message: error.message, body: error.toBody() },
        ...(error.retryAfter !== undefined && { retryAfter: error.retryAfter }),
      };
    }
    if (error instanceof QueryValidationError) {
      return {
        status: 422,
        refusal: { code: 'invalid_arguments', message: error.message, body: { detail: error.detail } },
      };
    }
    if (error instanceof ArgumentError) {
      return {
        status: 422,
        refusal: {
          code: error.code,
          message: error.message,
          body: { error: error.code, message: error.message },
        },
      };
    }
    deps.logError(error, op);
    const internal = new ApiError('internal_error');
    return {
      status: 500,
      refusal: { code: internal.code, message: internal.message, body: internal.toBody() },
    };
  }

  function refused(
    error: unknown,
    op: Operation,
    headers: Readonly<Record<string, string>>,
    settled: Promise<void>,
  ): CallOutcome {
    const { status, refusal, retryAfter } = refusalOf(error, op);
    const withRetry = retryAfter === undefined ? headers : { ...headers, 'retry-after': String(retryAfter) };
    return { status, headers: withRetry, answer: null, refusal, settled };
  }

  function call(op: Operation, caller: Caller, raw: RawArguments, options: CallOptions = {}): Outcome {
    // 1. The key.
    if (caller.principal === null) {
      return options.answersOnly ? null : refused(caller.refusal, op, caller.refusal.headers, SETTLED);
    }
    const principal = caller.principal;
    const withValue = options.withValue === true;
    const release = deps.releases.current();
    // 2. The parameters and the lookup, with the page size the principal's plan suggests.
    let looked: ReturnType<typeof lookUp> | null = null;
    let failure: unknown;
    let args: CallArguments | undefined;
    try {
      args = parse(op, raw);
      looked = lookUp(op, args, release, (requested) => pageLimit(principal, requested), withValue);
    } catch (error) {
      failure = error;
    }
    if (looked === null && options.answersOnly) return null;

    // 4. Settle the unit (once granted) and give the outcome.
    const finish = (reservation: Reservation): CallOutcome | null => {
      if (looked !== null && looked.asked !== undefined) {
        const fits = Math.min(looked.asked, reservation.maxPageSize);
        if (fits !== looked.used) {
          // The plan's page differs from the one looked up: the page the plan gives.
          try {
            looked = lookUp(
              op,
              args!,
              release,
              (requested) => Math.min(requested, reservation.maxPageSize),
              withValue,
            );
          } catch (error) {
            looked = null;
            failure = error;
          }
        }
      }
      if (looked === null) {
        const settled = reservation.release();
        if (options.answersOnly) return null;
        return refused(failure, op, settled.headers, settled.done);
      }
      const answer = looked.answer;
      const settled = answer.billable ? reservation.commit() : reservation.release();
      return { status: 200, headers: settled.headers, answer, refusal: null, settled: settled.done };
    };
    const meterRefused = (error: unknown): CallOutcome | null => {
      if (options.answersOnly) return null;
      if (error instanceof ApiError && error.code !== 'service_unavailable')
        deps.onMeterRefusal?.(error.code);
      return refused(error, op, error instanceof ApiError ? error.headers : NO_HEADERS, SETTLED);
    };

    // 3. One unit: at once when the meter can grant it so, else waited for.
    const now = deps.meter.reserveNow?.(principal);
    if (now !== undefined) return finish(now);
    return deps.meter.reserve(principal).then(finish, meterRefused);
  }

  return { call };
}

/** True when an outcome must be waited for. */
export function isPending(outcome: Outcome): outcome is Promise<CallOutcome | null> {
  return outcome instanceof Promise;
}
