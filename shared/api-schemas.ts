/**
 * The response bodies of the REST API (docs/api.md#operations, #response-blocks, #errors) as zod
 * schemas; the OpenAPI document (`/v1/openapi.json`) is generated from them (the parameters come
 * from the operation table, shared/operations.ts). They are strict: a field a query adds without
 * declaring it here fails the tests that parse real responses with them.
 */
import { z } from 'zod';
import { AS_CATEGORIES, NETWORK_ROLES, OUTCOMES, RANGE_CATEGORIES, RECORD_TYPES } from './vocabulary.js';
import { EVENT_ID_RE, EVENT_KINDS } from './watch-events.js';

/** The named schemas of the OpenAPI document's components (`#/components/schemas/<id>`). */
export const apiRegistry = z.registry<{ id: string }>();

// ---------------------------------------------------------------------------------------------
// Blocks every lookup response carries

const timestamp = z.iso.datetime({ offset: true }).meta({ description: 'UTC timestamp, ISO 8601' });
const count = z.number().int().min(0);
const recordType = z.enum(RECORD_TYPES);
const asCategory = z.enum(AS_CATEGORIES).nullable().meta({
  description:
    'Category of the routing network; null = unclassified. Can be wrong; never sets is_datacenter.',
});
const categorySource = z.enum(['own', 'external']).nullable().meta({
  description: "own = the service's classification, external = imported; null when category is null.",
});
const networkRole = z.enum(NETWORK_ROLES).nullable().meta({ description: 'null = unclassified' });

export const Coverage = z
  .strictObject({
    observation_window: z.strictObject({ first: timestamp.nullable(), last: timestamp.nullable() }),
    vantage_count: count,
    record_types: z.array(recordType),
    seed: z.strictObject({ source: z.string(), names: count }),
    derived: z
      .strictObject({ www_names: count })
      .optional()
      .meta({ description: 'counts of derived www. names' }),
    ptr: z.strictObject({ checked_ips: count, observed_ips: count }).optional(),
    semantics: z.array(z.string()).meta({ description: 'the reading rules, in short' }),
    dataset: z.literal('demo').optional().meta({ description: 'present on the demo data only' }),
    note: z.string().optional().meta({ description: 'what the demo data is' }),
    as_of: timestamp
      .optional()
      .meta({ description: 'present on an answer as of a past moment (as_of): the moment asked' }),
  })
  .meta({ description: 'What the answer rests on.' })
  .register(apiRegistry, { id: 'Coverage' });

export const Attribution = z
  .array(z.strictObject({ source: z.string(), by: z.string(), license: z.string() }))
  .meta({ description: 'Sources to credit when the data is republished.' })
  .register(apiRegistry, { id: 'Attribution' });

export const ReleaseBlock = z
  .object({
    id: z
      .string()
      .regex(/^\d{8}T\d{6}Z$/)
      .meta({ description: 'compact UTC timestamp YYYYMMDDTHHMMSSZ' }),
    built_at: timestamp,
  })
  .meta({ description: 'The data snapshot that answered.' })
  .register(apiRegistry, { id: 'Release' });

const blocks = { coverage: Coverage, attribution: Attribution, release: ReleaseBlock };
const nextCursor = z
  .string()
  .nullable()
  .meta({ description: 'Opaque cursor of the next page; null on the last page.' });

// ---------------------------------------------------------------------------------------------
// Responses

export const ProviderRange = z
  .object({
    prefix: z.string().meta({ description: 'CIDR block' }),
    provider: z.string(),
    category: z.enum(RANGE_CATEGORIES),
    metadata: z.record(z.string(), z.string()).meta({
      description:
        'free-form per category: region and service of cloud ranges, kind of tor_exit, operator and bot of crawlers',
    }),
    first_seen: timestamp,
    last_seen: timestamp,
  })
  .register(apiRegistry, { id: 'ProviderRange' });

export const IpBogonLookup = z
  .object({
    is_bogon: z.literal(true),
    bogon: z.strictObject({ prefix: z.string(), name: z.string(), rfc: z.string() }),
  })
  .meta({ description: 'A special-purpose address: is_bogon, its block and nothing else.' })
  .register(apiRegistry, { id: 'IpBogonLookup' });

export const IpPublicLookup = z
  .object({
    ip: z.string(),
    asn: z
      .object({
        asn: z.number().int().nullable().meta({ description: 'null for ASN 0 "not routed"' }),
        route: z.string().nullable(),
        descr: z.string().nullable(),
        country: z.string().nullable(),
        source: z.string(),
        category: asCategory,
        category_source: categorySource,
        network_role: networkRole,
      })
      .nullable(),
    is_datacenter: z.literal(true).nullable().meta({
      description: 'true only inside a published cloud or hosting range; otherwise null (unknown, not false)',
    }),
    is_cdn: z
      .literal(true)
      .nullable()
      .meta({ description: 'true only inside a published CDN range; otherwise null (unknown, not false)' }),
    provider: z.string().nullable(),
    prefix: z.string().nullable(),
    provider_ranges: z.array(ProviderRange),
    ptr: z
      .object({
        names: z.array(z.string()),
        status: z.string(),
        checked_at: timestamp.nullable(),
        last_confirmed: timestamp.nullable(),
      })
      .nullable()
      .meta({ description: 'null when the PTR was never checked' }),
    domains: z.strictObject({
      current_count: count,
      sample: z.array(z.string()).max(10),
      first_observed: timestamp.nullable(),
      last_confirmed: timestamp.nullable(),
    }),
    ...blocks,
    is_bogon: z.literal(false),
    bogon: z.null(),
  })
  .register(apiRegistry, { id: 'IpPublicLookup' });

export const IpLookup = z.union([IpPublicLookup, IpBogonLookup]).register(apiRegistry, { id: 'IpLookup' });

export const IpDomainsPage = z
  .object({
    ip: z.string(),
    include_ended: z.boolean(),
    items: z.array(
      z.strictObject({
        domain: z.string(),
        record_type: recordType,
        first_observed: timestamp,
        last_confirmed: timestamp,
        ended_at: timestamp.nullable(),
        current: z.boolean(),
      }),
    ),
    next_cursor: nextCursor,
    ...blocks,
  })
  .register(apiRegistry, { id: 'IpDomainsPage' });

export const CurrentState = z
  .object({
    record_type: recordType,
    outcome: z.enum(OUTCOMES),
    outcome_class: z.enum(['positive', 'negative', 'transient']),
    values: z.array(z.string()),
    cnames: z.array(z.string()),
    last_observed: timestamp,
    last_confirmed: timestamp.nullable(),
    last_positive: timestamp.nullable(),
    age_seconds: z.number().min(0),
    stale: z.boolean(),
    stale_reason: z.enum(['transient_failure', 'never_confirmed', 'older_than_seven_days']).nullable(),
  })
  .register(apiRegistry, { id: 'CurrentState' });

export const AnswerInterval = z
  .object({
    record_type: recordType,
    value: z.string().meta({ description: 'address answered; may be private or reserved' }),
    first_observed: timestamp,
    last_confirmed: timestamp,
    ended_at: timestamp.nullable(),
    current: z.boolean(),
  })
  .register(apiRegistry, { id: 'AnswerInterval' });

export const DomainHistoryPage = z
  .object({
    domain: z.string(),
    observed: z.boolean().meta({ description: 'false = the name is outside the resolved set (not covered)' }),
    current: z.array(CurrentState),
    intervals: z.array(AnswerInterval),
    next_cursor: nextCursor,
    ...blocks,
  })
  .register(apiRegistry, { id: 'DomainHistoryPage' });

export const HostingRun = z
  .object({
    public: z.boolean(),
    asn: z.number().int().nullable(),
    as_name: z.string().nullable(),
    provider: z.string().nullable(),
    category: z.string().nullable(),
    addresses: count,
    record_types: z.array(recordType),
    first_observed: timestamp,
    last_confirmed: timestamp,
    ended_at: timestamp.nullable(),
    current: z.boolean(),
  })
  .register(apiRegistry, { id: 'HostingRun' });

export const DomainHosting = z
  .object({ domain: z.string(), hosting: z.array(HostingRun), truncated: z.boolean(), ...blocks })
  .register(apiRegistry, { id: 'DomainHosting' });

export const AsnLookup = z
  .object({
    asn: z.number().int(),
    is_bogon: z.boolean(),
    bogon: z
      .object({ first: z.number().int(), last: z.number().int(), name: z.string(), rfc: z.string() })
      .nullable(),
    name: z.string().nullable(),
    country: z.string().nullable(),
    source: z.string().nullable(),
    category: asCategory,
    category_source: categorySource,
    network_role: networkRole,
    routes: z.strictObject({ ipv4: count, ipv6: count }),
    ipv4_addresses: count,
    providers: z.array(z.strictObject({ provider: z.string(), category: z.string(), ranges: count })),
    observed: z
      .object({ ips: count, domains: count })
      .nullable()
      .meta({ description: 'null when the snapshot does not count them (unknown, never zero)' }),
    ranges: z.array(z.strictObject({ first: z.string(), last: z.string(), prefixes: z.array(z.string()) })),
    next_cursor: nextCursor,
    ...blocks,
  })
  .register(apiRegistry, { id: 'AsnLookup' });

export const Ping = z.strictObject({ ok: z.boolean(), timestamp }).register(apiRegistry, { id: 'Ping' });

const checkValue = z.enum(['ok', 'error']);
export const Health = z
  .object({
    status: z.enum(['healthy', 'unhealthy']),
    checks: z.strictObject({ database: checkValue, cache: checkValue, release: checkValue }),
    release: z.strictObject({
      status: z.enum(['ok', 'unavailable']),
      id: z.string().nullable(),
      built_at: timestamp.nullable(),
      age_seconds: z.number().nullable(),
      error: z
        .string()
        .optional()
        .meta({ description: 'why no release is loaded, or why a newer release was refused' }),
    }),
  })
  .register(apiRegistry, { id: 'Health' });

// ---------------------------------------------------------------------------------------------
// Errors

export const ApiErrorBody = z
  .object({
    error: z.string().meta({ description: 'error code: branch on this (docs/api.md#errors)' }),
    message: z.string().meta({ description: 'how to fix it; may be reworded' }),
  })
  .register(apiRegistry, { id: 'Error' });

export const ValidationErrorBody = z
  .object({
    detail: z.array(
      z.strictObject({
        loc: z.array(z.union([z.string(), z.number()])),
        msg: z.string(),
        type: z.string(),
      }),
    ),
  })
  .meta({ description: 'A query parameter out of range (limit, cursor, include_ended).' })
  .register(apiRegistry, { id: 'ValidationError' });

export const DetailBody = z
  .object({ detail: z.string() })
  .meta({ description: 'Framework-level refusal: Not Found, Method Not Allowed, Forbidden.' })
  .register(apiRegistry, { id: 'Detail' });

// ---------------------------------------------------------------------------------------------
// The change feed (docs/api.md#get-v1changes): the bodies webhooks deliver, as a page

export const ChangeEvent = z
  .strictObject({
    type: z.enum(EVENT_KINDS),
    timestamp: timestamp.meta({ description: 'When the newer release was built.' }),
    data: z
      .looseObject({
        id: z.string().regex(EVENT_ID_RE).meta({ description: 'The event id, also the webhook-id header.' }),
        subject: z.strictObject({ kind: z.enum(['domain', 'ip', 'prefix', 'asn']), value: z.string() }),
        release: z.string(),
        previous_release: z.string(),
      })
      .meta({
        description: 'The event; what changed follows the fields above, by type (docs/api.md#webhooks).',
      }),
  })
  .register(apiRegistry, { id: 'ChangeEvent' });

export const ChangesPage = z
  .strictObject({
    items: z.array(ChangeEvent),
    next_cursor: z.string().nullable(),
  })
  .register(apiRegistry, { id: 'ChangesPage' });
