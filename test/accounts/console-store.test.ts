/**
 * The console's part of the accounts store (schema 3) in SQLite and in the real PostgreSQL of
 * TEST_DATABASE_URL: invitations, memberships, sign-in links (once, until they expire), sessions
 * (rotation, step-up codes, sign-out everywhere), two-factor settings and recovery codes, and the
 * daily usage per key with its coarse `last used`.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { openAccountsStore, type AccountsStore } from '../../accounts/index.js';
import { openPgAccountsStore } from '../../accounts/pg-store.js';
import { TEST_DATABASE_URL, uniqueNamespace } from '../helpers/limits.js';

const stores: Array<[string, (t: Test) => AccountsStore]> = [
  [
    'sqlite',
    (t) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-console-'));
      t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
      return openAccountsStore(path.join(dir, 'accounts.sqlite'));
    },
  ],
  [
    'postgresql',
    (t) => openPgAccountsStore({ url: TEST_DATABASE_URL, schema: uniqueNamespace(t, 'console').schema }),
  ],
];

const at = (iso: string) => new Date(iso);

for (const [kind, open] of stores) {
  const skip =
    kind === 'postgresql' && !TEST_DATABASE_URL
      ? 'TEST_DATABASE_URL not set: needs a real PostgreSQL'
      : false;
  t.test(kind, { skip }, async (t) => {
    const store = open(t);
    t.teardown(() => store.close());

    const user = await store.inviteUser(' Ann@Example.org ', at('2026-11-01T00:00:00Z'));
    t.match(user, { email: 'ann@example.org', totpSecret: null, totpEnabledAt: null, totpLastStep: null });
    t.same(await store.inviteUser('ann@example.org'), user, 'inviting twice changes nothing');
    t.same(await store.getUser(user.id), user);
    t.equal(await store.findUserByEmail('nobody@example.org'), null);

    const ws = await store.createWorkspace({ name: 'acme' });
    t.same(await store.memberships(user.id), []);
    await store.addMember(ws.id, 'ann@example.org', 'admin');
    t.same(
      (await store.memberships(user.id)).map((m) => [m.workspace.id, m.role]),
      [[ws.id, 'admin']],
    );
    t.equal(await store.memberRole(ws.id, user.id), 'admin');
    t.equal(await store.memberRole('ws_0000000000000000', user.id), null);

    // Links: once, and only before they expire.
    const now = at('2026-11-25T10:00:00Z');
    await store.createSignInLink('h1', user.id, now, at('2026-11-25T10:15:00Z'));
    t.equal(
      await store.signInLinkUsable('h1', at('2026-11-25T10:14:59Z')),
      true,
      'usable, not used by looking',
    );
    t.equal(await store.consumeSignInLink('h1', at('2026-11-25T10:14:59Z')), user.id);
    t.equal(await store.signInLinkUsable('h1', at('2026-11-25T10:14:59Z')), false, 'used');
    t.equal(await store.consumeSignInLink('h1', at('2026-11-25T10:14:59Z')), null, 'used');
    await store.createSignInLink('h2', user.id, now, at('2026-11-25T10:15:00Z'));
    t.equal(await store.consumeSignInLink('h2', at('2026-11-25T10:15:00Z')), null, 'expired');
    t.equal(await store.consumeSignInLink('h3', now), null, 'unknown');

    // Sessions.
    await store.createSession({
      id: 's1',
      userId: user.id,
      createdAt: now,
      authenticatedAt: now,
      lastSeenAt: now,
      expiresAt: at('2026-11-25T22:00:00Z'),
    });
    await store.setStepCode('s1', 'code-hash', at('2026-11-25T10:10:00Z'));
    t.equal(await store.countStepCodeTry('s1'), 1);
    t.equal(await store.countStepCodeTry('s1'), 2);
    t.match(await store.getSession('s1'), { stepCodeHash: 'code-hash', stepCodeTries: 2 });
    await store.touchSession('s1', at('2026-11-25T10:05:00Z'));
    t.ok(await store.rotateSession('s1', 's2', at('2026-11-25T10:06:00Z')));
    t.equal(await store.getSession('s1'), null, 'the old id is gone');
    t.same(await store.getSession('s2'), {
      id: 's2',
      userId: user.id,
      createdAt: now,
      authenticatedAt: at('2026-11-25T10:06:00Z'),
      lastSeenAt: at('2026-11-25T10:06:00Z'),
      expiresAt: at('2026-11-25T22:00:00Z'),
      stepCodeHash: null,
      stepCodeExpiresAt: null,
      stepCodeTries: 0,
      secondFactorPendingSince: null,
    });
    t.notOk(await store.rotateSession('s1', 's3', null), 'an ended session cannot be rotated');
    t.notOk(
      await store.completeSecondFactor('s2', 's4', now, at('2026-11-25T22:00:00Z')),
      'a full session is not completed again',
    );

    // A sign-in waiting for its second factor, then completed.
    await store.createSession({
      id: 'p1',
      userId: user.id,
      createdAt: now,
      authenticatedAt: now,
      lastSeenAt: now,
      expiresAt: at('2026-11-25T10:10:00Z'),
      secondFactorPendingSince: now,
    });
    t.match(await store.getSession('p1'), { secondFactorPendingSince: now });
    t.equal(await store.countStepCodeTry('p1'), 1, 'a wrong code is counted');
    const done = at('2026-11-25T10:03:00Z');
    t.ok(await store.completeSecondFactor('p1', 'p2', done, at('2026-11-25T22:03:00Z')));
    t.equal(await store.getSession('p1'), null, 'the waiting token no longer works');
    t.match(await store.getSession('p2'), {
      authenticatedAt: done,
      lastSeenAt: done,
      expiresAt: at('2026-11-25T22:03:00Z'),
      secondFactorPendingSince: null,
      stepCodeTries: 0,
    });
    await store.deleteUserSessions(user.id);
    t.equal(await store.getSession('s2'), null, 'signed out everywhere');

    // Two-factor settings and recovery codes.
    await store.setTotp(user.id, 'SECRET', at('2026-11-25T11:00:00Z'));
    t.match(await store.getUser(user.id), {
      totpSecret: 'SECRET',
      totpEnabledAt: at('2026-11-25T11:00:00Z'),
    });
    t.ok(await store.useTotpStep(user.id, 100));
    t.notOk(await store.useTotpStep(user.id, 100), 'a TOTP step is accepted once');
    t.notOk(await store.useTotpStep(user.id, 99), 'and never an earlier one');
    t.ok(await store.useTotpStep(user.id, 101));
    t.equal((await store.getUser(user.id))?.totpLastStep, 101);
    await store.replaceRecoveryCodes(user.id, ['r1', 'r2']);
    t.equal(await store.countRecoveryCodes(user.id), 2);
    t.ok(await store.useRecoveryCode(user.id, 'r1', now));
    t.notOk(await store.useRecoveryCode(user.id, 'r1', now), 'a recovery code works once');
    t.equal(await store.countRecoveryCodes(user.id), 1);
    await store.replaceRecoveryCodes(user.id, []);
    t.equal(await store.countRecoveryCodes(user.id), 0);

    // Daily usage per key, and `last used`.
    const project = await store.createProject({ workspaceId: ws.id, name: 'web' });
    const { record } = await store.createKey({ projectId: project.id, label: 'ci' });
    const row = { keyId: record.id, projectId: project.id, workspaceId: ws.id };
    await store.addDailyUsage(
      [
        { ...row, day: '2026-11-24', count: 3 },
        { ...row, day: '2026-11-25', count: 2 },
      ],
      at('2026-11-25T12:00:00Z'),
    );
    await store.addDailyUsage([{ ...row, day: '2026-11-25', count: 5 }], at('2026-11-25T11:00:00Z'));
    t.same(await store.listDailyUsage(ws.id, '2026-11-01', '2026-11-30'), [
      { ...row, day: '2026-11-24', count: 3 },
      { ...row, day: '2026-11-25', count: 7 },
    ]);
    t.same(await store.listDailyUsage(ws.id, '2026-11-25', '2026-11-25'), [
      { ...row, day: '2026-11-25', count: 7 },
    ]);
    t.same(
      (await store.getKey(record.id))?.lastUsedAt,
      at('2026-11-25T12:00:00Z'),
      'last used never goes back',
    );
  });
}
