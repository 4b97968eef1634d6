/**
 * The PostgreSQL accounts store against the real PostgreSQL of TEST_DATABASE_URL (a schema of its
 * own): migrations once under concurrency, keys in every state, the 25-key limit with two
 * "replicas" creating at once, plans, caps, durable usage and members; and the same model in the
 * SQLite store for the methods both implement. A connection cut while a call waits fails that call
 * only.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  MAX_ACTIVE_KEYS_PER_WORKSPACE,
  openAccountsStore,
  type AccountsStore,
} from '../../accounts/index.js';
import { openPgAccountsStore } from '../../accounts/pg-store.js';
import { TEST_DATABASE_URL, requireSharedStores, uniqueNamespace } from '../helpers/limits.js';

const stores: Array<[string, (t: Test) => Promise<() => AccountsStore>]> = [
  [
    'sqlite',
    async (t) => {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'accounts-model-'));
      t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
      const file = path.join(dir, 'accounts.sqlite');
      return () => openAccountsStore(file);
    },
  ],
  [
    'postgresql',
    async (t) => {
      const { databaseUrl } = requireSharedStores('database');
      const { schema } = uniqueNamespace(t, 'pgstore');
      return () => openPgAccountsStore({ url: databaseUrl, schema });
    },
  ],
];

for (const [kind, factory] of stores) {
  t.test(kind, async (t) => {
    const open = await factory(t);
    // Two stores at once: two replicas migrating and writing the same database.
    const a = open();
    const b = open();
    t.teardown(async () => {
      await a.close();
      await b.close();
    });
    await Promise.all([a.ping(), b.ping()]);

    t.test('workspaces, projects and keys in every state', async (t) => {
      const ws = await a.createWorkspace({ name: 'acme' });
      t.equal(ws.plan, 'free');
      t.same(await b.findWorkspace('acme'), ws);
      const project = await a.createProject({ workspaceId: ws.id, name: 'web', monthlyCap: 10 });
      await t.rejects(b.createProject({ workspaceId: ws.id, name: 'web' }), { code: 'already_exists' });
      const { key, record } = await b.createKey({ projectId: project.id, label: 'ci' });
      t.match(await a.verifyKey(key), {
        keyId: record.id,
        projectId: project.id,
        workspaceId: ws.id,
        plan: 'free',
        projectMonthlyCap: 10,
      });
      t.equal(await a.verifyKey(key.slice(0, -1) + (key.endsWith('a') ? 'b' : 'a')), null, 'mistyped');
      const past = new Date(Date.now() - 3_600_000);
      const expired = await a.createKey(
        { projectId: project.id, label: 'old', expiresAt: new Date(past.getTime() + 1000) },
        past,
      );
      t.equal(await a.verifyKey(expired.key), null, 'expired');
      await b.revokeKey(record.id);
      t.equal(await a.verifyKey(key), null, 'revoked');
      await t.rejects(a.revokeKey(record.id), { code: 'already_revoked' });
      t.equal((await a.listKeys({ projectId: project.id })).length, 2);
      t.equal((await a.setProjectCap(project.id, null)).monthlyCap, null);
      await t.rejects(a.setProjectCap('prj_missing', 1), { code: 'not_found' });
    });

    t.test(
      `at most ${MAX_ACTIVE_KEYS_PER_WORKSPACE} active keys, with two stores creating at once`,
      async (t) => {
        const ws = await a.createWorkspace({ name: 'busy' });
        const p1 = await a.createProject({ workspaceId: ws.id, name: 'one' });
        const p2 = await b.createProject({ workspaceId: ws.id, name: 'two' });
        const attempts = Array.from({ length: 40 }, (_, i) =>
          (i % 2 ? a : b).createKey({ projectId: i % 3 ? p1.id : p2.id, label: `k${i}` }),
        );
        const results = await Promise.allSettled(attempts);
        const created = results.filter((r) => r.status === 'fulfilled');
        const refused = results.filter((r) => r.status === 'rejected');
        t.equal(created.length, MAX_ACTIVE_KEYS_PER_WORKSPACE);
        t.ok(refused.every((r) => (r.reason as { code: string }).code === 'key_limit_reached'));
        const first = (created[0] as PromiseFulfilledResult<{ record: { id: string } }>).value.record.id;
        await a.revokeKey(first);
        await t.resolves(
          b.createKey({ projectId: p1.id, label: 'after revoke' }),
          'a revoked key frees a slot',
        );
      },
    );

    t.test('plans, workspace plan with lapse', async (t) => {
      await t.rejects(a.upsertPlan({ name: 'free', requestsPerMinute: 1, monthlyQuota: 1, maxPageSize: 1 }), {
        code: 'invalid_input',
      });
      const pro = await a.upsertPlan({
        name: 'pro',
        requestsPerMinute: 600,
        monthlyQuota: 1e6,
        maxPageSize: 1000,
      });
      t.same(await b.getPlan('pro'), pro);
      await b.upsertPlan({ ...pro, requestsPerMinute: 700 });
      t.equal((await a.getPlan('pro'))!.requestsPerMinute, 700);
      t.same(
        (await a.listPlans()).map((p) => p.name),
        ['pro'],
      );
      const ws = await a.createWorkspace({ name: 'payer' });
      const project = await a.createProject({ workspaceId: ws.id, name: 'p' });
      const { key } = await a.createKey({ projectId: project.id, label: 'k' });
      await a.setWorkspacePlan(ws.id, 'pro', new Date(Date.now() + 86_400_000));
      t.equal((await b.verifyKey(key))!.plan, 'pro');
      await a.setWorkspacePlan(ws.id, 'pro', new Date(Date.now() - 1000));
      t.equal((await b.verifyKey(key))!.plan, 'free', 'a lapsed plan falls back to free');
    });

    t.test('durable usage: batched increments from several writers add up', async (t) => {
      const month = '2026-11';
      await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          (i % 2 ? a : b).addUsage([
            { scope: 'workspace', id: 'ws_u', month, count: 3 },
            { scope: 'project', id: 'prj_u', month, count: 1 },
            { scope: 'workspace', id: 'ws_u', month, count: 2 },
          ]),
        ),
      );
      t.equal(await a.getUsage('workspace', 'ws_u', month), 100);
      t.equal(await b.getUsage('project', 'prj_u', month), 20);
      t.equal(await a.getUsage('workspace', 'ws_u', '2026-12'), 0);
      t.ok((await a.listUsage(month)).some((u) => u.id === 'ws_u' && u.used === 100));
    });

    t.test('members with roles', async (t) => {
      const ws = await a.createWorkspace({ name: 'team' });
      await a.addMember(ws.id, 'Owner@Example.org', 'owner');
      await b.addMember(ws.id, 'dev@example.org', 'member');
      await a.addMember(ws.id, 'dev@example.org', 'admin');
      t.same((await b.listMembers(ws.id)).map((m) => [m.email, m.role]).sort(), [
        ['dev@example.org', 'admin'],
        ['owner@example.org', 'owner'],
      ]);
      await t.rejects(a.addMember(ws.id, 'x@example.org', 'boss' as 'owner'), { code: 'invalid_input' });
      await b.removeMember(ws.id, 'DEV@example.org');
      t.equal((await a.listMembers(ws.id)).length, 1);
      await t.rejects(a.removeMember(ws.id, 'dev@example.org'), { code: 'not_found' });
    });
  });
}

t.test('an unreachable PostgreSQL: opening works, calls fail fast, ping says so', async (t) => {
  const store = openPgAccountsStore({ url: 'postgres://postgres@127.0.0.1:1/test', timeoutMs: 500 });
  t.teardown(() => store.close());
  const started = Date.now();
  await t.rejects(store.ping());
  t.ok(Date.now() - started < 3_000, 'within the timeout');
});

t.test(
  'a connection lost while a call waits for its answer fails that call, not the process, and the store recovers',
  async (t) => {
    requireSharedStores('database');
    // A relay to PostgreSQL that can hold back the answers and then cut every connection.
    const target = new URL(TEST_DATABASE_URL);
    const links = new Set<net.Socket>();
    let holding = false;
    let sent = () => {};
    const relay = net.createServer((inbound) => {
      const outbound = net.connect(Number(target.port || 5432), target.hostname);
      links.add(inbound).add(outbound);
      inbound.on('data', (chunk) => {
        outbound.write(chunk);
        if (holding) sent();
      });
      outbound.on('data', (chunk) => holding || inbound.write(chunk));
      for (const socket of [inbound, outbound])
        socket.on('error', () => {}).on('close', () => links.delete(socket));
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise((resolve) => relay.close(resolve)));
    const url = new URL(TEST_DATABASE_URL);
    url.hostname = '127.0.0.1';
    url.port = String((relay.address() as net.AddressInfo).port);
    const { schema } = uniqueNamespace(t, 'pgcut');
    const store = openPgAccountsStore({ url: url.toString(), schema, timeoutMs: 1_000 });
    t.teardown(() => store.close());
    const ws = await store.createWorkspace({ name: 'cut' });

    holding = true;
    const querySent = new Promise<void>((resolve) => (sent = resolve));
    const pending = store.getUsage('workspace', ws.id, '2026-11');
    await querySent;
    for (const socket of links) socket.destroy();
    await t.rejects(pending, 'the call in flight fails');
    holding = false;
    t.equal(await store.getUsage('workspace', ws.id, '2026-11'), 0, 'the next call gets a new connection');
  },
);
