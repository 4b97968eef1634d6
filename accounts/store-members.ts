/**
 * Members of workspaces in the accounts store: users are created by e-mail address on first use
 * (stored lowercased), a member's role is changed by adding them again.
 */
import { firstOf, rowsOf, type Steps } from './steps.js';
import { newId } from './ids.js';
import { parseMemberInput } from './input.js';
import { iso, toDate } from './rows.js';
import type { StoreCore } from './store-core.js';
import type { Member } from './records.js';
import { AccountsError, type AccountsStore } from './store.js';

export function memberOperations(
  core: StoreCore,
): Pick<AccountsStore, 'addMember' | 'listMembers' | 'removeMember'> {
  const { q } = core;
  const users = core.dialect.users;

  function* addMemberSteps(workspaceId: string, member: ReturnType<typeof parseMemberInput>): Steps<Member> {
    if (!(yield* core.lockWorkspace(workspaceId))) {
      throw new AccountsError('not_found', `no workspace with id "${workspaceId}"`);
    }
    yield* rowsOf(
      q
        .insertInto(users)
        .values({ id: newId('user'), email: member.email, created_at: iso(new Date()) })
        .onConflict((oc) => oc.column('email').doNothing()),
    );
    const user = (yield* firstOf(q.selectFrom(users).select('id').where('email', '=', member.email)))!;
    const [row] = yield* rowsOf(
      q
        .insertInto('member')
        .values({
          workspace_id: workspaceId,
          user_id: user.id,
          role: member.role,
          created_at: iso(new Date()),
        })
        .onConflict((oc) =>
          oc.columns(['workspace_id', 'user_id']).doUpdateSet((eb) => ({ role: eb.ref('excluded.role') })),
        )
        .returning(['role', 'created_at']),
    );
    return {
      workspaceId,
      userId: user.id,
      email: member.email,
      role: row!.role,
      createdAt: toDate(row!.created_at),
    };
  }

  return {
    async addMember(workspaceId, address, role) {
      const member = parseMemberInput(address, role);
      return core.transaction(() => addMemberSteps(workspaceId, member));
    },

    async listMembers(workspaceId) {
      const rows = await core.all(
        q
          .selectFrom('member as m')
          .innerJoin(`${users} as u`, 'u.id', 'm.user_id')
          .select(['m.user_id', 'u.email', 'm.role', 'm.created_at'])
          .where('m.workspace_id', '=', workspaceId)
          .orderBy('m.created_at')
          .orderBy('u.email'),
      );
      return rows.map((r) => ({
        workspaceId,
        userId: r.user_id,
        email: r.email,
        role: r.role,
        createdAt: toDate(r.created_at),
      }));
    },

    async removeMember(workspaceId, address) {
      const email = address.trim().toLowerCase();
      const removed = await core.all(
        q
          .deleteFrom('member')
          .where('workspace_id', '=', workspaceId)
          .where('user_id', '=', (eb) => eb.selectFrom(users).select('id').where('email', '=', email))
          .returning('user_id'),
      );
      if (removed.length === 0) {
        throw new AccountsError('not_found', `${email} is not a member of workspace "${workspaceId}"`);
      }
    },
  };
}
