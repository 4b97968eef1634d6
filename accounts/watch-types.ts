/**
 * What the accounts store keeps for watches (docs/decisions/0034-watchlists-and-webhooks.md):
 * watch entries, webhook endpoints, the events computed from release pairs, and the outbox of
 * their deliveries with its log. Endpoint secrets leave the store only to sign (ClaimedDelivery)
 * and once at creation or rotation.
 */

export const WATCH_KINDS = ['domain', 'ip', 'prefix', 'asn'] as const;
export type WatchKind = (typeof WATCH_KINDS)[number];

export type DeliveryState = 'pending' | 'delivered' | 'failed';

export interface WatchEntry {
  id: string;
  projectId: string;
  kind: WatchKind;
  subject: string;
  createdAt: Date;
}

export interface WebhookEndpoint {
  id: string;
  projectId: string;
  url: string;
  /** Event kinds it receives; empty: every kind. */
  kinds: string[];
  description: string;
  createdAt: Date;
  disabledAt: Date | null;
  failingSince: Date | null;
  /** Whether a previous secret still signs too (after a rotation, for a day). */
  rotating: boolean;
}

export interface CreatedEndpoint {
  endpoint: WebhookEndpoint;
  /** `whsec_…`: returned here once and never again. */
  secret: string;
}

/** An event to insert: the id is already its deterministic hash (watch/event-id.ts). */
export interface NewWatchEvent {
  id: string;
  projectId: string;
  release: string;
  previousRelease: string | null;
  kind: string;
  subject: string;
  /** The JSON body delivered and listed. */
  payload: string;
}

export interface WatchEvent extends NewWatchEvent {
  createdAt: Date;
}

/** A delivery claimed by one worker under a lease, with what it needs to sign and send. */
export interface ClaimedDelivery {
  eventId: string;
  endpointId: string;
  projectId: string;
  url: string;
  /** Current secret first; the previous one while a rotation lasts. */
  secrets: string[];
  payload: string;
  /** Attempts made before this one. */
  attempts: number;
  leaseOwner: string;
}

export interface AttemptResult {
  startedAt: Date;
  durationMs: number;
  status: number | null;
  error: string | null;
  replyHead: string;
  ok: boolean;
}

export interface DeliveryAttempt extends AttemptResult {
  id: string;
  eventId: string;
  endpointId: string;
  attempt: number;
  worker: string;
}

export interface DeliveryRecord {
  eventId: string;
  endpointId: string;
  state: DeliveryState;
  attempts: number;
  nextAttemptAt: Date;
  lastStatus: number | null;
}

/** A release's computation (the chain of computed pairs). */
export interface WatchRun {
  release: string;
  previousRelease: string | null;
  leaseOwner: string | null;
  leaseExpiresAt: Date | null;
  doneAt: Date | null;
  events: number | null;
}

export interface ChangeFeedQuery {
  projectId: string;
  /** After this event (its position), or of releases built after this moment. */
  since?: { eventId: string } | { moment: Date };
  kinds?: string[];
  subject?: string;
  limit: number;
}

export interface WatchStore {
  /**
   * Adds entries to a project, skipping those it has; atomic against other writers, within the
   * plan's limit (`freeLimit` for the Free plan and plans without one): AccountsError
   * `watch_limit_reached` when the entries would pass it, `not_found` for an unknown project.
   */
  addWatchEntries(
    projectId: string,
    entries: ReadonlyArray<{ kind: WatchKind; subject: string }>,
    freeLimit: number,
    now?: Date,
  ): Promise<{ added: WatchEntry[]; existing: number; limit: number }>;
  /**
   * The most entries the project may watch: its workspace's plan's limit at `now` (`freeLimit`
   * for the Free plan and plans without one); AccountsError `not_found` for an unknown project.
   */
  watchLimit(projectId: string, freeLimit: number, now?: Date): Promise<number>;
  /** One project's entries, or every project's (event computation), oldest first. */
  listWatchEntries(projectId?: string): Promise<WatchEntry[]>;
  /** AccountsError `not_found` when the project has no such entry. */
  removeWatchEntry(projectId: string, id: string): Promise<void>;
  /** Sets a plan's watch entries per project (null: the Free plan's); AccountsError `not_found`. */
  setPlanWatchLimit(plan: string, limit: number | null): Promise<void>;

  /** The URL must have passed the SSRF guard (watch/ssrf.ts) already. */
  createEndpoint(
    input: { projectId: string; url: string; kinds: string[]; description?: string },
    now?: Date,
  ): Promise<CreatedEndpoint>;
  listEndpoints(projectId?: string): Promise<WebhookEndpoint[]>;
  getEndpoint(id: string): Promise<WebhookEndpoint | null>;
  /** A new secret, shown once; the old one keeps signing until `previousValidUntil`. */
  rotateEndpointSecret(id: string, previousValidUntil: Date, now?: Date): Promise<string>;
  /** Disables or enables again (clearing its failure streak); AccountsError `not_found`. */
  setEndpointEnabled(id: string, enabled: boolean, now?: Date): Promise<WebhookEndpoint>;
  /** Deletes it, its deliveries and its log. */
  removeEndpoint(id: string): Promise<void>;

  /**
   * Takes the lease of computing the events of `release`: the release the chain ended with before
   * (null: the chain starts here, no events) when this caller may compute; `held` while another
   * caller's lease runs (ask again: it may die before finishing); `skip` when it is done or not
   * newer than the chain's head.
   */
  claimWatchRun(
    release: string,
    owner: string,
    leaseMs: number,
    now?: Date,
  ): Promise<{ previousRelease: string | null } | 'skip' | 'held'>;
  /** Inserts events (those it has are skipped) and their deliveries; returns how many were new. */
  insertWatchEvents(events: readonly NewWatchEvent[], now?: Date): Promise<number>;
  /**
   * Extends the run's lease to `leaseMs` from now while `owner` holds it and the run is not done
   * (the computer's heartbeat); false when the lease was lost or the run is done.
   */
  renewWatchRun(release: string, owner: string, leaseMs: number, now?: Date): Promise<boolean>;
  /** Marks the run done (only while `owner` holds its lease); false when the lease was lost. */
  finishWatchRun(release: string, owner: string, events: number, now?: Date): Promise<boolean>;
  /** Every release's run, oldest first. */
  listWatchRuns(): Promise<WatchRun[]>;
  /** A test event for one endpoint, delivered like any other. */
  createTestEvent(endpointId: string, payload: (eventId: string) => string, now?: Date): Promise<string>;
  listEvents(query: ChangeFeedQuery): Promise<WatchEvent[]>;

  /** Due deliveries of enabled endpoints, leased to `owner` for `leaseMs`; nobody else gets them meanwhile. */
  claimDeliveries(owner: string, limit: number, leaseMs: number, now?: Date): Promise<ClaimedDelivery[]>;
  /**
   * Records an attempt of a claimed delivery (ignored, false, when the lease was lost): delivered on
   * success; else pending again at `nextAttemptAt` or failed (null). A failure at `disableAfter` or
   * later into the endpoint's failure streak disables it: `disabled` says this call did.
   */
  recordAttempt(
    delivery: ClaimedDelivery,
    result: AttemptResult,
    nextAttemptAt: Date | null,
    disableAfterMs: number,
  ): Promise<{ recorded: boolean; disabled: boolean }>;
  /** Sends it again now (same event id); AccountsError `not_found`. */
  redeliver(eventId: string, endpointId: string, now?: Date): Promise<void>;
  listDeliveries(endpointId: string): Promise<DeliveryRecord[]>;
  /** The endpoint's delivery log, newest first. */
  listAttempts(endpointId: string, limit?: number): Promise<DeliveryAttempt[]>;
}
