/**
 * Watch entries and webhook endpoints in the accounts store (docs/decisions/0034). Adding entries
 * counts them against the plan's limit in the transaction that inserts them, with the workspace
 * locked as key creation does (store-keys.ts), so concurrent adds cannot pass the limit together.
 * An endpoint's secret is returned once, by createEndpoint and rotateEndpointSecret.
 */
import { randomBytes } from 'node:crypto';
import type { Selectable } from 'kysely';
import { newId } from './ids.js';
import { iso, toDate, toDateOrNull } from './rows.js';
import type { WatchEntryTable, WebhookEndpointTable } from './schema-watch.js';
import { firstOf, rowsOf, type Steps } from './steps.js';
import type { StoreCore } from './store-core.js';
import { AccountsError, DEFAULT_PLAN, effectivePlan } from './store.js';
import type { WatchEntry, WatchKind, WatchStore, WebhookEndpoint } from './watch-types.js';

/** Entries per insert: 5 parameters each stays far below SQLite's limit. */
const ENTRIES_PER_INSERT = 500;

/** `whsec_` and the base64 of 24 random bytes (Standard Webhooks' secret format). */
export const newWebhookSecret = (): string => `whsec_${randomBytes(24).toString('base64')}`;

const toEntry = (r: Selectable<WatchEntryTable>): WatchEntry => ({
  id: r.id,
  projectId: r.project_id,
  kind: r.kind,
  subject: r.subject,
  createdAt: toDate(r.created_at),
});

export const toEndpoint = (r: Selectable<WebhookEndpointTable>, now = new Date()): WebhookEndpoint => ({
  id: r.id,
  projectId: r.project_id,
  url: r.url,
  kinds: r.kinds === '' ? [] : r.kinds.split(' '),
  description: r.description,
  createdAt: toDate(r.created_at),
  disabledAt: toDateOrNull(r.disabled_at),
  failingSince: toDateOrNull(r.failing_since),
  rotating:
    r.previous_secret !== null &&
    r.previous_secret_until !== null &&
    toDate(r.previous_secret_until).getTime() > now.getTime(),
});

type WatchOperations = Pick<
  WatchStore,
  | 'addWatchEntries'
  | 'watchLimit'
  | 'listWatchEntries'
  | 'removeWatchEntry'
  | 'setPlanWatchLimit'
  | 'createEndpoint'
  | 'listEndpoints'
  | 'getEndpoint'
  | 'rotateEndpointSecret'
  | 'setEndpointEnabled'
  | 'removeEndpoint'
>;

export function watchOperations(core: StoreCore): WatchOperations {
  const { q } = core;

  /** The project's workspace (locked when `lock`), its plan at `now` and that plan's entry limit. */
  function* limitSteps(
    projectId: string,
    freeLimit: number,
    now: Date,
    lock: boolean,
  ): Steps<{ planName: string; limit: number }> {
    const project = yield* firstOf(
      q
        .selectFrom('project as p')
        .innerJoin('workspace as w', 'w.id', 'p.workspace_id')
        .select(['p.id', 'p.workspace_id', 'w.plan', 'w.plan_expires_at'])
        .where('p.id', '=', projectId),
    );
    if (!project) throw new AccountsError('not_found', `no project with id "${projectId}"`);
    if (lock) yield* core.lockWorkspace(project.workspace_id);
    const planName = effectivePlan(
      { plan: project.plan, planExpiresAt: toDateOrNull(project.plan_expires_at) },
      now,
    );
    const plan =
      planName === DEFAULT_PLAN
        ? undefined
        : yield* firstOf(q.selectFrom('plan').select('max_watch_entries').where('name', '=', planName));
    return { planName, limit: plan?.max_watch_entries ?? freeLimit };
  }

  function* addSteps(
    projectId: string,
    entries: ReadonlyArray<{ kind: WatchKind; subject: string }>,
    freeLimit: number,
    now: Date,
  ): Steps<{ added: WatchEntry[]; existing: number; limit: number }> {
    const { planName, limit } = yield* limitSteps(projectId, freeLimit, now, true);
    const have = yield* rowsOf(
      q.selectFrom('watch_entry').select(['kind', 'subject']).where('project_id', '=', projectId),
    );
    const known = new Set(have.map((e) => `${e.kind} ${e.subject}`));
    const fresh = new Map<string, { kind: WatchKind; subject: string }>();
    for (const entry of entries) {
      const key = `${entry.kind} ${entry.subject}`;
      if (!known.has(key)) fresh.set(key, entry);
    }
    if (have.length + fresh.size > limit) {
      throw new AccountsError(
        'watch_limit_reached',
        `the project watches ${have.length} of at most ${limit} entries on plan ${planName}: adding ${fresh.size} more would pass the limit; remove entries or change plans`,
      );
    }
    const rows = [...fresh.values()].map((entry) => ({
      id: newId('watch'),
      project_id: projectId,
      kind: entry.kind,
      subject: entry.subject,
      created_at: iso(now),
    }));
    for (let i = 0; i < rows.length; i += ENTRIES_PER_INSERT) {
      yield* rowsOf(q.insertInto('watch_entry').values(rows.slice(i, i + ENTRIES_PER_INSERT)));
    }
    return { added: rows.map(toEntry), existing: entries.length - rows.length, limit };
  }

  const getEndpoint = async (id: string) => {
    const row = await core.first(q.selectFrom('webhook_endpoint').selectAll().where('id', '=', id));
    return row ? toEndpoint(row) : null;
  };
  const existingEndpoint = async (id: string) => {
    const endpoint = await getEndpoint(id);
    if (!endpoint) throw new AccountsError('not_found', `no webhook endpoint with id "${id}"`);
    return endpoint;
  };

  return {
    addWatchEntries: (projectId, entries, freeLimit, now = new Date()) =>
      core.transaction(() => addSteps(projectId, entries, freeLimit, now)),

    watchLimit: async (projectId, freeLimit, now = new Date()) =>
      (await core.transaction(() => limitSteps(projectId, freeLimit, now, false))).limit,

    async listWatchEntries(projectId) {
      const rows = await core.all(
        q
          .selectFrom('watch_entry')
          .selectAll()
          .$if(projectId !== undefined, (s) => s.where('project_id', '=', projectId!))
          .orderBy('project_id')
          .orderBy('created_at')
          .orderBy('id'),
      );
      return rows.map(toEntry);
    },

    async removeWatchEntry(projectId, id) {
      const gone = await core.all(
        q.deleteFrom('watch_entry').where('project_id', '=', projectId).where('id', '=', id).returning('id'),
      );
      if (gone.length === 0) throw new AccountsError('not_found', `the project has no watch entry "${id}"`);
    },

    async setPlanWatchLimit(plan, limit) {
      const updated = await core.all(
        q.updateTable('plan').set({ max_watch_entries: limit }).where('name', '=', plan).returning('name'),
      );
      if (updated.length === 0) throw new AccountsError('not_found', `no plan "${plan}" in the plan table`);
    },

    async createEndpoint(input, now = new Date()) {
      const project = await core.first(
        q.selectFrom('project').select('id').where('id', '=', input.projectId),
      );
      if (!project) throw new AccountsError('not_found', `no project with id "${input.projectId}"`);
      const secret = newWebhookSecret();
      const row = {
        id: newId('endpoint'),
        project_id: input.projectId,
        url: input.url,
        kinds: [...new Set(input.kinds)].sort().join(' '),
        description: input.description ?? '',
        secret,
        previous_secret: null,
        previous_secret_until: null,
        created_at: iso(now),
        disabled_at: null,
        failing_since: null,
      };
      await core.all(q.insertInto('webhook_endpoint').values(row));
      return { endpoint: toEndpoint(row, now), secret };
    },

    async listEndpoints(projectId) {
      const rows = await core.all(
        q
          .selectFrom('webhook_endpoint')
          .selectAll()
          .$if(projectId !== undefined, (s) => s.where('project_id', '=', projectId!))
          .$call(core.oldestFirst()),
      );
      return rows.map((r) => toEndpoint(r));
    },

    getEndpoint,

    async rotateEndpointSecret(id, previousValidUntil) {
      await existingEndpoint(id);
      const secret = newWebhookSecret();
      await core.transaction(function* () {
        const row = yield* firstOf(q.selectFrom('webhook_endpoint').select('secret').where('id', '=', id));
        yield* rowsOf(
          q
            .updateTable('webhook_endpoint')
            .set({ secret, previous_secret: row!.secret, previous_secret_until: iso(previousValidUntil) })
            .where('id', '=', id),
        );
      });
      return secret;
    },

    async setEndpointEnabled(id, enabled, now = new Date()) {
      await existingEndpoint(id);
      await core.all(
        q
          .updateTable('webhook_endpoint')
          .set(enabled ? { disabled_at: null, failing_since: null } : { disabled_at: iso(now) })
          .where('id', '=', id),
      );
      return existingEndpoint(id);
    },

    async removeEndpoint(id) {
      await existingEndpoint(id);
      await core.transaction(function* () {
        yield* rowsOf(q.deleteFrom('webhook_attempt').where('endpoint_id', '=', id));
        yield* rowsOf(q.deleteFrom('webhook_delivery').where('endpoint_id', '=', id));
        yield* rowsOf(q.deleteFrom('webhook_endpoint').where('id', '=', id));
      });
    },
  };
}
