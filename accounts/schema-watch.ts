/**
 * The tables of watches and webhooks (migration 5 of schema.ts, docs/decisions/0034): their row
 * types and the statements that create them, kept beside schema.ts so that file stays small.
 */
import { sql, type ColumnType, type Compilable, type SchemaModule } from 'kysely';
import type { AccountsDialect } from './dialect.js';
import type { DeliveryState, WatchKind } from './watch-types.js';

type Time = ColumnType<string | Date, string, string>;
type OptionalTime = ColumnType<string | Date | null, string | null | undefined, string | null>;

/** A watched thing of a project (migration 5): a domain, an IP address, a CIDR prefix or an AS number. */
export interface WatchEntryTable {
  id: string;
  project_id: string;
  kind: WatchKind;
  /** Canonical: normalized domain, canonical address or prefix, AS number in decimal. */
  subject: string;
  created_at: Time;
}

/** A webhook endpoint of a project (migration 5). */
export interface WebhookEndpointTable {
  id: string;
  project_id: string;
  url: string;
  /** Event kinds it receives, space separated; empty: every kind. */
  kinds: string;
  description: string;
  /** `whsec_…`: stored because it signs; shown once, never listed. */
  secret: string;
  /** The secret before the last rotation, valid until previous_secret_until. */
  previous_secret: string | null;
  previous_secret_until: OptionalTime;
  created_at: Time;
  disabled_at: OptionalTime;
  /** First failed attempt since the last success (null: not failing). */
  failing_since: OptionalTime;
}

/** The chain of release pairs whose events were computed (migration 5), keyed by the newer release. */
export interface WatchRunTable {
  release: string;
  previous_release: string | null;
  lease_owner: string | null;
  lease_expires_at: OptionalTime;
  done_at: OptionalTime;
  events: ColumnType<number | null, number | null | undefined, number | null>;
}

/** An event of a project (migration 5): its id is a hash of what it says (watch/event-id.ts). */
export interface WatchEventTable {
  id: string;
  project_id: string;
  /** The newer release of the pair (the feed's order: release, then id). */
  release: string;
  previous_release: string | null;
  kind: string;
  subject: string;
  /** The event as delivered and listed: JSON text. */
  payload: string;
  created_at: Time;
}

/** One event to one endpoint (migration 5): the outbox row, claimed under a lease. */
export interface WebhookDeliveryTable {
  event_id: string;
  endpoint_id: string;
  state: DeliveryState;
  attempts: ColumnType<number, number | undefined, number>;
  next_attempt_at: Time;
  lease_owner: string | null;
  lease_expires_at: OptionalTime;
  last_status: ColumnType<number | null, number | null | undefined, number | null>;
  created_at: Time;
  updated_at: Time;
}

/** The delivery log (migration 5): one row per attempt. */
export interface WebhookAttemptTable {
  id: string;
  event_id: string;
  endpoint_id: string;
  attempt: number;
  started_at: Time;
  duration_ms: number;
  /** HTTP status (null: no reply). */
  status: number | null;
  error: string | null;
  /** The reply's first bytes. */
  reply_head: string;
  worker: string;
}

/** Migration 5: the plan's watch limit and the watch and webhook tables. */
export const watchMigration = (schema: SchemaModule, d: AccountsDialect): Compilable[] => [
  schema.alterTable('plan').addColumn('max_watch_entries', d.count),
  schema
    .createTable('watch_entry')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('project.id'))
    .addColumn('kind', 'text', (c) => c.notNull().check(sql`kind in ('domain', 'ip', 'prefix', 'asn')`))
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('created_at', d.time, (c) => c.notNull())
    .addUniqueConstraint('watch_entry_project_kind_subject_key', ['project_id', 'kind', 'subject']),
  schema
    .createTable('webhook_endpoint')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('project.id'))
    .addColumn('url', 'text', (c) => c.notNull().check(sql`length(url) between 1 and 2000`))
    .addColumn('kinds', 'text', (c) => c.notNull())
    .addColumn('description', 'text', (c) => c.notNull())
    .addColumn('secret', 'text', (c) => c.notNull())
    .addColumn('previous_secret', 'text')
    .addColumn('previous_secret_until', d.time)
    .addColumn('created_at', d.time, (c) => c.notNull())
    .addColumn('disabled_at', d.time)
    .addColumn('failing_since', d.time),
  schema.createIndex('webhook_endpoint_project').on('webhook_endpoint').column('project_id'),
  schema
    .createTable('watch_run')
    .addColumn('release', 'text', (c) => c.primaryKey())
    .addColumn('previous_release', 'text')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', d.time)
    .addColumn('done_at', d.time)
    .addColumn('events', d.count),
  schema
    .createTable('watch_event')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('project.id'))
    .addColumn('release', 'text', (c) => c.notNull())
    .addColumn('previous_release', 'text')
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('subject', 'text', (c) => c.notNull())
    .addColumn('payload', 'text', (c) => c.notNull())
    .addColumn('created_at', d.time, (c) => c.notNull()),
  schema.createIndex('watch_event_feed').on('watch_event').columns(['project_id', 'release', 'id']),
  schema
    .createTable('webhook_delivery')
    .addColumn('event_id', 'text', (c) => c.notNull().references('watch_event.id'))
    .addColumn('endpoint_id', 'text', (c) => c.notNull().references('webhook_endpoint.id'))
    .addColumn('state', 'text', (c) => c.notNull().check(sql`state in ('pending', 'delivered', 'failed')`))
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('next_attempt_at', d.time, (c) => c.notNull())
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', d.time)
    .addColumn('last_status', 'integer')
    .addColumn('created_at', d.time, (c) => c.notNull())
    .addColumn('updated_at', d.time, (c) => c.notNull())
    .addPrimaryKeyConstraint('webhook_delivery_pkey', ['event_id', 'endpoint_id']),
  schema.createIndex('webhook_delivery_due').on('webhook_delivery').columns(['state', 'next_attempt_at']),
  schema.createIndex('webhook_delivery_endpoint').on('webhook_delivery').columns(['endpoint_id', 'state']),
  schema
    .createTable('webhook_attempt')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('event_id', 'text', (c) => c.notNull())
    .addColumn('endpoint_id', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('started_at', d.time, (c) => c.notNull())
    .addColumn('duration_ms', 'integer', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('error', 'text')
    .addColumn('reply_head', 'text', (c) => c.notNull())
    .addColumn('worker', 'text', (c) => c.notNull()),
  schema.createIndex('webhook_attempt_endpoint').on('webhook_attempt').columns(['endpoint_id', 'started_at']),
];
