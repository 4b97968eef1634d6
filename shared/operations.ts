/**
 * The operation table: every keyed operation of the API declared once (docs/decisions/0016). From
 * it come the REST routes (server/http/routes/operations.ts), the MCP tools and their argument schemas
 * (server/mcp/sdk.ts, server/mcp/fast-call.ts), the `builder query` subcommands
 * (builder/query-command.ts), the OpenAPI paths (server/api-docs/openapi.ts) and the operations
 * part of /llms-full.txt (server/api-docs/guide.ts); the server keeps answers as `answerCache`
 * says (server/call/answer-cache.ts). Adding an operation is its query function and one entry here.
 *
 * Parameters are declared once too (shared/parameters.ts), and the argument schemas derived from
 * them and an operation in shared/arguments.ts.
 */
import { ApiError, type ErrorCode } from './errors.js';
import type { CallArguments, PathParameterName, QueryParameterName } from './parameters.js';
import {
  DEFAULT_LIMIT,
  timeFence,
  domainHistory,
  domainHistoryAsOf,
  domainHosting,
  domainHostingAsOf,
  ipDomains,
  ipDomainsAsOf,
  lookupAsn,
  lookupAsnAsOf,
  lookupIp,
  lookupIpAsOf,
  lookupIpHead,
  type Release,
} from './queries/index.js';

/** What a lookup needs besides its arguments. */
export interface RunContext {
  release: Release | null;
  /** The page size the caller's plan allows for a requested one (free plans: at most 100). */
  pageSize(requested: number): number;
  /** The project of the caller's key (the envelope's principal); absent offline (`builder query`). */
  projectId?: string;
  /** The change feed of the accounts store (server/watch/feed.ts); absent offline. */
  changes?: ChangeFeed;
}

/** One page of a project's change feed (docs/api.md#get-v1changes). */
export interface ChangeFeedPage {
  items: object[];
  next_cursor: string | null;
}

/** The watch events of a project, oldest first, as the accounts store keeps them. */
export interface ChangeFeed {
  list(query: {
    projectId: string;
    since: string | number | undefined;
    cursor: string | undefined;
    kinds: readonly string[] | undefined;
    subject: string | undefined;
    limit: number;
  }): Promise<ChangeFeedPage>;
}

/**
 * Which answers of an operation the server may keep for the rest of the release
 * (server/call/answer-cache.ts): an answer that depends only on the release and a key, and whose
 * encoding costs much more than finding it again.
 */
export interface AnswerCaching {
  /** Answers kept at most per release (in two generations of half as many). */
  entries: number;
  /** `asked-twice`: kept only when the key was asked moments ago too (many one-off keys add nothing). */
  admission: 'always' | 'asked-twice';
  /** The key of this call's answer; null: this call's answer is not kept. */
  key(args: CallArguments, context: RunContext): string | null;
  /** Whether this answer (the response object) is worth its room. */
  worthKeeping(value: object, context: RunContext): boolean;
}

export interface Operation {
  /** The operationId, the MCP tool name and the log name. */
  id: string;
  /** The REST path, OpenAPI style (`/v1/ip/{ip}`); always GET. */
  path: string;
  /** The path parameter, when the path has one. */
  pathParameter?: PathParameterName;
  /** Query parameters, in the order they are documented. */
  query: readonly QueryParameterName[];
  /**
   * Arguments that may follow the path as segments, each only after the one before (DNSDB's
   * `…/name/{name}/{rrtype}/{bailiwick}`); parsed as the query parameters of the same name.
   */
  pathTail?: readonly QueryParameterName[];
  /** The `builder query` subcommand; null: not offered offline. */
  command: string | null;
  /** True: an MCP tool of the same name. */
  tool: boolean;
  tag: 'IP' | 'Domain' | 'ASN' | 'Service' | 'DNSDB' | 'Watch';
  /** A short title (MCP tool title). */
  title: string;
  /** The question it answers (docs/api.md), the OpenAPI summary. */
  summary: string;
  /** What it returns and how to read it: the OpenAPI description, the tool description, the guide. */
  description: string;
  /** The response's fields in words (the guide for agents, /llms-full.txt). */
  fields: string;
  /** The OpenAPI component of the 200 body. */
  response: string;
  /** Error statuses of the operation (docs/api.md; 500 is added to every one). */
  errors: readonly number[];
  /** 422 codes besides the path parameter's own (ip_domains refuses a bogon: non_public_ip). */
  alsoRefuses?: readonly ErrorCode[];
  /**
   * The lookup in the release: the response body, or throws ApiError. An operation has `run` or
   * `load`, not both.
   */
  run?(args: CallArguments, context: RunContext): object;
  /**
   * A lookup in the accounts store (the change feed): the envelope waits for it once the unit is
   * reserved (with the plan's page size); never kept in the answer cache, never offline.
   */
  load?(args: CallArguments, context: RunContext): Promise<object>;
  /**
   * The answer's JSON head (its own fields, before the release blocks: server/encoding/json.ts)
   * when the operation can write it without building the answer; null: `run` answers. Only a
   * billable answer comes this way, and only the one `run` would give (lookup_ip:
   * docs/decisions/0038).
   */
  head?(args: CallArguments, context: RunContext): string | null;
  /** False for an answer that is not counted (a bogon lookup_ip). */
  billable(body: object): boolean;
  /** Which answers the server keeps per release; absent: none. */
  answerCache?: AnswerCaching;
}

const LOOKUP_ERRORS = [401, 402, 422, 429, 503] as const;
const PAGED_ERRORS = [400, 401, 402, 410, 422, 429, 503] as const;

const READING_RULES =
  'Reading rules: null means unknown, never false; an empty list means "not observed here", not absent; ' +
  "a CDN edge is not the customer's origin and domains sharing an IP share no implied owner; " +
  'answers come from one resolver at one vantage point since 2026-10-01, from a periodically rebuilt snapshot named in `release`.';
const PAGING =
  "Paging: pass the previous answer's `next_cursor` unchanged as `cursor`, with the same other arguments, until `next_cursor` is null; " +
  'a cursor expires (cursor_expired) when the data release changes: restart without it.';

const always = () => true;

/** lookup_asn first pages kept: only those of at least this many ranges (or full ones of a smaller plan page). */
const KEPT_ASN_MIN_RANGES = 16;

export const OPERATIONS: readonly Operation[] = [
  {
    id: 'lookup_ip',
    path: '/v1/ip/{ip}',
    pathParameter: 'ip',
    query: ['as_of'],
    command: 'ip',
    tool: true,
    tag: 'IP',
    title: 'Look up an IP address',
    summary: 'What is this IP: network, provider range, PTR name, how many domains are on it?',
    description:
      'What an IP address is: routing network (`asn`: ASN, route, AS name, registry country, category, network_role), ' +
      '`is_datacenter`/`is_cdn` (true only inside a published cloud/hosting or CDN range, otherwise null = unknown, not "no"), `provider` and `prefix` of that range, ' +
      '`provider_ranges` (every published range holding it, including tor_exit, relay and crawler usage lists), `ptr` names, and `domains` (count of domains currently resolving to it and a sample of up to 10). ' +
      'A private or reserved address answers `is_bogon: true` with its special-purpose block and nothing else (not counted). A CIDR range is invalid_ip. Counts one request. ' +
      READING_RULES,
    fields:
      '`ip`; `asn` (null when the mapping has no range) with `asn` (integer; null for AS0 "not routed"), `route` (CIDR), `descr`, `country` (registry country), `source` (the mapping that answered), `category` (isp, hosting, cdn, business, banking, education_research, government_admin; null = unclassified; can be wrong; never sets is_datacenter), `category_source` (own or external), `network_role` (tier1_transit, major_transit, midsize_transit, access_provider, content_network, stub; null = unclassified); `is_datacenter`, `is_cdn` (true or null); `provider` and `prefix` (from cloud, hosting and CDN ranges only); `provider_ranges` (every published range holding the IP: prefix, provider, category, metadata, first_seen, last_seen; category one of cloud, hosting, cdn, tor_exit, relay, crawler); `ptr` (null when never checked; else names, status, checked_at, last_confirmed); `domains` {current_count, sample (at most 10), first_observed, last_confirmed}; `is_bogon`, `bogon`; coverage, attribution, release. A bogon (private, reserved, loopback, link-local, documentation, CGNAT, multicast) answers only `is_bogon: true` and `bogon`; `is_bogon: false` does not mean the address is allocated.',
    response: 'IpLookup',
    errors: LOOKUP_ERRORS,
    alsoRefuses: ['as_of_out_of_range'],
    run: (args, { release }) =>
      args.as_of === undefined
        ? lookupIp(release, { ip: args.ip! })
        : lookupIpAsOf(release, { ip: args.ip! }, args.as_of),
    head: (args, { release }) =>
      args.as_of === undefined && release !== null ? lookupIpHead(release, { ip: args.ip! }) : null,
    billable: (body) => (body as { is_bogon?: boolean }).is_bogon !== true,
    // An answer depends only on the release and the address, and a popular address is asked again
    // and again; a kept answer is 0.5–1.7 KB (the release blocks are shared): 16,384 stay under 32 MB.
    answerCache: {
      entries: 16_384,
      admission: 'asked-twice',
      // An answer as of a past moment is never kept (nor served from the current answers).
      key: (args) => (args.as_of !== undefined ? null : (args.ip ?? null)),
      worthKeeping: always,
    },
  },
  {
    id: 'ip_domains',
    path: '/v1/ip/{ip}/domains',
    pathParameter: 'ip',
    query: ['include_ended', 'limit', 'cursor', 'from', 'to', 'strict', 'as_of'],
    command: 'ip-domains',
    tool: true,
    tag: 'IP',
    title: 'Domains seen on an IP (reverse IP)',
    summary: 'Which domains were seen resolving to this IP, and when? (reverse IP)',
    description:
      'Which domains were seen resolving to a public IP address, and when: one item per answer interval, oldest first, ' +
      'with `domain`, `record_type` (A/AAAA), `first_observed`, `last_confirmed`, `ended_at` (null while current) and `current`. ' +
      'By default only current intervals; `include_ended` true adds ended ones. An empty list means none of the resolved names (about a million popular domains and their www.) was seen on it, not that no site is hosted there. ' +
      'A private or reserved address is refused (non_public_ip). Each page counts one request. ' +
      PAGING +
      ' ' +
      READING_RULES,
    fields:
      '`ip`, `include_ended`, `items` (oldest first, one per answer interval: domain, record_type A or AAAA, first_observed, last_confirmed, ended_at, current), `next_cursor`, coverage, attribution, release.',
    response: 'IpDomainsPage',
    errors: PAGED_ERRORS,
    alsoRefuses: ['non_public_ip', 'as_of_out_of_range'],
    run: (args, { release, pageSize }) => {
      const params = {
        ip: args.ip!,
        includeEnded: args.include_ended ?? false,
        limit: pageSize(args.limit ?? DEFAULT_LIMIT),
        cursor: args.cursor,
        fence: timeFence(args),
      };
      return args.as_of === undefined
        ? ipDomains(release, params)
        : ipDomainsAsOf(release, params, args.as_of);
    },
    billable: always,
  },
  {
    id: 'domain_history',
    path: '/v1/domain/{domain}/history',
    pathParameter: 'domain',
    query: ['limit', 'cursor', 'from', 'to', 'strict', 'as_of'],
    command: 'history',
    tool: true,
    tag: 'Domain',
    title: 'DNS history of a domain',
    summary: 'What has this domain resolved to over time? (DNS history)',
    description:
      'What a domain has resolved to over time: `current` = latest state per record type (outcome, addresses, CNAME chain, staleness), ' +
      '`intervals` = every answer it gave, oldest first, with `first_observed`, `last_confirmed` and `ended_at` (the change happened between last_confirmed and ended_at). ' +
      '`observed: false` means the name is outside the resolved set (popular registered domains and their www.), not that it has no DNS. ' +
      'A failed query never erases an earlier answer; a TTL or order change is not a change. Each page counts one request. ' +
      PAGING +
      ' ' +
      READING_RULES,
    fields:
      '`domain` (normalized); `observed` (false = the name is outside the resolved set, i.e. not covered; it does not mean the name has no DNS); `current` (latest state per record type: record_type, outcome positive/nxdomain/nodata/timeout/servfail/malformed, outcome_class positive/negative/transient, values, cnames, last_observed, last_confirmed, last_positive, age_seconds, stale, stale_reason); `intervals` (every answer, oldest first: record_type, value, first_observed, last_confirmed, ended_at, current; `value` may be a private address, which has no IP lookup); `next_cursor`; coverage, attribution, release. A new or long-tail domain is usually `observed: false`: say "not covered", not "no DNS".',
    response: 'DomainHistoryPage',
    errors: PAGED_ERRORS,
    alsoRefuses: ['as_of_out_of_range'],
    run: (args, { release, pageSize }) => {
      const params = {
        domain: args.domain!,
        limit: pageSize(args.limit ?? DEFAULT_LIMIT),
        cursor: args.cursor,
        fence: timeFence(args),
      };
      return args.as_of === undefined
        ? domainHistory(release, params)
        : domainHistoryAsOf(release, params, args.as_of);
    },
    billable: always,
  },
  {
    id: 'domain_hosting',
    path: '/v1/domain/{domain}/hosting',
    pathParameter: 'domain',
    query: ['as_of'],
    command: 'hosting',
    tool: true,
    tag: 'Domain',
    title: 'Networks a domain moved through',
    summary: 'Which networks has this domain moved through?',
    description:
      'Which networks a domain has been hosted on over time: `hosting` = runs oldest first, one per stretch on one network ' +
      '(routing ASN and AS name plus cloud/hosting/CDN provider and category), with address count, record types, `first_observed`, `last_confirmed`, `ended_at` and `current`. ' +
      "A move happened between a run's last_confirmed and its ended_at; networks are the current release's mapping applied to the run's addresses. No paging. Counts one request. " +
      READING_RULES,
    fields:
      "`domain`, `hosting` (runs oldest first; one run per stretch of time on one network, i.e. routing ASN plus cloud, hosting or CDN provider: public, asn, as_name, provider, category, addresses, record_types, first_observed, last_confirmed, ended_at, current), `truncated`, coverage, attribution, release. A domain that leaves a network and returns gets a new run; a run's network is the current release's mapping applied to the run's addresses, not the routing at that time.",
    response: 'DomainHosting',
    errors: LOOKUP_ERRORS,
    alsoRefuses: ['as_of_out_of_range'],
    run: (args, { release }) =>
      args.as_of === undefined
        ? domainHosting(release, { domain: args.domain! })
        : domainHostingAsOf(release, { domain: args.domain! }, args.as_of),
    billable: always,
  },
  {
    id: 'lookup_asn',
    path: '/v1/asn/{asn}',
    pathParameter: 'asn',
    query: ['limit', 'cursor', 'as_of'],
    command: 'asn',
    tool: true,
    tag: 'ASN',
    title: 'Look up an AS number',
    summary: 'What does this AS number route, and what kind of network is it?',
    description:
      'What an autonomous system routes and what kind of network it is: AS `name`, registry `country`, `category`, `network_role`, ' +
      'route counts, IPv4 address count, published cloud/hosting/CDN `providers` inside its ranges, `observed` IPs and domains on it (null = not counted), and its mapped `ranges` (paged: IPv4 first, then IPv6). ' +
      'Reserved AS numbers answer `is_bogon: true`; a number the mapping does not list answers with no ranges. Each page counts one request. ' +
      PAGING +
      ' ' +
      READING_RULES,
    fields:
      "`asn`; `is_bogon` and `bogon` {first, last, name, rfc} for AS numbers reserved for private use, documentation or special purpose (23456, 64496 to 65551, 4200000000 to 4294967295; such numbers have no ranges); `name`, `country`, `source`; `category`, `category_source`, `network_role` as for IPs; `routes` {ipv4, ipv6} (counts of ranges); `ipv4_addresses`; `providers` (published cloud, hosting and CDN ranges inside the AS's ranges, per feed: provider, category, ranges; empty = none matched); `observed` {ips, domains} or null when not counted (null is unknown, never zero); `ranges` (IPv4 first, then IPv6: first, last, prefixes); `next_cursor`; coverage, attribution, release.",
    response: 'AsnLookup',
    errors: PAGED_ERRORS,
    alsoRefuses: ['as_of_out_of_range'],
    run: (args, { release, pageSize }) => {
      const params = {
        asn: String(args.asn),
        limit: pageSize(args.limit ?? DEFAULT_LIMIT),
        cursor: args.cursor,
      };
      return args.as_of === undefined
        ? lookupAsn(release, params)
        : lookupAsnAsOf(release, params, args.as_of);
    },
    billable: always,
    // A first page of the default size (the plan's, when smaller) depends only on the release, the AS
    // number and that size. Large pages only: formatting 16 to 100 ranges costs ten to a hundred
    // times a small page; on the full-scale release 2,031 of 94,533 routed AS numbers have as many,
    // and 1,024 kept pages of at most about 10 KB stay under 10 MB.
    answerCache: {
      entries: 1024,
      admission: 'always',
      key: (args, { pageSize }) =>
        args.asn === undefined ||
        args.limit !== undefined ||
        args.cursor !== undefined ||
        args.as_of !== undefined
          ? null
          : `${args.asn}\0${pageSize(DEFAULT_LIMIT)}`,
      worthKeeping: (value, { pageSize }) =>
        ((value as { ranges?: unknown[] }).ranges?.length ?? 0) >=
        Math.min(KEPT_ASN_MIN_RANGES, pageSize(DEFAULT_LIMIT)),
    },
  },
  {
    id: 'list_changes',
    path: '/v1/changes',
    query: ['since', 'kind', 'subject', 'limit', 'cursor'],
    command: null,
    tool: true,
    tag: 'Watch',
    title: 'Changes of watched subjects',
    summary:
      "What changed, release to release, for the key's project's watched domains, IPs, prefixes and ASes? (change feed)",
    description:
      "The change feed of the key's project: the events computed when a new data release replaced the previous one, for the project's watch entries (domains, IP addresses, CIDR prefixes, AS numbers), oldest first. " +
      'Each item is the body a webhook delivers: `type` (the event kind), `timestamp` (when the newer release was built) and `data` (`id` evt_…, `subject` {kind, value}, `release`, `previous_release`, and what changed). ' +
      '`since` an event id lists what came after it (keep the last id you read); `since` a moment lists the events of releases built after it; `kind` and `subject` filter. ' +
      'Paging: pass `next_cursor` as `cursor` with the same other arguments until it is null; these cursors do not expire with a release. An empty list means nothing watched changed, or the project watches nothing. Each page counts one request.',
    fields:
      '`items` (oldest first; each {type, timestamp, data}: data.id evt_… (also the webhook-id), data.subject {kind domain/ip/prefix/asn, value}, data.release and data.previous_release, then by type: domain.dns_changed old/new {addresses, outcome}; domain.network_changed old_networks/networks; ip.domain_added/removed domain, address; asn.domain_added/removed domain; ip.range_entered/left range {source, prefix, category}; asn.route_added/removed route), `next_cursor`.',
    response: 'ChangesPage',
    errors: [400, 401, 402, 422, 429, 503],
    load: async (args, { pageSize, projectId, changes }) => {
      if (changes === undefined || projectId === undefined) throw new ApiError('service_unavailable');
      return changes.list({
        projectId,
        since: args.since,
        cursor: args.cursor,
        kinds: args.kind,
        subject: args.subject,
        limit: pageSize(args.limit ?? DEFAULT_LIMIT),
      });
    },
    billable: always,
  },
  {
    id: 'ping',
    path: '/v1/ping',
    query: [],
    command: null,
    tool: false,
    tag: 'Service',
    title: 'Check a key',
    summary: 'Checks that the key works.',
    description: 'Counts one request against the rate limit and monthly quota, like a lookup.',
    fields: '`ok` (true) and `timestamp` (the server time).',
    response: 'Ping',
    errors: [401, 402, 429, 503],
    run: () => ({ ok: true, timestamp: new Date().toISOString() }),
    billable: always,
  },
];

/** An operation's lookup in the release (`run`); one that only loads (the change feed) throws. */
export function runInRelease(op: Operation, args: CallArguments, context: RunContext): object {
  if (op.run === undefined) throw new Error(`${op.id} is not a lookup in the release`);
  return op.run(args, context);
}

/** The operations that are MCP tools. */
export const TOOLS: readonly Operation[] = OPERATIONS.filter((op) => op.tool);

export function operationById(id: string): Operation | undefined {
  return OPERATIONS.find((op) => op.id === id);
}
