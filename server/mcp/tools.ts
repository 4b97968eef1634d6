/**
 * The five MCP tools (SPEC.md "MCP server: POST /mcp"): thin adapters over the query layer that
 * return the same JSON as their REST endpoints, as structured content and as text.
 *
 * A call runs the REST checks in the REST order: the key (401) before the arguments, then the
 * arguments, then the meter (429, 402, 503), then the lookup. A refused call is a tool error whose
 * text is exactly `Error executing tool <tool>: <error code>: <message>`.
 *
 * The SDK would validate the arguments against the input schema before our handler runs, with its
 * own text and before any key check; so the schema handed to the SDK only *advertises* the zod
 * schema (tools/list shows it) and lets every value through, and the handler validates with the
 * zod schema after the key check, answering with the codes of the Errors table.
 */
import type { CallToolResult, McpServer, StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { ApiError, type ErrorCode } from '../../shared/errors.js';
import {
  DEFAULT_LIMIT,
  MAX_CURSOR_LENGTH,
  MAX_LIMIT,
  domainHistory,
  domainHosting,
  ipDomains,
  lookupAsn,
  lookupIp,
  lookupIpAnswer,
  type Release,
  responseJson,
  responseParts,
  type ResponseJson,
} from '../../shared/queries/index.js';
import type { KeyPrincipal } from '../accounts/index.js';
import type { Meter } from '../metering.js';
import { pageLimit } from '../page-size.js';

export const TOOL_NAMES = [
  'lookup_ip',
  'ip_domains',
  'domain_history',
  'domain_hosting',
  'lookup_asn',
] as const;
export type ToolName = (typeof TOOL_NAMES)[number];

/**
 * The code for an argument the Errors table has no code of its own for (`limit` out of range, an
 * over-long `cursor`, a wrong JSON type): REST answers those 422 with a `detail` list instead.
 */
export const INVALID_ARGUMENTS = 'invalid_arguments';
type RefusalCode = ErrorCode | typeof INVALID_ARGUMENTS;

/** What the HTTP layer learned about the caller of one POST /mcp, and what the call sends back. */
export interface CallContext {
  /** The key's principal, or null when the key is missing or refused. */
  principal: KeyPrincipal | null;
  /** Why the key was refused (missing, mistyped, revoked, expired, in the URL). */
  keyRefusal: ApiError | null;
  /** Response headers the call adds (limit headers, Retry-After). */
  headers: Record<string, string>;
}

export interface ToolDeps {
  releases: { current(): Release | null };
  meter: Meter;
  /** Failures that are not refusals (bugs): logged, answered `internal_error`. */
  logError: (error: unknown, tool: ToolName) => void;
}

// ---------------------------------------------------------------------------------------------
// Arguments

const READING_RULES =
  'Reading rules: null means unknown, never false; an empty list means "not observed here", not absent; ' +
  "a CDN edge is not the customer's origin and domains sharing an IP share no implied owner; " +
  'answers come from one resolver at one vantage point since 2026-10-01, from a periodically rebuilt snapshot named in `release`.';
const PAGING =
  "Paging: pass the previous answer's `next_cursor` unchanged as `cursor`, with the same other arguments, until `next_cursor` is null; " +
  'a cursor expires (cursor_expired) when the data release changes: restart without it.';

const ipArg = z.string().meta({
  description: 'One public IPv4 or IPv6 address, e.g. "8.8.8.8" or "2606:4700:4700::1111"; not a CIDR range.',
});
const domainArg = z.string().meta({
  description:
    'A hostname with at least two labels, e.g. "example.com" or "www.example.com"; no scheme, port or path. Unicode names are accepted.',
});
const asnArg = z.union([z.string(), z.number().int()]).meta({
  description: 'An AS number from 1 to 4294967295, as 13335 or "AS13335".',
});
const limitArg = z
  .number()
  .int()
  .min(1)
  .max(MAX_LIMIT)
  .optional()
  .meta({
    description: `Items per page, 1 to ${MAX_LIMIT} (default ${DEFAULT_LIMIT}); free keys get at most 100, a larger value is lowered and next_cursor continues.`,
  });
const cursorArg = z
  .string()
  .max(MAX_CURSOR_LENGTH)
  .optional()
  .meta({ description: "The previous page's next_cursor, unchanged; omit for the first page." });

/** Input schemas, and the Errors-table code for a bad value of each argument. */
const ARGUMENTS = {
  lookup_ip: { schema: z.object({ ip: ipArg }), codes: { ip: 'invalid_ip' } },
  ip_domains: {
    schema: z.object({
      ip: ipArg,
      include_ended: z.boolean().optional().meta({
        description: 'true also lists ended answer intervals; default false lists current ones only.',
      }),
      limit: limitArg,
      cursor: cursorArg,
    }),
    codes: { ip: 'invalid_ip' },
  },
  domain_history: {
    schema: z.object({ domain: domainArg, limit: limitArg, cursor: cursorArg }),
    codes: { domain: 'invalid_domain' },
  },
  domain_hosting: { schema: z.object({ domain: domainArg }), codes: { domain: 'invalid_domain' } },
  lookup_asn: {
    schema: z.object({ asn: asnArg, limit: limitArg, cursor: cursorArg }),
    codes: { asn: 'invalid_asn' },
  },
} satisfies Record<ToolName, { schema: z.ZodObject; codes: Record<string, ErrorCode> }>;

type Args<T extends ToolName> = z.output<(typeof ARGUMENTS)[T]['schema']>;

class ArgumentError extends Error {
  constructor(
    readonly code: RefusalCode,
    message: string,
  ) {
    super(message);
  }
}

function parseArguments<T extends ToolName>(tool: T, raw: unknown): Args<T> {
  const { schema, codes } = ARGUMENTS[tool];
  const result = schema.safeParse(raw ?? {});
  if (result.success) return result.data as Args<T>;
  const issue = result.error.issues[0]!;
  const field = typeof issue.path[0] === 'string' ? issue.path[0] : '';
  const code = (codes as Record<string, ErrorCode>)[field];
  // A wrong value of the looked-up thing gets the same code and message as a malformed one.
  if (code !== undefined) throw new ApiError(code);
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw new ArgumentError(INVALID_ARGUMENTS, `${where}${argumentMessage(issue)}`);
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
 * What the SDK sees as the input schema: the zod schema's JSON Schema for tools/list, and a
 * validation that accepts everything (the handler validates after the key check).
 */
function advertised(schema: z.ZodObject): StandardSchemaWithJSON<Record<string, unknown>> {
  const input = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  delete input.$schema;
  return {
    '~standard': {
      version: 1,
      vendor: 'ipscope',
      validate: (value: unknown) => ({ value: value as Record<string, unknown> }),
      jsonSchema: { input: () => input, output: () => input },
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Tools

interface ToolDefinition<T extends ToolName> {
  title: string;
  description: string;
  /** The lookup: (release, arguments, page size allowed) -> the REST endpoint's body. */
  run(release: Release | null, args: Args<T>, maxPageSize: (requested: number) => number): object;
  /** False for an answer that is not counted (a bogon lookup_ip). */
  billable?(body: object): boolean;
}

const TOOLS: { [T in ToolName]: ToolDefinition<T> } = {
  lookup_ip: {
    title: 'Look up an IP address',
    description:
      'What an IP address is (same JSON as GET /v1/ip/{ip}): routing network (`asn`: ASN, route, AS name, registry country, category, network_role), ' +
      '`is_datacenter`/`is_cdn` (true only inside a published cloud/hosting or CDN range, otherwise null = unknown, not "no"), `provider` and `prefix` of that range, ' +
      '`provider_ranges` (every published range holding it, including tor_exit, relay and crawler usage lists), `ptr` names, and `domains` (count of domains currently resolving to it and a sample of up to 10). ' +
      'A private or reserved address answers `is_bogon: true` with its special-purpose block and nothing else (not counted). ' +
      READING_RULES,
    run: (release, args) => lookupIp(release, { ip: args.ip }),
    billable: (body) => (body as { is_bogon?: boolean }).is_bogon !== true,
  },
  ip_domains: {
    title: 'Domains seen on an IP (reverse IP)',
    description:
      'Which domains were seen resolving to a public IP address, and when (same JSON as GET /v1/ip/{ip}/domains): one item per answer interval, oldest first, ' +
      'with `domain`, `record_type` (A/AAAA), `first_observed`, `last_confirmed`, `ended_at` (null while current) and `current`. ' +
      'By default only current intervals; `include_ended: true` adds ended ones. An empty list means none of the resolved names (about a million popular domains and their www.) was seen on it, not that no site is hosted there. ' +
      'A private or reserved address is refused (non_public_ip). Each page counts one request. ' +
      PAGING +
      ' ' +
      READING_RULES,
    run: (release, args, maxPageSize) =>
      ipDomains(release, {
        ip: args.ip,
        includeEnded: args.include_ended ?? false,
        limit: maxPageSize(args.limit ?? DEFAULT_LIMIT),
        cursor: args.cursor,
      }),
  },
  domain_history: {
    title: 'DNS history of a domain',
    description:
      'What a domain has resolved to over time (same JSON as GET /v1/domain/{domain}/history): `current` = latest state per record type (outcome, addresses, CNAME chain, staleness), ' +
      '`intervals` = every answer it gave, oldest first, with `first_observed`, `last_confirmed` and `ended_at` (the change happened between last_confirmed and ended_at). ' +
      '`observed: false` means the name is outside the resolved set (popular registered domains and their www.), not that it has no DNS. ' +
      'A failed query never erases an earlier answer; a TTL or order change is not a change. Each page counts one request. ' +
      PAGING +
      ' ' +
      READING_RULES,
    run: (release, args, maxPageSize) =>
      domainHistory(release, {
        domain: args.domain,
        limit: maxPageSize(args.limit ?? DEFAULT_LIMIT),
        cursor: args.cursor,
      }),
  },
  domain_hosting: {
    title: 'Networks a domain moved through',
    description:
      'Which networks a domain has been hosted on over time (same JSON as GET /v1/domain/{domain}/hosting): `hosting` = runs oldest first, one per stretch on one network ' +
      '(routing ASN and AS name plus cloud/hosting/CDN provider and category), with address count, record types, `first_observed`, `last_confirmed`, `ended_at` and `current`. ' +
      "A move happened between a run's last_confirmed and its ended_at; networks are the current release's mapping applied to the run's addresses. No paging. " +
      READING_RULES,
    run: (release, args) => domainHosting(release, { domain: args.domain }),
  },
  lookup_asn: {
    title: 'Look up an AS number',
    description:
      'What an autonomous system routes and what kind of network it is (same JSON as GET /v1/asn/{asn}): AS `name`, registry `country`, `category`, `network_role`, ' +
      'route counts, IPv4 address count, published cloud/hosting/CDN `providers` inside its ranges, `observed` IPs and domains on it (null = not counted), and its mapped `ranges` (paged). ' +
      'Reserved AS numbers answer `is_bogon: true`; a number the mapping does not list answers with no ranges. Each page counts one request. ' +
      PAGING +
      ' ' +
      READING_RULES,
    run: (release, args, maxPageSize) =>
      lookupAsn(release, {
        asn: String(args.asn),
        limit: maxPageSize(args.limit ?? DEFAULT_LIMIT),
        cursor: args.cursor,
      }),
  },
};

/** The text of a refused call (SPEC.md): `Error executing tool <tool>: <error code>: <message>`. */
export function refusalText(tool: string, code: string, message: string): string {
  return `Error executing tool ${tool}: ${code}: ${message}`;
}

function refusal(tool: ToolName, code: RefusalCode, message: string): CallToolResult {
  return { content: [{ type: 'text', text: refusalText(tool, code, message) }], isError: true };
}

function answer(body: object): CallToolResult {
  return {
    content: [{ type: 'text', text: responseJson(body) }],
    structuredContent: body as Record<string, unknown>,
  };
}

/** Headers a meter refusal carries (limit headers of a 429/402, Retry-After). */
function refusalHeaders(error: ApiError, call: CallContext | undefined): void {
  if (!call) return;
  const headers = (error as ApiError & { headers?: unknown }).headers;
  if (headers !== null && typeof headers === 'object') Object.assign(call.headers, headers);
  if (error.retryAfter !== undefined) call.headers['retry-after'] = String(error.retryAfter);
}

/**
 * Runs one tool call for the caller described by `call`, in the order of a REST call
 * (server/limits/rest-metering.ts): the key, then one unit reserved (before any argument is read),
 * then the arguments and the lookup; an answered, billable call commits the unit, anything else
 * releases it.
 */
export async function callTool<T extends ToolName>(
  deps: ToolDeps,
  tool: T,
  rawArgs: unknown,
  call: CallContext | undefined,
): Promise<CallToolResult> {
  const principal = call?.principal ?? null;
  if (principal === null) {
    const refused = call?.keyRefusal ?? new ApiError('unauthorized');
    return refusal(tool, refused.code, refused.message);
  }
  let reservation;
  try {
    reservation = await deps.meter.reserve(principal);
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    refusalHeaders(error, call);
    return refusal(tool, error.code, error.message);
  }
  // The limit headers are taken once the unit is settled: a released unit shows as not counted.
  const settled = () => {
    if (call) Object.assign(call.headers, reservation.headers);
  };
  const definition = TOOLS[tool] as ToolDefinition<T>;
  const metered = { ...principal, maxPageSize: reservation.maxPageSize };
  let body: object;
  try {
    const args = parseArguments(tool, rawArgs);
    body = definition.run(deps.releases.current(), args, (requested) => pageLimit(metered, requested));
  } catch (error) {
    await reservation.release();
    settled();
    if (error instanceof ArgumentError) return refusal(tool, error.code, error.message);
    if (error instanceof ApiError) {
      refusalHeaders(error, call);
      return refusal(tool, error.code, error.message);
    }
    deps.logError(error, tool);
    const internal = new ApiError('internal_error');
    return refusal(tool, internal.code, internal.message);
  }
  if (definition.billable?.(body) === false) await reservation.release();
  else await reservation.commit();
  settled();
  return answer(body);
}

/**
 * A call's answer for the fast path (server/mcp/handler.ts): the JSON of the lookup, whether it
 * counts and the page size it used, or null when the arguments or the lookup are refused (the SDK
 * then answers the refusal). It runs before the unit is reserved, with pages up to `maxPageSize`;
 * the caller asks again when the plan allows fewer items than `pageSize`.
 */
export function answerNow(
  deps: ToolDeps,
  tool: ToolName,
  rawArgs: unknown,
  maxPageSize: number = MAX_LIMIT,
): { json: ResponseJson; billable: boolean; pageSize: number; cached?: boolean } | null {
  try {
    const release = deps.releases.current();
    if (tool === 'lookup_ip') {
      const answer = lookupIpAnswer(release, { ip: parseArguments('lookup_ip', rawArgs).ip });
      // `cached`: the answer object, the same for every call of a recently asked address.
      return { json: answer, billable: !answer.isBogon, pageSize: 0, cached: true };
    }
    const definition = TOOLS[tool] as ToolDefinition<ToolName>;
    let pageSize = 0;
    const body = definition.run(release, parseArguments(tool, rawArgs) as never, (requested) => {
      pageSize = requested;
      return Math.min(requested, maxPageSize);
    });
    return { json: responseParts(body), billable: definition.billable?.(body) !== false, pageSize };
  } catch {
    return null;
  }
}

/** The schemas tools/list shows, converted once (a conversion per server instance is costly). */
const ADVERTISED = Object.fromEntries(
  TOOL_NAMES.map((name) => [name, advertised(ARGUMENTS[name].schema)]),
) as Record<ToolName, StandardSchemaWithJSON<Record<string, unknown>>>;

/** Registers the five tools on `server`; each reads its CallContext from the request's authInfo. */
export function registerTools(server: McpServer, deps: ToolDeps): void {
  for (const name of TOOL_NAMES) {
    const definition = TOOLS[name];
    server.registerTool(
      name,
      {
        title: definition.title,
        description: definition.description,
        inputSchema: ADVERTISED[name],
        annotations: {
          title: definition.title,
          readOnlyHint: true,
          destructiveHint: false,
          idempotentHint: true,
          openWorldHint: false,
        },
      },
      (args, ctx) => callTool(deps, name, args, callContextOf(ctx.http?.authInfo?.extra)),
    );
  }
}

const CALL_CONTEXT = 'ipscopeCall';

/** How the HTTP layer hands a CallContext to the tools: inside the SDK's authInfo. */
export function authInfoFor(call: CallContext) {
  return { token: '', clientId: call.principal?.keyId ?? '', scopes: [], extra: { [CALL_CONTEXT]: call } };
}

function callContextOf(extra: Record<string, unknown> | undefined): CallContext | undefined {
  return extra?.[CALL_CONTEXT] as CallContext | undefined;
}
