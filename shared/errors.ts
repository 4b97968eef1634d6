/**
 * Every error of the API in one place (docs/api.md#errors): the error table (code -> HTTP status ->
 * default message) and the two error types refusals are thrown as. Every refusal, REST or MCP, is
 * an ApiError rendered as `{error, message}` (messages say how to fix it), but for a REST query
 * parameter out of range, a QueryValidationError rendered as the framework's `{detail: [...]}`.
 */
export const ERROR_TABLE = {
  invalid_cursor: {
    status: 400,
    message:
      'cursor was not issued for this query: resend the query the cursor came from, or start without a cursor',
  },
  unauthorized: {
    status: 401,
    message: 'missing or invalid API key: send the header "Authorization: Bearer <API_KEY>"',
  },
  quota_exceeded: {
    status: 402,
    message: 'the workspace used its monthly quota: wait for the start of next month (UTC)',
  },
  project_cap_exceeded: {
    status: 402,
    message: "the key's project reached its own monthly cap: raise or remove the cap",
  },
  cursor_expired: {
    status: 410,
    message: 'the data release changed since the cursor was issued: restart without a cursor',
  },
  payload_too_large: { status: 413, message: 'request body over 1 MiB: send less' },
  invalid_ip: { status: 422, message: 'not one IPv4 or IPv6 address: send a single address, not a range' },
  non_public_ip: {
    status: 422,
    message: 'private, reserved or other special-purpose address: this call needs a public address',
  },
  invalid_domain: {
    status: 422,
    message: 'not a hostname with at least two labels: send a name without scheme or path, e.g. example.com',
  },
  invalid_asn: {
    status: 422,
    message: 'not an AS number from 1 to 4294967295: send 64500 or AS64500',
  },
  as_of_out_of_range: {
    status: 422,
    message:
      'as_of is not a moment this release answers for: send an ISO 8601 date or timestamp in UTC, e.g. 2026-10-05 or 2026-10-05T12:00:00Z, from the oldest release kept to now',
  },
  /**
   * MCP only: a tool argument other than the looked-up thing is out of range or of the wrong type
   * (what REST answers with a `{detail}` list, which has no code); the message names the argument.
   */
  invalid_arguments: {
    status: 422,
    message: 'an argument is out of range or of the wrong type',
    mcpOnly: true,
  },
  rate_limited: { status: 429, message: 'too many requests: wait Retry-After seconds' },
  internal_error: { status: 500, message: 'internal error: retry once' },
  release_unavailable: {
    status: 503,
    message: 'no lookup data loaded: retry later (operators: run "npx builder release")',
  },
  service_unavailable: { status: 503, message: 'service briefly unavailable: wait Retry-After seconds' },
} as const;

export type ErrorCode = keyof typeof ERROR_TABLE;

/** The codes REST answers with (all but the MCP-only ones), in the table's order. */
export const REST_ERROR_CODES: readonly ErrorCode[] = (Object.keys(ERROR_TABLE) as ErrorCode[]).filter(
  (code) => !('mcpOnly' in ERROR_TABLE[code]),
);

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  /** Seconds for a Retry-After header (429, 503). */
  readonly retryAfter: number | undefined;
  /** Response headers the refusal carries (a meter refusal: the limit headers). */
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    code: ErrorCode,
    message?: string,
    options: { retryAfter?: number; headers?: Readonly<Record<string, string>> } = {},
  ) {
    super(message ?? ERROR_TABLE[code].message);
    this.name = 'ApiError';
    this.code = code;
    this.status = ERROR_TABLE[code].status;
    this.retryAfter = options.retryAfter;
    this.headers = options.headers ?? NO_HEADERS;
  }

  toBody(): { error: ErrorCode; message: string } {
    return { error: this.code, message: this.message };
  }
}

/** One item of a 422 `{detail: [...]}` body: where (`["query", name]`), what, and its kind. */
export interface ValidationIssue {
  loc: Array<string | number>;
  msg: string;
  type: string;
}

/** REST query parameters out of range: 422 `{detail: [...]}`, one item per bad parameter. */
export class QueryValidationError extends Error {
  override name = 'QueryValidationError';
  constructor(readonly detail: ValidationIssue[]) {
    super(detail.map((d) => `${d.loc.join('.')}: ${d.msg}`).join('; '));
  }
}
