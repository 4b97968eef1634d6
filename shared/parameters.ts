/**
 * The parameters of the operations, declared once (docs/api.md#operations): their JSON type (the
 * MCP argument), from which the REST query-string form (strings coerced, shared/arguments.ts) and
 * the CLI option (builder/query-command.ts) are derived.
 */
import { z } from 'zod';
import type { ErrorCode } from './errors.js';
import { DEFAULT_LIMIT, MAX_CURSOR_LENGTH, MAX_LIMIT } from './queries/paging.js';
import { parseInstant } from './time.js';
import { DNSDB_MAX_OFFSET, DNSDB_RRTYPES, type DnsdbRrtype } from './queries/dnsdb.js';
import { EVENT_ID_RE, EVENT_KINDS, type EventKind } from './watch-events.js';

interface ParameterBase {
  description: string;
  examples?: string[];
}

/** A path parameter: always a string on the wire; the query layer checks it (its error code). */
export interface PathParameter extends ParameterBase {
  in: 'path';
  /** The MCP argument's type (lookup_asn also takes a number). */
  schema: z.ZodType;
  /** The Errors-table code of a bad value (the query layer throws it; MCP uses it for a wrong type). */
  code: ErrorCode;
}

/** A query parameter: its JSON type; the REST form parses the query-string text into it. */
export interface QueryParameter extends ParameterBase {
  in: 'query';
  /**
   * `time`: an ISO 8601 date or timestamp in UTC, parsed to epoch seconds (shared/time.ts
   * parseInstant); as_of keeps the text, which the as-of query parses.
   */
  kind: 'boolean' | 'integer' | 'seconds' | 'string' | 'time';
  /** The value's JSON schema, with its range (the parameter itself is optional). */
  schema: z.ZodType;
  /** The value when the parameter is absent (undefined: none). */
  fallback?: boolean | number | string;
  /**
   * The Errors-table code of a bad value: REST and MCP refuse it with this code (an ApiError), not
   * with the `{detail}` list or `invalid_arguments`; the query layer checks the value itself.
   */
  code?: ErrorCode;
}

export type Parameter = PathParameter | QueryParameter;

export const PATH_PARAMETERS = {
  ip: {
    in: 'path',
    schema: z.string(),
    code: 'invalid_ip',
    description:
      'One public IPv4 or IPv6 address (an IPv4-mapped IPv6 address is looked up as IPv4); not a CIDR range.',
    examples: ['8.8.8.8', '2606:4700:4700::1111'],
  },
  domain: {
    in: 'path',
    schema: z.string(),
    code: 'invalid_domain',
    description:
      'A hostname with at least two labels, e.g. example.com; lowercased, trailing dot dropped, Unicode labels punycoded; no scheme, port or path.',
    examples: ['example.com'],
  },
  asn: {
    in: 'path',
    schema: z.union([z.string(), z.number().int()]),
    code: 'invalid_asn',
    description: 'An AS number from 1 to 4294967295, as 64500 or AS64500.',
    examples: ['AS13335', '15169'],
  },
  name: {
    in: 'path',
    schema: z.string(),
    code: 'invalid_domain',
    description: 'The owner name of the records (DNSDB form: a trailing dot is allowed).',
    examples: ['example.com'],
  },
  rdata_ip: {
    in: 'path',
    schema: z.string(),
    code: 'invalid_ip',
    description:
      'An IPv4 or IPv6 address, or a prefix in the DNSDB form ADDRESS,LENGTH (IPv4 /8 to /32, IPv6 /16 to /128).',
    examples: ['104.16.132.229', '104.16.132.0,24'],
  },
} as const satisfies Record<string, PathParameter>;

/** A DNSDB time bound: epoch seconds, or a negative number of seconds before now. */
function dnsdbTime(what: string) {
  return {
    in: 'query',
    kind: 'seconds',
    schema: z.number().int().min(-DNSDB_TIME_MAX).max(DNSDB_TIME_MAX),
    description: `DNSDB: only records ${what} this moment (epoch seconds; negative: seconds before now).`,
  } as const;
}

/** The largest DNSDB time bound (9999-12-31T23:59:59Z). */
const DNSDB_TIME_MAX = 253_402_300_799;

/** An ISO 8601 date or timestamp in UTC, as epoch seconds. */
const instant = z
  .string()
  .max(40)
  .transform((text, ctx) => {
    const epoch = parseInstant(text);
    if (epoch === null) {
      ctx.addIssue({
        code: 'custom',
        message:
          'Input should be an ISO 8601 date or timestamp in UTC, e.g. 2026-10-05 or 2026-10-05T12:00:00Z',
      });
      return z.NEVER;
    }
    return epoch;
  });

/** The change feed's `since`: an event id as given, or a moment as epoch seconds. */
const since = z
  .string()
  .max(40)
  .transform((text, ctx): string | number => {
    if (EVENT_ID_RE.test(text)) return text;
    const epoch = parseInstant(text);
    if (epoch !== null) return epoch;
    ctx.addIssue({
      code: 'custom',
      message: 'Input should be an event id (evt_…) or an ISO 8601 date or timestamp in UTC, e.g. 2026-10-05',
    });
    return z.NEVER;
  });

/** The change feed's `kind`: one event kind or several, comma separated. */
const kinds = z
  .string()
  .max(400)
  .transform((text, ctx): EventKind[] => {
    const list = text.split(',').map((k) => k.trim());
    const unknown = list.filter((k) => !(EVENT_KINDS as readonly string[]).includes(k));
    if (unknown.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message: `Input should be event kinds among ${EVENT_KINDS.join(', ')}`,
      });
      return z.NEVER;
    }
    return list as EventKind[];
  });

export const QUERY_PARAMETERS = {
  include_ended: {
    in: 'query',
    kind: 'boolean',
    schema: z.boolean(),
    fallback: false,
    description: 'true also lists ended answer intervals; default false lists current ones only.',
  },
  limit: {
    in: 'query',
    kind: 'integer',
    schema: z.number().int().min(1).max(MAX_LIMIT),
    fallback: DEFAULT_LIMIT,
    description: `Items per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}); free keys get at most 100 per page: a larger value is lowered and next_cursor continues.`,
  },
  cursor: {
    in: 'query',
    kind: 'string',
    schema: z.string().max(MAX_CURSOR_LENGTH),
    description:
      "The previous page's next_cursor, unchanged, with the same other arguments; omit for the first page. Expires (cursor_expired, 410) when the release changes.",
  },
  from: {
    in: 'query',
    kind: 'time',
    schema: instant,
    description:
      'Only intervals seen at or after this moment (with strict: first seen at or after it): an ISO 8601 date or timestamp in UTC, e.g. 2026-10-05 (its first second) or 2026-10-05T12:00:00Z.',
  },
  to: {
    in: 'query',
    kind: 'time',
    schema: instant,
    description:
      'Only intervals first seen at or before this moment (with strict: last seen at or before it); same form as from, not before it.',
  },
  as_of: {
    in: 'query',
    kind: 'time',
    // The text as given: the as-of query parses it and refuses a malformed one, one in the future or
    // one before the oldest release kept with as_of_out_of_range, naming the range it accepts.
    schema: z.string().max(40),
    code: 'as_of_out_of_range',
    description:
      'Answer as this service answered at this moment (docs/api.md#as-of-a-past-moment): an ISO 8601 date or timestamp in UTC, e.g. 2026-10-05 (its first second) or 2026-10-05T12:00:00Z, from the oldest release kept to now; coverage.as_of echoes it. Omitted: the current answer.',
  },
  strict: {
    in: 'query',
    kind: 'boolean',
    schema: z.boolean(),
    fallback: false,
    description:
      'false (default): intervals overlapping the window from..to; true: intervals wholly inside it (first and last seen within it).',
  },
  rrtype: {
    in: 'query',
    kind: 'string',
    // DNSDB clients may send the type in either case (`/a`, `/A`).
    schema: z.preprocess((v) => (typeof v === 'string' ? v.toUpperCase() : v), z.enum(DNSDB_RRTYPES)),
    fallback: 'ANY',
    description: 'DNSDB: the record type, A, AAAA, CNAME or ANY (default).',
  },
  bailiwick: {
    in: 'query',
    kind: 'string',
    schema: z.string().max(255),
    description: 'DNSDB: accepted and not applied (bailiwicks are not recorded).',
  },
  offset: {
    in: 'query',
    kind: 'integer',
    schema: z.number().int().min(0).max(DNSDB_MAX_OFFSET),
    fallback: 0,
    description: `DNSDB: records to skip, 0 to ${DNSDB_MAX_OFFSET}.`,
  },
  since: {
    in: 'query',
    kind: 'string',
    schema: since,
    description:
      'Change feed: only events after this event id (evt_…, its position in the feed), or of releases built after this moment (an ISO 8601 date or timestamp in UTC); omit for the oldest events kept.',
  },
  kind: {
    in: 'query',
    kind: 'string',
    schema: kinds,
    description: `Change feed: only events of this kind, or of these kinds separated by commas (${EVENT_KINDS.join(', ')}).`,
  },
  subject: {
    in: 'query',
    kind: 'string',
    schema: z.string().max(300),
    description:
      'Change feed: only events of this watched subject: a domain, an IP address, a CIDR prefix or an AS number (AS13335 or 13335), as a watch entry names it.',
  },
  time_first_before: dnsdbTime('first seen at or before'),
  time_first_after: dnsdbTime('first seen at or after'),
  time_last_before: dnsdbTime('last seen at or before'),
  time_last_after: dnsdbTime('last seen at or after'),
} as const satisfies Record<string, QueryParameter>;

export type PathParameterName = keyof typeof PATH_PARAMETERS;
export type QueryParameterName = keyof typeof QUERY_PARAMETERS;

/** The arguments of a call once parsed: path parameters as given, query parameters typed. */
export interface CallArguments {
  ip?: string;
  domain?: string;
  asn?: string;
  include_ended?: boolean;
  limit?: number;
  cursor?: string | undefined;
  /** The time fence (epoch seconds): intervals seen in from..to (docs/api.md#time-fence). */
  from?: number;
  to?: number;
  strict?: boolean;
  /** The moment to answer as of, as given (ISO 8601): the as-of query checks it (docs/api.md#as-of-a-past-moment). */
  as_of?: string;
  /** The DNSDB form (docs/api.md#dnsdb-api). */
  name?: string;
  rdata_ip?: string;
  rrtype?: DnsdbRrtype;
  bailiwick?: string;
  offset?: number;
  time_first_before?: number;
  time_first_after?: number;
  time_last_before?: number;
  time_last_after?: number;
  /** The change feed (docs/api.md#get-v1changes): an event id, or a moment in epoch seconds. */
  since?: string | number;
  kind?: EventKind[];
  subject?: string;
}
