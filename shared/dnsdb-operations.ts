/**
 * The operations of the DNSDB API v2 form (docs/api.md#dnsdb-api), served under /dnsdb/v2 by
 * server/dnsdb/routes.ts for the passive-DNS tools analysts already use (dnsdbq, MISP modules, SIEM
 * apps). They run through the call envelope like the REST operations (the same keys, limits and
 * metering: each lookup counts one request) but are not REST paths of /v1, MCP tools or `builder
 * query` subcommands, so they are a table of their own.
 */
import type { Operation } from './operations.js';
import type { CallArguments } from './parameters.js';
import { nowEpoch } from './time.js';
import { DEFAULT_LIMIT, fenceOf, rdataIpLookup, rrsetLookup, type TimeFence } from './queries/index.js';

/** A DNSDB time bound as epoch seconds (a negative one counts back from now). */
const moment = (value: number | undefined, now: number) =>
  value === undefined ? null : value < 0 ? now + value : value;

/** The fence of the four DNSDB time bounds; null when all are open. */
export function dnsdbFence(args: CallArguments, now = nowEpoch()): TimeFence | null {
  return fenceOf({
    firstAfter: moment(args.time_first_after, now),
    firstBefore: moment(args.time_first_before, now),
    lastAfter: moment(args.time_last_after, now),
    lastBefore: moment(args.time_last_before, now),
  });
}

export const DNSDB_PREFIX = '/dnsdb/v2';
/** The routes of the form that are not lookups: liveness, and the key's quota (counted as /v1/ping). */
export const DNSDB_PING_PATH = `${DNSDB_PREFIX}/ping`;
export const DNSDB_RATE_LIMIT_PATH = `${DNSDB_PREFIX}/rate_limit`;

/** The paths of an operation: its path, then one more for each segment of its tail. */
export function pathForms(op: Operation): string[] {
  const forms = [op.path];
  for (const name of op.pathTail ?? []) forms.push(`${forms.at(-1)!}/{${name}}`);
  return forms;
}

const TIME_BOUNDS = ['time_first_before', 'time_first_after', 'time_last_before', 'time_last_after'] as const;

const FIELDS =
  'One record per answer interval: rrname (with its trailing dot), rrtype (A, AAAA; CNAME: the first hop of the latest chain), rdata (the address), time_first (first_observed) and time_last (last_confirmed), in epoch seconds; no count, no bailiwick.';

export const DNSDB_OPERATIONS: readonly Operation[] = [
  {
    id: 'dnsdb_rrset',
    path: `${DNSDB_PREFIX}/lookup/rrset/name/{name}`,
    pathParameter: 'name',
    query: ['limit', 'offset', ...TIME_BOUNDS],
    pathTail: ['rrtype', 'bailiwick'],
    command: null,
    tool: false,
    tag: 'DNSDB',
    title: 'DNSDB rrset lookup by name',
    summary: 'What has this name resolved to, as passive-DNS records?',
    description: 'The answer intervals of a name as DNSDB rrset records, time-fenced and paged by offset.',
    fields: FIELDS,
    response: 'DnsdbStream',
    errors: [401, 402, 422, 429, 503],
    run: (args, { release, pageSize }) =>
      rrsetLookup(release, {
        name: args.name!,
        rrtype: args.rrtype ?? 'ANY',
        fence: dnsdbFence(args),
        limit: pageSize(args.limit ?? DEFAULT_LIMIT),
        offset: args.offset ?? 0,
      }),
    billable: () => true,
  },
  {
    id: 'dnsdb_rdata_ip',
    path: `${DNSDB_PREFIX}/lookup/rdata/ip/{rdata_ip}`,
    pathParameter: 'rdata_ip',
    query: ['limit', 'offset', ...TIME_BOUNDS],
    command: null,
    tool: false,
    tag: 'DNSDB',
    title: 'DNSDB rdata lookup by address or prefix',
    summary: 'Which names were seen on this address or prefix, as passive-DNS records?',
    description:
      'The answer intervals on an address or prefix as DNSDB rdata records, time-fenced and paged by offset.',
    fields: FIELDS,
    response: 'DnsdbStream',
    errors: [401, 402, 422, 429, 503],
    run: (args, { release, pageSize }) =>
      rdataIpLookup(release, {
        ip: args.rdata_ip!,
        fence: dnsdbFence(args),
        limit: pageSize(args.limit ?? DEFAULT_LIMIT),
        offset: args.offset ?? 0,
      }),
    billable: () => true,
  },
];
