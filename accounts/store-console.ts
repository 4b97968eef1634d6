/**
 * The console's part of the accounts store (console-types.ts): users and their two-factor settings,
 * sessions, sign-in links, recovery codes and the daily usage per key. Written once for SQLite and
 * PostgreSQL like the rest (sql-store.ts).
 */
import { sql } from 'kysely';
import { rowsOf } from './steps.js';
import { newId } from './ids.js';
import { parseMemberInput } from './input.js';
import { iso, toDate, toDateOrNull, toWorkspace } from './rows.js';
import type { StoreCore } from './store-core.js';
import type { ConsoleSession, ConsoleStore, ConsoleUser } from './console-types.js';

/** Daily rows per VALUES list (5 parameters each). */
const DAY_ROWS_PER_INSERT = 500;

interface UserRow {
  id: string;
  email: string;
  totp_secret: string | null;
  totp_enabled_at: string | Date | null;
  totp_last_step: number | string | null;
}

const toUser = (r: UserRow): ConsoleUser => ({
  id: r.id,
  email: r.email,
  totpSecret: r.totp_secret,
  totpEnabledAt: toDateOrNull(r.totp_enabled_at),
  totpLastStep: r.totp_last_step === null ? null : Number(r.totp_last_step),
});

export function consoleOperations(core: StoreCore): ConsoleStore {
  const { q } = core;
  const users = core.dialect.users;
  const userColumns = ['id', 'email', 'totp_secret', 'totp_enabled_at', 'totp_last_step'] as const;

  const findUserByEmail = async (email: string) => {
    const row = await core.first(
      q.selectFrom(users).select(userColumns).where('email', '=', email.trim().toLowerCase()),
    );
    return row ? toUser(row) : null;
  };

  return {
    findUserByEmail,

    async getUser(id) {
      const row = await core.first(q.selectFrom(users).select(userColumns).where('id', '=', id));
      return row ? toUser(row) : null;
    },

    async inviteUser(address, now = new Date()) {
      const { email } = parseMemberInput(address, 'member');
      await core.all(
        q
          .insertInto(users)
          .values({ id: newId('user'), email, created_at: iso(now) })
          .onConflict((oc) => oc.column('email').doNothing()),
      );
      return (await findUserByEmail(email))!;
    },

    async memberships(userId) {
      const rows = await core.all(
        q
          .selectFrom('member as m')
          .innerJoin('workspace as w', 'w.id', 'm.workspace_id')
          .selectAll('w')
          .select('m.role')
          .where('m.user_id', '=', userId)
          .orderBy('w.created_at')
          .orderBy('w.id'),
      );
      return rows.map((r) => ({ workspace: toWorkspace(r), role: r.role }));
    },

    async memberRole(workspaceId, userId) {
      const row = await core.first(
        q
          .selectFrom('member')
          .select('role')
          .where('workspace_id', '=', workspaceId)
          .where('user_id', '=', userId),
      );
      return row?.role ?? null;
    },

    async createSignInLink(hash, userId, now, expiresAt) {
      await core.all(
        q
          .insertInto('sign_in_link')
          .values({ hash, user_id: userId, created_at: iso(now), expires_at: iso(expiresAt) }),
      );
    },

    async consumeSignInLink(hash, now) {
      const rows = await core.all(
        q
          .updateTable('sign_in_link')
          .set({ used_at: iso(now) })
          .where('hash', '=', hash)
          .where('used_at', 'is', null)
          .where('expires_at', '>', iso(now))
          .returning('user_id'),
      );
      return rows[0]?.user_id ?? null;
    },

    async signInLinkUsable(hash, now) {
      const row = await core.first(
        q
          .selectFrom('sign_in_link')
          .select('user_id')
          .where('hash', '=', hash)
          .where('used_at', 'is', null)
          .where('expires_at', '>', iso(now)),
      );
      return row !== undefined;
    },

    async createSession(s) {
      await core.all(
        q.insertInto('console_session').values({
          id: s.id,
          user_id: s.userId,
          created_at: iso(s.createdAt),
          authenticated_at: iso(s.authenticatedAt),
          last_seen_at: iso(s.lastSeenAt),
          expires_at: iso(s.expiresAt),
          second_factor_pending_since: s.secondFactorPendingSince ? iso(s.secondFactorPendingSince) : null,
        }),
      );
    },

    async getSession(id) {
      const r = await core.first(q.selectFrom('console_session').selectAll().where('id', '=', id));
      if (!r) return null;
      const session: ConsoleSession = {
        id: r.id,
        userId: r.user_id,
        createdAt: toDate(r.created_at),
        authenticatedAt: toDate(r.authenticated_at),
        lastSeenAt: toDate(r.last_seen_at),
        expiresAt: toDate(r.expires_at),
        stepCodeHash: r.step_code_hash,
        stepCodeExpiresAt: toDateOrNull(r.step_code_expires_at),
        stepCodeTries: Number(r.step_code_tries),
        secondFactorPendingSince: toDateOrNull(r.second_factor_pending_since),
      };
      return session;
    },

    async touchSession(id, now) {
      await core.all(
        q
          .updateTable('console_session')
          .set({ last_seen_at: iso(now) })
          .where('id', '=', id),
      );
    },

    async rotateSession(oldId, newId, authenticatedAt) {
      const rows = await core.all(
        q
          .updateTable('console_session')
          .set({
            id: newId,
            ...(authenticatedAt && {
              authenticated_at: iso(authenticatedAt),
              last_seen_at: iso(authenticatedAt),
            }),
            step_code_hash: null,
            step_code_expires_at: null,
            step_code_tries: 0,
          })
          .where('id', '=', oldId)
          .returning('id'),
      );
      return rows.length === 1;
    },

    async completeSecondFactor(oldId, newId, now, expiresAt) {
      const rows = await core.all(
        q
          .updateTable('console_session')
          .set({
            id: newId,
            authenticated_at: iso(now),
            last_seen_at: iso(now),
            expires_at: iso(expiresAt),
            second_factor_pending_since: null,
            step_code_hash: null,
            step_code_expires_at: null,
            step_code_tries: 0,
          })
          .where('id', '=', oldId)
          .where('second_factor_pending_since', 'is not', null)
          .returning('id'),
      );
      return rows.length === 1;
    },

    async deleteSession(id) {
      await core.all(q.deleteFrom('console_session').where('id', '=', id));
    },

    async deleteUserSessions(userId) {
      await core.all(q.deleteFrom('console_session').where('user_id', '=', userId));
    },

    async setStepCode(sessionId, hash, expiresAt) {
      await core.all(
        q
          .updateTable('console_session')
          .set({
            step_code_hash: hash,
            step_code_expires_at: expiresAt && iso(expiresAt),
            step_code_tries: 0,
          })
          .where('id', '=', sessionId),
      );
    },

    async countStepCodeTry(sessionId) {
      const rows = await core.all(
        q
          .updateTable('console_session')
          .set((eb) => ({ step_code_tries: eb('step_code_tries', '+', 1) }))
          .where('id', '=', sessionId)
          .returning('step_code_tries'),
      );
      return Number(rows[0]?.step_code_tries ?? Infinity);
    },

    async setTotp(userId, secret, enabledAt) {
      await core.all(
        q
          .updateTable(users)
          .set({ totp_secret: secret, totp_enabled_at: enabledAt && iso(enabledAt), totp_last_step: null })
          .where('id', '=', userId),
      );
    },

    async useTotpStep(userId, step) {
      const rows = await core.all(
        q
          .updateTable(users)
          .set({ totp_last_step: step })
          .where('id', '=', userId)
          .where((eb) => eb.or([eb('totp_last_step', 'is', null), eb('totp_last_step', '<', step)]))
          .returning('id'),
      );
      return rows.length === 1;
    },

    async replaceRecoveryCodes(userId, hashes) {
      await core.transaction(function* () {
        yield* rowsOf(q.deleteFrom('recovery_code').where('user_id', '=', userId));
        if (hashes.length > 0) {
          yield* rowsOf(
            q.insertInto('recovery_code').values(hashes.map((hash) => ({ user_id: userId, hash }))),
          );
        }
      });
    },

    async useRecoveryCode(userId, hash, now) {
      const rows = await core.all(
        q
          .updateTable('recovery_code')
          .set({ used_at: iso(now) })
          .where('user_id', '=', userId)
          .where('hash', '=', hash)
          .where('used_at', 'is', null)
          .returning('hash'),
      );
      return rows.length === 1;
    },

    async countRecoveryCodes(userId) {
      const row = await core.first(
        q
          .selectFrom('recovery_code')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('user_id', '=', userId)
          .where('used_at', 'is', null),
      );
      return Number(row?.n ?? 0);
    },

    async addDailyUsage(rows, usedAt) {
      if (rows.length === 0) return;
      const keyIds = [...new Set(rows.map((r) => r.keyId))];
      await core.transaction(function* () {
        for (let i = 0; i < rows.length; i += DAY_ROWS_PER_INSERT) {
          const values = rows.slice(i, i + DAY_ROWS_PER_INSERT).map((r) => ({
            key_id: r.keyId,
            project_id: r.projectId,
            workspace_id: r.workspaceId,
            day: r.day,
            used: r.count,
          }));
          yield* rowsOf(
            q
              .insertInto('usage_day')
              .values(values)
              .onConflict((oc) =>
                oc
                  .columns(['key_id', 'day'])
                  .doUpdateSet((eb) => ({ used: eb('usage_day.used', '+', eb.ref('excluded.used')) })),
              ),
          );
        }
        // Coarse on purpose: the time of this write, not of each request.
        yield* rowsOf(
          q
            .updateTable('api_key')
            .set({ last_used_at: iso(usedAt) })
            .where('id', 'in', keyIds)
            .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', iso(usedAt))])),
        );
      });
    },

    async listDailyUsage(workspaceId, fromDay, toDay) {
      const rows = await core.all(
        q
          .selectFrom('usage_day')
          .select(['key_id', 'project_id', 'workspace_id', 'day', 'used'])
          .where('workspace_id', '=', workspaceId)
          .where('day', '>=', fromDay)
          .where('day', '<=', toDay)
          .orderBy('day')
          .orderBy(sql.ref('key_id')),
      );
      return rows.map((r) => ({
        keyId: r.key_id,
        projectId: r.project_id,
        workspaceId: r.workspace_id,
        day: r.day,
        count: Number(r.used),
      }));
    },
  };
}
