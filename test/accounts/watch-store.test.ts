/**
 * Watch entries, endpoints, events and the webhook outbox of the accounts store, on SQLite and on
 * PostgreSQL alike: the plan's entry limit, the run lease of a release pair (one process computes
 * it; an expired lease passes on), the idempotent insert of events and their deliveries, and the
 * delivery lease: several stores (processes) claiming at once never get the same delivery, an
 * attempt is recorded only by the lease's owner, a lease that expires hands the delivery on, and a
 * day of failures disables the endpoint.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAccountsStore, type AccountsStore } from '../../accounts/index.js';
import { openPgAccountsStore } from '../../accounts/pg-store.js';
import type { NewWatchEvent } from '../../accounts/watch-types.js';
import { requireSharedStores, uniqueNamespace } from '../helpers/limits.js';

const stores: Array<[string, (t: Test) => () => AccountsStore]> = [
  [
    'sqlite',
    (t) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'watch-store-'));
      t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
      const file = path.join(dir, 'accounts.sqlite');
      return () => openAccountsStore(file);
    },
  ],
  [
    'postgresql',
    (t) => {
      const { databaseUrl } = requireSharedStores('database');
      const { schema } = uniqueNamespace(t, 'watchstore');
      return () => openPgAccountsStore({ url: databaseUrl, schema });
    },
  ],
];

const T0 = new Date('2026-12-01T00:00:00.000Z');
const at = (ms: number) => new Date(T0.getTime() + ms);
const ok = (startedAt: Date) => ({
  startedAt,
  durationMs: 3,
  status: 204,
  error: null,
  replyHead: '',
  ok: true,
});
const failed = (startedAt: Date) => ({
  startedAt,
  durationMs: 3,
  status: 500,
  error: null,
  replyHead: 'boom',
  ok: false,
});

const event = (projectId: string, n: number, kind = 'domain.dns_changed'): NewWatchEvent => ({
  id: `evt_test${String(n).padStart(6, '0')}`,
  projectId,
  release: '20261201T000000Z',
  previousRelease: '20261130T000000Z',
  kind,
  subject: `d${n}.example`,
  payload: JSON.stringify({ n }),
});

for (const [kind, make] of stores) {
  t.test(kind, async (t) => {
    const open = make(t);
    const store = open();
    t.teardown(() => store.close());
    const ws = await store.createWorkspace({ name: 'acme' });
    const project = await store.createProject({ workspaceId: ws.id, name: 'web' });

    t.test('entries within the plan limit', async (t) => {
      const first = await store.addWatchEntries(
        project.id,
        [
          { kind: 'domain', subject: 'shop.example' },
          { kind: 'prefix', subject: '192.0.2.0/24' },
        ],
        3,
      );
      t.equal(first.added.length, 2);
      const again = await store.addWatchEntries(project.id, [{ kind: 'domain', subject: 'shop.example' }], 3);
      t.same([again.added.length, again.existing], [0, 1], 'an entry it has is skipped');
      await t.rejects(
        store.addWatchEntries(
          project.id,
          [
            { kind: 'asn', subject: '13335' },
            { kind: 'ip', subject: '1.1.1.1' },
          ],
          3,
        ),
        { code: 'watch_limit_reached' },
      );
      t.equal(await store.watchLimit(project.id, 3), 3, "the Free plan's limit, as the console shows it");
      await store.upsertPlan({ name: 'pro', requestsPerMinute: 60, monthlyQuota: 1000, maxPageSize: 100 });
      await store.setPlanWatchLimit('pro', 10);
      await store.setWorkspacePlan(ws.id, 'pro', null);
      t.equal(await store.watchLimit(project.id, 3), 10, "the plan's own limit");
      await t.rejects(store.watchLimit('prj_0000000000000000', 3), { code: 'not_found' });
      const more = await store.addWatchEntries(
        project.id,
        [
          { kind: 'asn', subject: '13335' },
          { kind: 'ip', subject: '1.1.1.1' },
        ],
        3,
      );
      t.same([more.added.length, more.limit], [2, 10], "the plan's own limit");
      const listed = await store.listWatchEntries(project.id);
      t.same(listed.map((e) => `${e.kind} ${e.subject}`).sort(), [
        'asn 13335',
        'domain shop.example',
        'ip 1.1.1.1',
        'prefix 192.0.2.0/24',
      ]);
      const ip = listed.find((e) => e.kind === 'ip')!;
      await store.removeWatchEntry(project.id, ip.id);
      await t.rejects(store.removeWatchEntry(project.id, ip.id), { code: 'not_found' });
      t.equal((await store.listWatchEntries()).length, 3);
    });

    t.test('the run lease of a release pair', async (t) => {
      t.same(await store.claimWatchRun('20261130T000000Z', 'a', 60_000, T0), { previousRelease: null });
      t.equal(await store.claimWatchRun('20261130T000000Z', 'b', 60_000, T0), 'held', 'leased by a');
      t.equal(await store.finishWatchRun('20261130T000000Z', 'b', 0, T0), false, 'b holds no lease');
      t.equal(await store.finishWatchRun('20261130T000000Z', 'a', 0, T0), true);
      t.equal(await store.claimWatchRun('20261130T000000Z', 'b', 60_000, T0), 'skip', 'done');
      t.same(await store.claimWatchRun('20261201T000000Z', 'a', 60_000, T0), {
        previousRelease: '20261130T000000Z',
      });
      t.equal(await store.claimWatchRun('20261201T000000Z', 'b', 60_000, at(59_000)), 'held');
      t.equal(
        await store.renewWatchRun('20261201T000000Z', 'b', 60_000, at(30_000)),
        false,
        'b holds no lease',
      );
      t.equal(await store.renewWatchRun('20261201T000000Z', 'a', 60_000, at(30_000)), true, "a's heartbeat");
      t.equal(
        await store.claimWatchRun('20261201T000000Z', 'b', 60_000, at(89_000)),
        'held',
        'renewed at 30 s: held until 90 s',
      );
      t.same(
        await store.claimWatchRun('20261201T000000Z', 'b', 60_000, at(91_000)),
        { previousRelease: '20261130T000000Z' },
        'an expired lease passes on',
      );
      t.equal(await store.renewWatchRun('20261201T000000Z', 'a', 60_000, at(91_000)), false, 'a lost it');
      t.equal(await store.finishWatchRun('20261201T000000Z', 'a', 0, at(91_000)), false, 'a lost it');
      t.equal(await store.finishWatchRun('20261201T000000Z', 'b', 0, at(91_000)), true);
      t.equal(await store.renewWatchRun('20261201T000000Z', 'b', 60_000, at(91_000)), false, 'done');
      t.equal(await store.claimWatchRun('20261129T000000Z', 'c', 60_000, T0), 'skip', 'older than the head');
    });

    t.test('events once, deliveries per admitting endpoint, one lease at a time', async (t) => {
      const all = await store.createEndpoint(
        { projectId: project.id, url: 'https://a.example/h', kinds: [] },
        T0,
      );
      const some = await store.createEndpoint(
        { projectId: project.id, url: 'https://b.example/h', kinds: ['ip.range_entered'] },
        T0,
      );
      t.match(all.secret, /^whsec_[A-Za-z0-9+/]{32}$/);
      t.notOk(JSON.stringify(await store.listEndpoints(project.id)).includes('whsec_'), 'no secret listed');
      const events = Array.from({ length: 30 }, (_, i) =>
        event(project.id, i, i < 5 ? 'ip.range_entered' : undefined),
      );
      t.equal(await store.insertWatchEvents(events, T0), 30);
      t.equal(await store.insertWatchEvents(events, T0), 0, 'computed again: nothing new');
      t.equal((await store.listDeliveries(all.endpoint.id)).length, 30);
      t.equal((await store.listDeliveries(some.endpoint.id)).length, 5, 'the kinds filter');

      // Four processes claim at once: every delivery goes to exactly one of them.
      const others = [open(), open(), open()];
      t.teardown(() => Promise.all(others.map((s) => s.close())));
      const claimers = [store, ...others];
      const claims = await Promise.all(claimers.map((s, i) => s.claimDeliveries(`w${i}`, 50, 60_000, T0)));
      const keys = claims.flat().map((c) => `${c.eventId} ${c.endpointId}`);
      t.equal(keys.length, 35, 'all 35 claimed');
      t.equal(new Set(keys).size, 35, 'none twice');
      t.same(await store.claimDeliveries('w9', 50, 60_000, at(1_000)), [], 'leased: nobody else gets them');

      const mine = claims.flat()[0]!;
      t.same(mine.secrets, [mine.endpointId === all.endpoint.id ? all.secret : some.secret]);
      const stolen = { ...mine, leaseOwner: 'intruder' };
      t.same(await store.recordAttempt(stolen, ok(T0), null, 86_400_000), {
        recorded: false,
        disabled: false,
      });
      t.same(await store.recordAttempt(mine, ok(T0), null, 86_400_000), { recorded: true, disabled: false });

      // A lease that expires hands the delivery to the next claim, with the same event.
      const again = await store.claimDeliveries('w9', 100, 60_000, at(61_000));
      t.equal(again.length, 34, 'the other 34 leases expired');
      t.notOk(
        again.some((c) => c.eventId === mine.eventId && c.endpointId === mine.endpointId),
        'the delivered one is not sent again',
      );
    });

    t.test('retries, a day of failures disables the endpoint, redelivery', async (t) => {
      const project2 = await store.createProject({ workspaceId: ws.id, name: 'ops' });
      const { endpoint } = await store.createEndpoint(
        { projectId: project2.id, url: 'https://c.example/h', kinds: [] },
        T0,
      );
      await store.insertWatchEvents([event(project2.id, 900)], T0);
      const day = 86_400_000;
      let now = T0;
      for (let attempt = 0; ; attempt++) {
        const [claimed] = (await store.claimDeliveries('w', 100, 60_000, now)).filter(
          (c) => c.endpointId === endpoint.id,
        );
        t.ok(claimed, `attempt ${attempt + 1} claimed`);
        const next = new Date(now.getTime() + 6 * 3_600_000);
        const result = await store.recordAttempt(claimed!, failed(now), next, day);
        if (result.disabled) {
          t.ok(now.getTime() - T0.getTime() >= day, 'disabled after a day of failures');
          break;
        }
        now = next;
      }
      t.ok((await store.getEndpoint(endpoint.id))!.disabledAt, 'disabled');
      t.same(
        (await store.claimDeliveries('w', 100, 60_000, at(10 * day))).filter(
          (c) => c.endpointId === endpoint.id,
        ),
        [],
        "a disabled endpoint's deliveries wait",
      );
      const log = await store.listAttempts(endpoint.id);
      t.equal(log.length, 5);
      t.same(
        log.map((a) => [a.attempt, a.status, a.replyHead]),
        [5, 4, 3, 2, 1].map((n) => [n, 500, 'boom']),
      );
      await store.setEndpointEnabled(endpoint.id, true);
      await store.redeliver('evt_test000900', endpoint.id, at(10 * day));
      const [back] = (await store.claimDeliveries('w', 100, 60_000, at(10 * day))).filter(
        (c) => c.endpointId === endpoint.id,
      );
      t.equal(back?.eventId, 'evt_test000900', 'redelivered: the same event id');
      const rotated = await store.rotateEndpointSecret(endpoint.id, at(11 * day));
      const [signed] = (await store.claimDeliveries('w2', 100, 60_000, at(10 * day + 61_000))).filter(
        (c) => c.endpointId === endpoint.id,
      );
      t.same(signed?.secrets.length, 2, 'both secrets sign during a rotation');
      t.equal(signed?.secrets[0], rotated);
      const testId = await store.createTestEvent(endpoint.id, (id) => JSON.stringify({ id }), at(10 * day));
      t.match(testId, /^evt_test_/);
      t.same(
        (await store.listEvents({ projectId: project2.id, limit: 10 })).map((e) => e.id),
        ['evt_test000900'],
        'the feed lists no test event',
      );
    });

    t.test('the change feed pages by position', async (t) => {
      const page1 = await store.listEvents({ projectId: project.id, limit: 10 });
      t.equal(page1.length, 10);
      const page2 = await store.listEvents({
        projectId: project.id,
        limit: 100,
        since: { eventId: page1[9]!.id },
      });
      t.equal(page2.length, 20);
      t.same(
        (await store.listEvents({ projectId: project.id, limit: 100, kinds: ['ip.range_entered'] })).length,
        5,
      );
      t.same(
        (await store.listEvents({ projectId: project.id, limit: 100, subject: 'd7.example' })).map(
          (e) => e.id,
        ),
        ['evt_test000007'],
      );
      t.same(
        await store.listEvents({
          projectId: project.id,
          limit: 100,
          since: { moment: new Date('2026-12-01T00:00:00Z') },
        }),
        [],
        'no release after that moment',
      );
    });
  });
}
