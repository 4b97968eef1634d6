/**
 * The call envelope: one operation call, whole, for every transport (REST, MCP tools/call on its
 * fast path and through the SDK, the console's playground). A transport hands in what it read
 * (the operation, the key as sent, the client's address, the raw arguments) and writes the
 * result it gets back; everything between happens here, in this order (docs/api.md#authentication,
 * docs/decisions/0016):
 *
 * 1. The key: none, one in the URL, or one the accounts store does not accept is refused 401 and
 *    counted by the refused-key throttle (429 `rate_limited` with Retry-After once an address is
 *    over its limit); nothing else happens.
 * 2. The parameters (their refusal is kept, not yet answered).
 * 3. One unit reserved. A meter refusal (429, 402, 503) is the answer whatever step 2 found: the
 *    limits come before the parameters. Then the lookup, with the page the reservation's plan
 *    gives (its refusal is kept too).
 * 4. The unit settled: an answered, billable lookup commits it; a refused or unbilled one (a bogon
 *    lookup_ip) releases it. The result carries the final limit headers.
 * 5. The result goes to the transport's recipient once the counters have the unit: at once, in the same
 *    turn, when nothing had to be waited for (a key verified moments ago, a meter that grants in
 *    process); else when the key check, the meter or the counters have answered. Whether to wait
 *    is decided here only; transports never ask.
 *
 * The lookup runs once, after the unit is granted (docs/decisions/0016). Anything unexpected is
 * logged and answered 500 `internal_error`.
 */
import type { KeyPrincipal } from '../../accounts/index.js';
import { ApiError, QueryValidationError, type ValidationIssue } from '../../shared/errors.js';
import { type ChangeFeed, type Operation, type RunContext } from '../../shared/operations.js';
import { type CallArguments } from '../../shared/parameters.js';
import { codedRefusal, parseToolArguments, queryStringSchema } from '../../shared/arguments.js';
import type { Release } from '../../shared/queries/index.js';
import type { RefusedKeyThrottle } from '../limits/refused-keys.js';
import { SETTLED, type Meter, type Reservation } from '../limits/meter.js';
import { answerFor, answerOf, type Answer } from './answer-cache.js';
import { KEY_IN_URL_MESSAGE, type AccountsPort } from './keys.js';
import { pageLimit } from './page-size.js';
import { parseQuery } from './query-params.js';

/** Who makes the call: the key as the transport read it, or a principal the console vouches for. */
export type Credential = { token: string | null; keyInUrl: boolean } | { principal: KeyPrincipal };

/** The arguments as the transport received them. */
export type RawArguments =
  { from: 'rest'; path: string | undefined; query: unknown } | { from: 'tool'; args: unknown };

/** Where a call comes from: read only when a key is refused (the refused-key throttle counts by it). */
export interface Client {
  clientAddress(): string | undefined;
}

/** What a transport read of one call. */
export interface CallFacts {
  op: Operation;
  credential: Credential;
  client: Client;
  args: RawArguments;
  /** The answer carries the response object (the MCP SDK path's structuredContent). */
  withValue?: boolean;
}

/** Why a call was not answered, in every form a transport writes it. */
export interface Refusal {
  /** The error code (`invalid_arguments` for what REST answers with a `detail` list). */
  code: string;
  message: string;
  /** The REST body: `{error, message}`, or `{detail: [...]}` for a query parameter out of range. */
  body: { error: string; message: string } | { detail: ValidationIssue[] };
}

export interface CallResult {
  status: number;
  /** Limit headers (final) and Retry-After, to add to the transport's own. */
  headers: Readonly<Record<string, string>>;
  /** The answer of a 200. */
  answer: Answer | null;
  /** The refusal of any other status. */
  refusal: Refusal | null;
}

/** Who gets a call's result (an HTTP exchange, an MCP call, the console's playground). */
export interface Recipient {
  result(result: CallResult): void;
}

export interface EnvelopeDeps {
  releases: { current(): Release | null };
  /** The key check (server/limits/key-verifier.ts in a server). */
  accounts: AccountsPort;
  meter: Meter;
  /** The change feed of the accounts store (list_changes); none: that operation answers 503. */
  changes?: ChangeFeed | undefined;
  /** Too many refused keys from one address answer rate_limited; none: not throttled. */
  refusedKeys?: RefusedKeyThrottle | undefined;
  /** A refusal of the meter (429 rate_limited, 402 quota_exceeded or project_cap_exceeded), for the metrics. */
  onMeterRefusal?: ((code: string) => void) | undefined;
  /** A failure that is not a refusal (a bug): logged, answered 500 internal_error. */
  logError(error: unknown, op: Operation | null): void;
}

export interface Envelope {
  /** Runs the call; `to` gets its result once (see the steps above); never throws. */
  call(facts: CallFacts, to: Recipient): void;
  /** A URL carrying something shaped like a key, on a route with no operation: 401, or 429. */
  refuseKeyInUrl(clientAddress: string | undefined, to: Recipient): void;
  /** The result of an error a transport met itself (413 over the body limit, a failure: 500). */
  errorResult(error: unknown): CallResult;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** Whether a parsed query string has no parameters at all. */
function isEmptyQuery(query: unknown): boolean {
  if (query === null || query === undefined) return true;
  for (const _name in query as object) return false;
  return true;
}

export function createEnvelope(deps: EnvelopeDeps): Envelope {
  const restSchemas = new Map<Operation, ReturnType<typeof queryStringSchema>>();
  const emptyArgs = new Map<Operation, CallArguments>();

  function parse(op: Operation, raw: RawArguments): CallArguments {
    if (raw.from === 'tool') return parseToolArguments(op, raw.args);
    let schema = restSchemas.get(op);
    if (schema === undefined) restSchemas.set(op, (schema = queryStringSchema(op)));
    let args: CallArguments = {};
    try {
      if (op.query.length > 0 && isEmptyQuery(raw.query)) {
        // No query string (most lookups): the arguments of an empty one, parsed once per operation.
        let empty = emptyArgs.get(op);
        if (empty === undefined) emptyArgs.set(op, (empty = parseQuery(schema, {}) as CallArguments));
        args = { ...empty };
      } else if (op.query.length > 0) args = parseQuery(schema, raw.query) as CallArguments;
    } catch (error) {
      // A parameter with a code of its own (as_of) is refused with it, not in the detail list.
      const coded =
        error instanceof QueryValidationError &&
        codedRefusal(
          op,
          error.detail.map((d) => d.loc[1]!),
        );
      throw coded || error;
    }
    if (op.pathParameter !== undefined) args[op.pathParameter] = raw.path;
    return args;
  }

  /** The refusal of `error`: its own status and body, or 500 for anything that is not a refusal. */
  function errorResult(error: unknown, op: Operation | null = null, headers = NO_HEADERS): CallResult {
    let status: number;
    let refusal: Refusal;
    let retryAfter: number | undefined;
    if (error instanceof ApiError) {
      status = error.status;
      refusal = { code: error.code, message: error.message, body: error.toBody() };
      retryAfter = error.retryAfter;
    } else if (error instanceof QueryValidationError) {
      status = 422;
      refusal = { code: 'invalid_arguments', message: error.message, body: { detail: error.detail } };
    } else {
      deps.logError(error, op);
      const internal = new ApiError('internal_error');
      status = 500;
      refusal = { code: internal.code, message: internal.message, body: internal.toBody() };
    }
    const withRetry = retryAfter === undefined ? headers : { ...headers, 'retry-after': String(retryAfter) };
    return { status, headers: withRetry, answer: null, refusal };
  }

  /** A refused key: counted by the throttle, then 401 (or 429 once the address is over its limit). */
  function refuseKey(address: string | undefined, message: string | undefined, to: Recipient): void {
    const refusal = new ApiError('unauthorized', message);
    const throttle = deps.refusedKeys;
    if (throttle === undefined) return to.result(errorResult(refusal));
    throttle.refused(address).then(
      () => to.result(errorResult(refusal)),
      (error: unknown) => to.result(errorResult(error)),
    );
  }

  /** Step 3: the unit reserved, then `finish`; a meter refusal is the answer. */
  function reserve(principal: KeyPrincipal, op: Operation, to: Recipient, finish: (r: Reservation) => void) {
    let now: Reservation | undefined;
    try {
      now = deps.meter.reserveNow?.(principal);
    } catch (error) {
      return to.result(errorResult(error, op));
    }
    if (now !== undefined) return finish(now);
    deps.meter.reserve(principal).then(finish, (error: unknown) => {
      if (error instanceof ApiError && error.code !== 'service_unavailable')
        deps.onMeterRefusal?.(error.code);
      to.result(errorResult(error, op, error instanceof ApiError ? error.headers : NO_HEADERS));
    });
  }

  /**
   * Steps 4 and 5: the unit settled (an answered, billable lookup commits it, anything else
   * releases it), then the result, once the counters have the unit.
   */
  function settle(
    op: Operation,
    reservation: Reservation,
    answer: Answer | null,
    failure: unknown,
    to: Recipient,
  ) {
    let result: CallResult;
    let done: Promise<void>;
    try {
      const settled = answer?.billable ? reservation.commit() : reservation.release();
      result =
        answer === null
          ? errorResult(failure, op, settled.headers)
          : { status: 200, headers: settled.headers, answer, refusal: null };
      done = settled.done;
    } catch (error) {
      return to.result(errorResult(error, op));
    }
    // The counters have the unit before the client hears of it.
    if (done === SETTLED) return to.result(result);
    done.then(
      () => to.result(result),
      (error: unknown) => to.result(errorResult(error, op)),
    );
  }

  /**
   * Steps 2 to 5 for a caller whose key was accepted: the parameters, the unit reserved, then the
   * lookup (or the load from the accounts store, for the change feed) with the page the
   * reservation's plan gives: one lookup per call, whichever plan the reservation finds.
   */
  function callAs(principal: KeyPrincipal, facts: CallFacts, to: Recipient): void {
    const { op } = facts;
    let args: CallArguments | undefined;
    let failure: unknown;
    try {
      args = parse(op, facts.args);
    } catch (error) {
      failure = error;
    }
    reserve(principal, op, to, (reservation) => {
      if (failure !== undefined) return settle(op, reservation, null, failure, to);
      const withValue = facts.withValue === true;
      if (op.load === undefined) {
        let answer: Answer | null = null;
        try {
          const context: RunContext = {
            release: deps.releases.current(),
            pageSize: (requested) => Math.min(requested, reservation.maxPageSize),
          };
          answer = answerOf(op, args!, context, withValue);
        } catch (error) {
          failure = error;
        }
        return settle(op, reservation, answer, failure, to);
      }
      const context: RunContext = {
        release: null,
        pageSize: (requested) => Math.min(pageLimit(principal, requested), reservation.maxPageSize),
        projectId: principal.projectId,
        changes: deps.changes,
      };
      let loading: Promise<object>;
      try {
        loading = op.load(args!, context);
      } catch (error) {
        return settle(op, reservation, null, error, to);
      }
      const answered = (value: object) => {
        let answer: Answer;
        try {
          answer = answerFor(op, value, withValue);
        } catch (error) {
          return settle(op, reservation, null, error, to);
        }
        settle(op, reservation, answer, undefined, to);
      };
      loading.then(answered, (error: unknown) => settle(op, reservation, null, error, to));
    });
  }

  function call(facts: CallFacts, to: Recipient): void {
    const credential = facts.credential;
    if ('principal' in credential) return callAs(credential.principal, facts, to);
    if (credential.keyInUrl) return refuseKey(facts.client.clientAddress(), KEY_IN_URL_MESSAGE, to);
    const token = credential.token;
    if (token === null) return refuseKey(facts.client.clientAddress(), undefined, to);
    let known: KeyPrincipal | undefined;
    try {
      known = deps.accounts.peekKey?.(token);
    } catch (error) {
      return to.result(errorResult(error, facts.op));
    }
    if (known !== undefined) return callAs(known, facts, to);
    // The client's address now: a socket closed during a slow key check no longer has one.
    let address: string | undefined;
    try {
      address = facts.client.clientAddress();
    } catch {
      address = undefined;
    }
    deps.accounts.verifyKey(token).then(
      (principal) => (principal === null ? refuseKey(address, undefined, to) : callAs(principal, facts, to)),
      // The store does not answer: 503 service_unavailable (server/limits/key-verifier.ts), or a bug.
      (error: unknown) => to.result(errorResult(error, facts.op)),
    );
  }

  return {
    call,
    refuseKeyInUrl: (address, to) => refuseKey(address, KEY_IN_URL_MESSAGE, to),
    errorResult: (error) => errorResult(error),
  };
}
