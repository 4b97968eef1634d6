/**
 * API keys in the accounts store: the key check, creation within the 25-key limit, listing and
 * revocation. Only a key's hash is stored (api-key.ts).
 */
import { displayKey, generateKey, hashKey, looksLikeKey } from './api-key.js';
import { compiledOnce } from './database.js';
import { firstOf, rowsOf, type Steps } from './steps.js';
import { newId } from './ids.js';
import { parseKeyInput } from './input.js';
import { iso, toDate, toDateOrNull, toKey, type KeyRow } from './rows.js';
import type { StoreCore } from './store-core.js';
import { AccountsError, MAX_ACTIVE_KEYS_PER_WORKSPACE, effectivePlan, type AccountsStore } from './store.js';

export function keyOperations(
  core: StoreCore,
): Pick<AccountsStore, 'verifyKey' | 'createKey' | 'listKeys' | 'getKey' | 'revokeKey'> {
  const { q } = core;

  /** The key check: a request that misses the key cache runs it, so it is compiled once. */
  const principal = compiledOnce(
    (hash: string) =>
      q
        .selectFrom('api_key as k')
        .innerJoin('project as p', 'p.id', 'k.project_id')
        .innerJoin('workspace as w', 'w.id', 'p.workspace_id')
        .select([
          'k.id',
          'k.project_id',
          'p.workspace_id',
          'w.plan',
          'w.plan_expires_at',
          'p.monthly_cap',
          'k.expires_at',
          'k.revoked_at',
        ])
        .where('k.hash', '=', hash),
    1,
  );

  /** Key records: a key's columns and its project's workspace, oldest first. */
  const keyRecords = () =>
    q
      .selectFrom('api_key as k')
      .innerJoin('project as p', 'p.id', 'k.project_id')
      .leftJoin(`${core.dialect.users} as u`, 'u.id', 'k.created_by')
      .select([
        'k.id',
        'k.project_id',
        'p.workspace_id',
        'k.label',
        'k.display',
        'k.created_at',
        'k.expires_at',
        'k.revoked_at',
        'k.last_used_at',
        'u.email as created_by',
      ])
      .$call(core.oldestFirst('k.'));

  function* createKeySteps(parsed: ReturnType<typeof parseKeyInput>, key: string, now: Date): Steps<KeyRow> {
    const project = yield* firstOf(
      q.selectFrom('project').select(['id', 'workspace_id']).where('id', '=', parsed.projectId),
    );
    if (!project) throw new AccountsError('not_found', `no project with id "${parsed.projectId}"`);
    // From here on the transaction holds the write lock (SQLite) or the workspace row (PostgreSQL):
    // no other writer can insert between this count and this insert.
    yield* core.lockWorkspace(project.workspace_id);
    const counted = yield* firstOf(
      q
        .selectFrom('api_key as k')
        .innerJoin('project as p', 'p.id', 'k.project_id')
        .select((eb) => eb.fn.countAll<number>().as('active'))
        .where('p.workspace_id', '=', project.workspace_id)
        .where('k.revoked_at', 'is', null)
        .where((eb) => eb.or([eb('k.expires_at', 'is', null), eb('k.expires_at', '>', iso(now))])),
    );
    const active = counted?.active ?? 0;
    if (active >= MAX_ACTIVE_KEYS_PER_WORKSPACE) {
      throw new AccountsError(
        'key_limit_reached',
        `the workspace already has ${active} active keys, the most allowed (${MAX_ACTIVE_KEYS_PER_WORKSPACE}): revoke a key first`,
      );
    }
    const id = newId('key');
    yield* rowsOf(
      q.insertInto('api_key').values({
        id,
        project_id: project.id,
        label: parsed.label,
        hash: hashKey(key),
        display: displayKey(key),
        created_at: iso(now),
        expires_at: parsed.expiresAt ? iso(parsed.expiresAt) : null,
        created_by: parsed.createdBy,
      }),
    );
    return (yield* firstOf(keyRecords().where('k.id', '=', id)))!;
  }

  const getKey = async (id: string) => {
    const row = await core.first(keyRecords().where('k.id', '=', id));
    return row ? toKey(row) : null;
  };

  return {
    async verifyKey(token, now = new Date()) {
      if (!looksLikeKey(token)) return null;
      // An equality lookup on the hash: what an attacker can time is a search for a sha256 value
      // they cannot choose, so it tells them nothing about stored keys.
      const row = await core.first(principal(hashKey(token)));
      if (!row || row.revoked_at !== null) return null;
      if (row.expires_at !== null && toDate(row.expires_at).getTime() <= now.getTime()) return null;
      return {
        keyId: row.id,
        projectId: row.project_id,
        workspaceId: row.workspace_id,
        plan: effectivePlan({ plan: row.plan, planExpiresAt: toDateOrNull(row.plan_expires_at) }, now),
        projectMonthlyCap: row.monthly_cap,
      };
    },

    async createKey(input, now = new Date()) {
      const parsed = parseKeyInput(input, now);
      const key = generateKey();
      return { key, record: toKey(await core.transaction(() => createKeySteps(parsed, key, now))) };
    },

    async listKeys({ workspaceId, projectId } = {}) {
      const query = keyRecords()
        .$if(workspaceId !== undefined, (k) => k.where('p.workspace_id', '=', workspaceId!))
        .$if(projectId !== undefined, (k) => k.where('k.project_id', '=', projectId!));
      return (await core.all(query)).map(toKey);
    },

    getKey,

    async revokeKey(id, now = new Date()) {
      const revoked = await core.all(
        q
          .updateTable('api_key')
          .set({ revoked_at: iso(now) })
          .where('id', '=', id)
          .where('revoked_at', 'is', null)
          .returning('id'),
      );
      const record = await getKey(id);
      if (!record) throw new AccountsError('not_found', `no key with id "${id}"`);
      if (revoked.length === 0) {
        throw new AccountsError(
          'already_revoked',
          `key ${id} was already revoked at ${iso(record.revokedAt!).replace(/\.\d{3}Z$/, 'Z')}`,
        );
      }
      return record;
    },
  };
}
