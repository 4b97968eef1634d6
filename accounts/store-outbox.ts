/**
 * Events and their webhook outbox in the accounts store (docs/decisions/0034): the run lease of a
 * release pair, the idempotent insert of events with their deliveries, the delivery lease and
 * the delivery log.
 *
 * One attempt at a time: claimDeliveries selects due, unleased rows and leases them in one
 * transaction. PostgreSQL locks the selected rows (FOR UPDATE SKIP LOCKED: another replica's
 * claim skips them instead of waiting); SQLite's transaction holds the file's write lock from its
 * start (BEGIN IMMEDIATE). The lease's update repeats the due-and-unleased condition, and an
 * attempt is recorded only by the lease's owner.
 */
import { newId } from './ids.js';
import { iso, toDate } from './rows.js';
import { firstOf, rowsOf, type Steps } from './steps.js';
import type { StoreCore } from './store-core.js';
import { AccountsError } from './store.js';
import type { ClaimedDelivery, NewWatchEvent, WatchStore } from './watch-types.js';

/** Events per insert: 8 parameters each. */
const EVENTS_PER_INSERT = 100;

/** The kind of console test events: delivered, never listed by the change feed. */
export const TEST_EVENT_KIND = 'webhook.test';

/** `YYYYMMDDTHHMMSSZ` of a moment: release ids sort as these do. */
export const releaseIdOf = (moment: Date): string =>
  moment
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.\d{3}Z$/, 'Z');

type OutboxOperations = Pick<
  WatchStore,
  | 'claimWatchRun'
  | 'insertWatchEvents'
  | 'renewWatchRun'
  | 'finishWatchRun'
  | 'listWatchRuns'
  | 'createTestEvent'
  | 'listEvents'
  | 'claimDeliveries'
  | 'recordAttempt'
  | 'redeliver'
  | 'listDeliveries'
  | 'listAttempts'
>;

const admits = (kinds: string, kind: string) => kinds === '' || kinds.split(' ').includes(kind);

export function outboxOperations(core: StoreCore): OutboxOperations {
  const { q, dialect } = core;

  function* claimRunSteps(
    release: string,
    owner: string,
    leaseMs: number,
    now: Date,
  ): Steps<{ previousRelease: string | null } | 'skip' | 'held'> {
    const row = yield* firstOf(
      q
        .selectFrom('watch_run')
        .selectAll()
        .where('release', '=', release)
        .$if(dialect.rowLocks, (s) => s.forUpdate()),
    );
    if (row?.done_at) return 'skip';
    if (
      row?.lease_owner &&
      row.lease_owner !== owner &&
      row.lease_expires_at !== null &&
      toDate(row.lease_expires_at).getTime() > now.getTime()
    )
      return 'held';
    const head = yield* firstOf(
      q
        .selectFrom('watch_run')
        .select('release')
        .where('done_at', 'is not', null)
        .orderBy('release', 'desc')
        .limit(1),
    );
    if (head && head.release >= release) return 'skip';
    const lease = {
      previous_release: head?.release ?? null,
      lease_owner: owner,
      lease_expires_at: iso(new Date(now.getTime() + leaseMs)),
    };
    if (row) {
      yield* rowsOf(q.updateTable('watch_run').set(lease).where('release', '=', release));
    } else {
      const inserted = yield* rowsOf(
        q
          .insertInto('watch_run')
          .values({ release, ...lease })
          .onConflict((c) => c.column('release').doNothing())
          .returning('release'),
      );
      if (inserted.length === 0) return 'held'; // another process inserted it first
    }
    return { previousRelease: lease.previous_release };
  }

  /** Inserts the events it lacks and, for each new one, a delivery per enabled endpoint admitting its kind. */
  function* insertSteps(events: readonly NewWatchEvent[], now: Date, onlyEndpoint?: string): Steps<number> {
    const fresh = yield* rowsOf(
      q
        .insertInto('watch_event')
        .values(
          events.map((e) => ({
            id: e.id,
            project_id: e.projectId,
            release: e.release,
            previous_release: e.previousRelease,
            kind: e.kind,
            subject: e.subject,
            payload: e.payload,
            created_at: iso(now),
          })),
        )
        .onConflict((c) => c.column('id').doNothing())
        .returning(['id', 'project_id', 'kind']),
    );
    if (fresh.length === 0) return 0;
    const endpoints = yield* rowsOf(
      q
        .selectFrom('webhook_endpoint')
        .select(['id', 'project_id', 'kinds'])
        .where('project_id', 'in', [...new Set(fresh.map((e) => e.project_id))])
        .where('disabled_at', 'is', null)
        .$if(onlyEndpoint !== undefined, (s) => s.where('id', '=', onlyEndpoint!)),
    );
    const deliveries = fresh.flatMap((event) =>
      endpoints
        .filter((e) => e.project_id === event.project_id && (onlyEndpoint || admits(e.kinds, event.kind)))
        .map((e) => ({
          event_id: event.id,
          endpoint_id: e.id,
          state: 'pending' as const,
          attempts: 0,
          next_attempt_at: iso(now),
          created_at: iso(now),
          updated_at: iso(now),
        })),
    );
    for (let i = 0; i < deliveries.length; i += EVENTS_PER_INSERT) {
      yield* rowsOf(
        q
          .insertInto('webhook_delivery')
          .values(deliveries.slice(i, i + EVENTS_PER_INSERT))
          .onConflict((c) => c.columns(['event_id', 'endpoint_id']).doNothing()),
      );
    }
    return fresh.length;
  }

  function* claimSteps(owner: string, limit: number, leaseMs: number, now: Date): Steps<ClaimedDelivery[]> {
    const due = yield* rowsOf(
      q
        .selectFrom('webhook_delivery as d')
        .innerJoin('webhook_endpoint as e', 'e.id', 'd.endpoint_id')
        .select(['d.event_id', 'd.endpoint_id'])
        .where('d.state', '=', 'pending')
        .where('d.next_attempt_at', '<=', iso(now))
        .where((eb) => eb.or([eb('d.lease_expires_at', 'is', null), eb('d.lease_expires_at', '<', iso(now))]))
        .where('e.disabled_at', 'is', null)
        .orderBy('d.next_attempt_at')
        .orderBy('d.event_id')
        .limit(limit)
        .$if(dialect.rowLocks, (s) => s.forUpdate(['d']).skipLocked()),
    );
    const claimed: ClaimedDelivery[] = [];
    const expires = iso(new Date(now.getTime() + leaseMs));
    for (const { event_id, endpoint_id } of due) {
      const leased = yield* rowsOf(
        q
          .updateTable('webhook_delivery')
          .set({ lease_owner: owner, lease_expires_at: expires })
          .where('event_id', '=', event_id)
          .where('endpoint_id', '=', endpoint_id)
          .where('state', '=', 'pending')
          .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', iso(now))]))
          .returning('attempts'),
      );
      if (leased.length === 0) continue;
      const event = yield* firstOf(q.selectFrom('watch_event').select('payload').where('id', '=', event_id));
      const detail = yield* firstOf(
        q
          .selectFrom('webhook_endpoint')
          .select(['url', 'secret', 'previous_secret', 'previous_secret_until', 'project_id'])
          .where('id', '=', endpoint_id),
      );
      if (!event || !detail) continue;
      const secrets = [detail.secret];
      if (
        detail.previous_secret !== null &&
        detail.previous_secret_until !== null &&
        toDate(detail.previous_secret_until).getTime() > now.getTime()
      )
        secrets.push(detail.previous_secret);
      claimed.push({
        eventId: event_id,
        endpointId: endpoint_id,
        projectId: detail.project_id,
        url: detail.url,
        secrets,
        payload: event.payload,
        attempts: leased[0]!.attempts,
        leaseOwner: owner,
      });
    }
    return claimed;
  }

  return {
    claimWatchRun: (release, owner, leaseMs, now = new Date()) =>
      core.transaction(() => claimRunSteps(release, owner, leaseMs, now)),

    async insertWatchEvents(events, now = new Date()) {
      let inserted = 0;
      for (let i = 0; i < events.length; i += EVENTS_PER_INSERT) {
        const batch = events.slice(i, i + EVENTS_PER_INSERT);
        inserted += await core.transaction(() => insertSteps(batch, now));
      }
      return inserted;
    },

    async renewWatchRun(release, owner, leaseMs, now = new Date()) {
      const renewed = await core.all(
        q
          .updateTable('watch_run')
          .set({ lease_expires_at: iso(new Date(now.getTime() + leaseMs)) })
          .where('release', '=', release)
          .where('lease_owner', '=', owner)
          .where('done_at', 'is', null)
          .returning('release'),
      );
      return renewed.length > 0;
    },

    async finishWatchRun(release, owner, events, now = new Date()) {
      const done = await core.all(
        q
          .updateTable('watch_run')
          .set({ done_at: iso(now), events, lease_owner: null, lease_expires_at: null })
          .where('release', '=', release)
          .where('lease_owner', '=', owner)
          .where('done_at', 'is', null)
          .returning('release'),
      );
      return done.length > 0;
    },

    async listWatchRuns() {
      const rows = await core.all(q.selectFrom('watch_run').selectAll().orderBy('release'));
      return rows.map((r) => ({
        release: r.release,
        previousRelease: r.previous_release,
        leaseOwner: r.lease_owner,
        leaseExpiresAt: r.lease_expires_at === null ? null : toDate(r.lease_expires_at),
        doneAt: r.done_at === null ? null : toDate(r.done_at),
        events: r.events === null ? null : Number(r.events),
      }));
    },

    async createTestEvent(endpointId, payload, now = new Date()) {
      const endpoint = await core.first(
        q.selectFrom('webhook_endpoint').select(['id', 'project_id']).where('id', '=', endpointId),
      );
      if (!endpoint) throw new AccountsError('not_found', `no webhook endpoint with id "${endpointId}"`);
      const id = newId('testEvent');
      const event: NewWatchEvent = {
        id,
        projectId: endpoint.project_id,
        release: releaseIdOf(now),
        previousRelease: null,
        kind: TEST_EVENT_KIND,
        subject: '',
        payload: payload(id),
      };
      await core.transaction(() => insertSteps([event], now, endpointId));
      return id;
    },

    async listEvents({ projectId, since, kinds, subject, limit }) {
      let after: { release: string; id: string } | null = null;
      if (since && 'eventId' in since) {
        const event = await core.first(
          q
            .selectFrom('watch_event')
            .select(['release', 'id'])
            .where('id', '=', since.eventId)
            .where('project_id', '=', projectId),
        );
        if (!event) throw new AccountsError('not_found', `no event "${since.eventId}" in this project`);
        after = event;
      }
      const rows = await core.all(
        q
          .selectFrom('watch_event')
          .selectAll()
          .where('project_id', '=', projectId)
          .where('kind', '!=', TEST_EVENT_KIND)
          .$if(after !== null, (s) =>
            s.where((eb) =>
              eb.or([
                eb('release', '>', after!.release),
                eb.and([eb('release', '=', after!.release), eb('id', '>', after!.id)]),
              ]),
            ),
          )
          .$if(since !== undefined && 'moment' in since, (s) =>
            s.where('release', '>', releaseIdOf((since as { moment: Date }).moment)),
          )
          .$if(kinds !== undefined && kinds.length > 0, (s) => s.where('kind', 'in', kinds!))
          .$if(subject !== undefined, (s) => s.where('subject', '=', subject!))
          .orderBy('release')
          .orderBy('id')
          .limit(limit),
      );
      return rows.map((r) => ({
        id: r.id,
        projectId: r.project_id,
        release: r.release,
        previousRelease: r.previous_release,
        kind: r.kind,
        subject: r.subject,
        payload: r.payload,
        createdAt: toDate(r.created_at),
      }));
    },

    claimDeliveries: (owner, limit, leaseMs, now = new Date()) =>
      core.transaction(() => claimSteps(owner, limit, leaseMs, now)),

    recordAttempt(delivery, result, nextAttemptAt, disableAfterMs) {
      const ended = new Date(result.startedAt.getTime() + result.durationMs);
      return core.transaction(function* () {
        const key = (s: typeof update) =>
          s.where('event_id', '=', delivery.eventId).where('endpoint_id', '=', delivery.endpointId);
        const update = q.updateTable('webhook_delivery');
        const recorded = yield* rowsOf(
          key(update)
            .set((eb) => ({
              state: result.ok ? 'delivered' : nextAttemptAt ? 'pending' : 'failed',
              attempts: eb('attempts', '+', 1),
              next_attempt_at: iso(nextAttemptAt ?? ended),
              lease_owner: null,
              lease_expires_at: null,
              last_status: result.status,
              updated_at: iso(ended),
            }))
            .where('lease_owner', '=', delivery.leaseOwner)
            .where('state', '=', 'pending')
            .returning('attempts'),
        );
        yield* rowsOf(
          q.insertInto('webhook_attempt').values({
            id: newId('attempt'),
            event_id: delivery.eventId,
            endpoint_id: delivery.endpointId,
            attempt: delivery.attempts + 1,
            started_at: iso(result.startedAt),
            duration_ms: Math.round(result.durationMs),
            status: result.status,
            error: result.error,
            reply_head: result.replyHead,
            worker: delivery.leaseOwner,
          }),
        );
        if (recorded.length === 0) return { recorded: false, disabled: false };
        const endpoint = q.updateTable('webhook_endpoint').where('id', '=', delivery.endpointId);
        if (result.ok) {
          yield* rowsOf(endpoint.set({ failing_since: null }));
          return { recorded: true, disabled: false };
        }
        yield* rowsOf(
          endpoint.set({ failing_since: iso(result.startedAt) }).where('failing_since', 'is', null),
        );
        const disabled = yield* rowsOf(
          endpoint
            .set({ disabled_at: iso(ended) })
            .where('disabled_at', 'is', null)
            .where('failing_since', '<=', iso(new Date(ended.getTime() - disableAfterMs)))
            .returning('id'),
        );
        return { recorded: true, disabled: disabled.length > 0 };
      });
    },

    async redeliver(eventId, endpointId, now = new Date()) {
      const updated = await core.all(
        q
          .updateTable('webhook_delivery')
          .set({ state: 'pending', next_attempt_at: iso(now), updated_at: iso(now) })
          .where('event_id', '=', eventId)
          .where('endpoint_id', '=', endpointId)
          .returning('event_id'),
      );
      if (updated.length === 0) {
        throw new AccountsError('not_found', `no delivery of event "${eventId}" to endpoint "${endpointId}"`);
      }
    },

    async listDeliveries(endpointId) {
      const rows = await core.all(
        q
          .selectFrom('webhook_delivery')
          .selectAll()
          .where('endpoint_id', '=', endpointId)
          .orderBy('created_at')
          .orderBy('event_id'),
      );
      return rows.map((r) => ({
        eventId: r.event_id,
        endpointId: r.endpoint_id,
        state: r.state,
        attempts: r.attempts,
        nextAttemptAt: toDate(r.next_attempt_at),
        lastStatus: r.last_status,
      }));
    },

    async listAttempts(endpointId, limit = 100) {
      const rows = await core.all(
        q
          .selectFrom('webhook_attempt')
          .selectAll()
          .where('endpoint_id', '=', endpointId)
          .orderBy('started_at', 'desc')
          .orderBy('attempt', 'desc')
          .limit(limit),
      );
      return rows.map((r) => ({
        id: r.id,
        eventId: r.event_id,
        endpointId: r.endpoint_id,
        attempt: r.attempt,
        worker: r.worker,
        startedAt: toDate(r.started_at),
        durationMs: r.duration_ms,
        status: r.status,
        error: r.error,
        replyHead: r.reply_head,
        ok: r.status !== null && r.status >= 200 && r.status < 300,
      }));
    },
  };
}
