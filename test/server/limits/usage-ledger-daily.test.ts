/**
 * The daily counts per key behind the console's chart and `last used`: the meter's kept units are
 * added up in memory per UTC day and key and written with the usage flush to the real accounts
 * store; a write that fails keeps them for the next flush (nothing lost, nothing counted twice).
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { openAccountsStore } from '../../../accounts/index.js';
import { UsageLedger } from '../../../server/limits/usage-ledger.js';

t.test('daily counts per key are written with the flush, and kept when a write fails', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ledger-daily-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const store = openAccountsStore(path.join(dir, 'accounts.sqlite'));
  t.teardown(() => store.close());
  const ws = await store.createWorkspace({ name: 'acme' });
  const project = await store.createProject({ workspaceId: ws.id, name: 'web' });
  const { record } = await store.createKey({ projectId: project.id, label: 'ci' });
  const principal = {
    keyId: record.id,
    projectId: project.id,
    workspaceId: ws.id,
    plan: 'free',
    projectMonthlyCap: null,
  };

  let failNext = false;
  const ledger = new UsageLedger({
    store: {
      addUsage: (deltas) => store.addUsage(deltas),
      addDailyUsage: (rows, at) => {
        if (failNext) {
          failNext = false;
          return Promise.reject(new Error('the accounts store is down'));
        }
        return store.addDailyUsage(rows, at);
      },
    },
    flushMs: 60_000,
  });
  t.teardown(() => ledger.close());

  ledger.addDay(principal, '2026-11-24');
  ledger.addDay(principal, '2026-11-25');
  ledger.addDay(principal, '2026-11-25');
  failNext = true;
  await t.rejects(ledger.flush(), /down/);
  t.same(await store.listDailyUsage(ws.id, '2026-11-01', '2026-11-30'), [], 'nothing written yet');
  ledger.addDay(principal, '2026-11-25');
  const before = Date.now();
  await ledger.flush();
  t.same(
    (await store.listDailyUsage(ws.id, '2026-11-01', '2026-11-30')).map((r) => [r.day, r.count]),
    [
      ['2026-11-24', 1],
      ['2026-11-25', 3],
    ],
    'the failed batch and the later unit, once each',
  );
  const used = (await store.getKey(record.id))!.lastUsedAt!.getTime();
  t.ok(used >= before - 1 && used <= Date.now(), 'last used is the time of the flush');
  ledger.addDay(principal);
  await ledger.flush();
  const today = new Date().toISOString().slice(0, 10);
  t.equal(
    (await store.listDailyUsage(ws.id, today, today))[0]?.count ?? 0,
    today === '2026-11-25' ? 4 : 1,
    'today by default',
  );
});
