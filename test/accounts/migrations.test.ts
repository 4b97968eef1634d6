/**
 * Upgrades lose nothing: an accounts store of every earlier schema, as the code of its time created
 * it (fixtures/: schema 1 and 2 by the DDL of before issue 14, schema 3 as first released, without
 * `user.totp_last_step`, schema 4 as released before issue 34), migrates forward when the store of today opens it, on SQLite and on
 * PostgreSQL: afterwards it has exactly the schema of a fresh store, every row it had is there
 * with the same values, its keys verify, and the store works on it. Opening it again changes
 * nothing.
 */
import t, { type Test } from 'tap';
import { keyStatus, type AccountsStore } from '../../accounts/index.js';
import { MIGRATIONS } from '../../accounts/schema.js';
import {
  postgresqlDbs,
  sqliteDbs,
  type AccountsDbMaker,
  type StoreKind,
} from '../helpers/accounts-schema.js';

/** The keys whose hashes the fixtures hold. */
const KEYS = {
  ci: 'sk_FixtureAcmeWebCi00000000013sUDCS',
  laptop: 'sk_FixtureSoloCliLaptop0000027s3JrE',
  revoked: 'sk_FixtureAcmeWebRevoked00003DbNhM1',
};
const ACME = 'ws_fixtureacme00001';
const SOLO = 'ws_fixturesolo00001';
const WEB = 'prj_fixtureweb000001';
const OWNER = 'usr_fixtureowner0001';

/** Every earlier schema, by the version its store records. */
const FIXTURES = [1, 2, 3, 4];

const makers: Array<[StoreKind, (t: Test) => AccountsDbMaker]> = [
  ['sqlite', sqliteDbs],
  ['postgresql', postgresqlDbs],
];

/** What the store answers about the fixture's rows, the same whatever schema they were written in. */
async function checkRows(t: Test, store: AccountsStore, version: number): Promise<void> {
  t.same(await store.verifyKey(KEYS.ci), {
    keyId: 'key_fixtureci0000001',
    projectId: WEB,
    workspaceId: ACME,
    plan: 'pro',
    projectMonthlyCap: 1000,
  });
  t.same(await store.verifyKey(KEYS.laptop), {
    keyId: 'key_fixturelaptop001',
    projectId: 'prj_fixturecli000001',
    workspaceId: SOLO,
    plan: 'free',
    projectMonthlyCap: null,
  });
  t.equal(await store.verifyKey(KEYS.revoked), null, 'a revoked key stays revoked');
  t.same(
    (await store.listWorkspaces()).map((w) => [w.id, w.name, w.plan, w.planExpiresAt?.toISOString() ?? null]),
    [
      [ACME, 'acme', 'pro', null],
      [SOLO, 'solo', 'free', '2027-01-01T00:00:00.000Z'],
    ],
  );
  t.same(
    (await store.listKeys()).map((k) => [k.id, k.display, keyStatus(k, new Date('2026-12-01T00:00:00Z'))]),
    [
      ['key_fixtureci0000001', 'sk_Fixt…UDCS', 'active'],
      ['key_fixturerevoked01', 'sk_Fixt…NhM1', 'revoked'],
      ['key_fixturelaptop001', 'sk_Fixt…3JrE', 'active'],
    ],
  );
  t.same(
    (await store.listMembers(ACME)).map((m) => [m.email, m.role]),
    [
      ['owner@example.org', 'owner'],
      ['dev@example.org', 'member'],
    ],
  );
  if (version >= 2) {
    t.match(await store.getPlan('pro'), { requestsPerMinute: 600, monthlyQuota: 100_000, maxPageSize: 500 });
    t.equal(await store.getUsage('workspace', ACME, '2026-11'), 1234);
    t.equal(await store.getUsage('workspace', ACME, '2026-10'), 4321);
    t.equal(await store.getUsage('project', WEB, '2026-11'), 1200);
    t.equal(await store.getUsage('workspace', SOLO, '2026-11'), 7);
  } else {
    t.equal(await store.getPlan('pro'), null, 'schema 1 had no plans: the Free limits until one is set');
  }
  if (version >= 3) {
    t.match(await store.findUserByEmail('OWNER@example.org'), {
      id: OWNER,
      totpSecret: 'JBSWY3DPEHPK3PXP',
      totpEnabledAt: new Date('2026-03-05T09:00:00.000Z'),
      // Schema 4's fixture had a TOTP step used; the earlier ones had no such column.
      totpLastStep: version >= 4 ? 58_000_000 : null,
    });
    t.match(await store.getSession('5e55105e55105e55105e55105e55105e55105e55105e55105e55105e55105e55'), {
      userId: OWNER,
      stepCodeTries: 0,
      secondFactorPendingSince: version >= 4 ? new Date('2026-11-20T08:00:00.000Z') : null,
    });
    t.equal(await store.countRecoveryCodes(OWNER), 1, 'the unused recovery code');
    t.same(
      (await store.listDailyUsage(ACME, '2026-11-19', '2026-11-20')).map((d) => [d.keyId, d.day, d.count]),
      [
        ['key_fixtureci0000001', '2026-11-19', 700],
        ['key_fixtureci0000001', '2026-11-20', 500],
      ],
    );
    t.equal(await store.useTotpStep(OWNER, 59_000_000), true, 'the TOTP replay check works');
    t.equal(await store.useTotpStep(OWNER, 59_000_000), false, 'and refuses the same step again');
  }
}

for (const [kind, maker] of makers) {
  t.test(kind, async (t) => {
    const dbs = maker(t);
    const fresh = await dbs.fresh();
    const freshSchema = await fresh.describe();

    for (const version of FIXTURES) {
      t.test(`schema ${version}: migrated forward on open, nothing lost`, async (t) => {
        const old = await dbs.fromFixture(version);
        const tables = (await old.tables()).filter((name) => name !== 'schema_migration');
        const before = new Map(await Promise.all(tables.map(async (n) => [n, await old.rows(n)] as const)));
        const recorded = await old.rows('schema_migration');
        t.same(
          recorded.map((r) => r.version),
          MIGRATIONS.filter((m) => m.version <= version).map((m) => m.version),
          'the fixture records its own version',
        );

        const store = old.open();
        await store.ping();
        await store.close();
        t.same(await old.describe(), freshSchema, 'exactly the schema of a fresh store');
        t.same(
          (await old.rows('schema_migration')).map((r) => [r.version, r.name]),
          MIGRATIONS.map((m) => [m.version, m.name]),
          'every migration recorded once',
        );
        t.same(
          (await old.rows('schema_migration')).slice(0, recorded.length),
          recorded,
          'the earlier records untouched',
        );
        for (const [table, rows] of before) {
          const after = await old.rows(table);
          const columns = Object.keys(rows[0] ?? {});
          t.same(
            after.map((row) => Object.fromEntries(columns.map((c) => [c, row[c]]))),
            rows,
            `${table}: every row, the same values`,
          );
          for (const row of after) {
            for (const added of Object.keys(row).filter((c) => !columns.includes(c))) {
              t.equal(row[added], null, `${table}.${added}: a new column, empty`);
            }
          }
        }

        const upgraded = old.open();
        t.teardown(() => upgraded.close());
        await checkRows(t, upgraded, version);
        t.same(await old.describe(), freshSchema, 'opening it again changes nothing');
      });
    }

    t.test('a migration that fails half way leaves the database as it was', async (t) => {
      const old = await dbs.fromFixture(2);
      // A table of migration 3 that is already there: its third statement fails.
      await old.exec('CREATE TABLE console_session (id text PRIMARY KEY)');
      const before = await old.describe();
      await t.rejects(async () => {
        const store = old.open();
        try {
          await store.ping();
        } finally {
          await store.close();
        }
      }, /console_session/);
      t.same(await old.describe(), before, 'no column added, no table created');
      t.same(
        (await old.rows('schema_migration')).map((r) => r.version),
        [1, 2],
      );
      t.equal((await old.rows('api_key')).length, 3);
    });

    t.test('the store works on an upgraded database as on a fresh one', async (t) => {
      const old = await dbs.fromFixture(FIXTURES[0]!);
      const store = old.open();
      t.teardown(() => store.close());
      const ws = await store.createWorkspace({ name: 'new', plan: 'pro' });
      const project = await store.createProject({ workspaceId: ws.id, name: 'web', monthlyCap: 10 });
      const { key, record } = await store.createKey({ projectId: project.id, label: 'ci' });
      t.match(await store.verifyKey(key), { keyId: record.id, plan: 'pro', projectMonthlyCap: 10 });
      await store.upsertPlan({ name: 'pro', requestsPerMinute: 5, monthlyQuota: 50, maxPageSize: 100 });
      t.equal((await store.getPlan('pro'))?.monthlyQuota, 50);
      await store.addUsage([
        { scope: 'workspace', id: ACME, month: '2026-11', count: 2 },
        { scope: 'workspace', id: ACME, month: '2026-11', count: 3 },
      ]);
      t.equal(await store.getUsage('workspace', ACME, '2026-11'), 5);
      await store.addMember(ws.id, 'Dev@Example.org', 'admin');
      t.same(
        (await store.listMembers(ws.id)).map((m) => [m.email, m.role]),
        [['dev@example.org', 'admin']],
      );
      t.equal(keyStatus(await store.revokeKey(record.id)), 'revoked');
      t.equal(await store.verifyKey(key), null);
      const user = await store.inviteUser('new@example.org');
      t.equal((await store.findUserByEmail('NEW@example.org'))?.id, user.id, 'the console tables work too');
    });
  });
}
