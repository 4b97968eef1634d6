/**
 * Plans and durable monthly usage in the accounts store: the plan table (the Free plan's limits are
 * settings, never rows) and the counted requests per workspace and project and UTC month.
 */
import { sql } from 'kysely';
import { compiledOnce } from './database.js';
import { rowsOf } from './steps.js';
import { parsePlanInput } from './input.js';
import { iso, toPlan } from './rows.js';
import type { UsageTable } from './schema.js';
import type { StoreCore } from './store-core.js';
import type { UsageDelta, UsageScope } from './records.js';
import type { AccountsStore } from './store.js';

/** Usage rows per VALUES list: 4 parameters each stays far below SQLite's limit. */
const USAGE_ROWS_PER_INSERT = 1_000;

type UsageOperations = Pick<
  AccountsStore,
  'listPlans' | 'getPlan' | 'upsertPlan' | 'getUsage' | 'addUsage' | 'listUsage'
>;

export function usageOperations(core: StoreCore): UsageOperations {
  const { q } = core;

  // Read when the plan and counter caches miss, so compiled once.
  const plan = compiledOnce((name: string) => q.selectFrom('plan').selectAll().where('name', '=', name), 1);
  const usage = compiledOnce(
    (scope: string, id: string, month: string) =>
      q
        .selectFrom('usage')
        .select('used')
        .where('scope', '=', scope as UsageScope)
        .where('id', '=', id)
        .where('month', '=', month),
    3,
  );

  /**
   * One `used = used + n` upsert per row, so any number of writers can add to the same rows. The
   * deltas of one row are summed first; a sum below zero adds nothing (a count never shrinks).
   */
  function usageUpserts(deltas: readonly UsageDelta[]) {
    const rows = new Map<string, UsageTable>();
    for (const d of deltas) {
      const key = `${d.scope}\u0000${d.id}\u0000${d.month}`;
      const row = rows.get(key) ?? { scope: d.scope, id: d.id, month: d.month, used: 0 };
      row.used += d.count;
      rows.set(key, row);
    }
    const values = [...rows.values()].map((row) => ({ ...row, used: Math.max(0, row.used) }));
    const insert = q.insertInto('usage');
    const column = (name: keyof UsageTable) => values.map((row) => row[name]);
    const batches = core.dialect.columnArrays
      ? [
          insert
            .columns(['scope', 'id', 'month', 'used'])
            .expression(
              sql`select * from unnest(${column('scope')}::text[], ${column('id')}::text[], ${column('month')}::text[], ${column('used')}::bigint[])`,
            ),
        ]
      : Array.from({ length: Math.ceil(values.length / USAGE_ROWS_PER_INSERT) }, (_, i) =>
          insert.values(values.slice(i * USAGE_ROWS_PER_INSERT, (i + 1) * USAGE_ROWS_PER_INSERT)),
        );
    return batches.map((batch) =>
      batch.onConflict((oc) =>
        oc
          .columns(['scope', 'id', 'month'])
          .doUpdateSet((eb) => ({ used: eb('usage.used', '+', eb.ref('excluded.used')) })),
      ),
    );
  }

  return {
    async listPlans() {
      return (await core.all(q.selectFrom('plan').selectAll().orderBy('name'))).map(toPlan);
    },

    async getPlan(name) {
      const row = await core.first(plan(name));
      return row ? toPlan(row) : null;
    },

    async upsertPlan(input) {
      const parsed = parsePlanInput(input);
      const row = await core.first(
        q
          .insertInto('plan')
          .values({
            name: parsed.name,
            requests_per_minute: parsed.requestsPerMinute,
            monthly_quota: parsed.monthlyQuota,
            max_page_size: parsed.maxPageSize,
            updated_at: iso(new Date()),
          })
          .onConflict((oc) =>
            oc.column('name').doUpdateSet((eb) => ({
              requests_per_minute: eb.ref('excluded.requests_per_minute'),
              monthly_quota: eb.ref('excluded.monthly_quota'),
              max_page_size: eb.ref('excluded.max_page_size'),
              updated_at: eb.ref('excluded.updated_at'),
            })),
          )
          .returningAll(),
      );
      return toPlan(row!);
    },

    async getUsage(scope, id, month) {
      return (await core.first(usage(scope, id, month)))?.used ?? 0;
    },

    async addUsage(deltas) {
      if (deltas.length === 0) return;
      const upserts = usageUpserts(deltas);
      // One statement is atomic by itself (and one round trip); more go in one transaction.
      if (upserts.length === 1) await core.all(upserts[0]!);
      else
        await core.transaction(function* () {
          for (const upsert of upserts) yield* rowsOf(upsert);
        });
    },

    async listUsage(month, { workspaceId } = {}) {
      return core.all(
        q
          .selectFrom('usage')
          .select(['scope', 'id', 'month', 'used'])
          .where('month', '=', month)
          .$if(workspaceId !== undefined, (u) =>
            u.where((eb) =>
              eb.or([
                eb.and([eb('scope', '=', 'workspace'), eb('id', '=', workspaceId!)]),
                eb.and([
                  eb('scope', '=', 'project'),
                  eb(
                    'id',
                    'in',
                    eb.selectFrom('project').select('id').where('workspace_id', '=', workspaceId!),
                  ),
                ]),
              ]),
            ),
          )
          .orderBy('scope', 'desc')
          .orderBy('id'),
      );
    },
  };
}
