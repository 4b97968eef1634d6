/**
 * Plans, rate limits, quotas and caps on the embedded stores (SQLite accounts, in-process
 * counters), through the real app over HTTP: the headers, each refusal, what is and is not
 * counted, page-size lowering, counts surviving a restart, the refused-key throttle.
 */
import t, { type Test } from 'tap';
import path from 'node:path';
import { openAccountsStore, usageMonth } from '../../../accounts/index.js';
import { createTestKey } from '../../helpers/accounts.js';
import { startMeteredServer } from '../../helpers/limits.js';

const month = usageMonth();

async function fixture(t: Test, overrides: Record<string, unknown> = {}, keyOptions = {}) {
  const file = path.join(t.testdir({}), 'accounts.sqlite');
  const store = openAccountsStore(file);
  const key = await createTestKey(store, keyOptions);
  await store.close();
  const server = await startMeteredServer(t, { ACCOUNTS_DB: file, USAGE_FLUSH_MS: 50, ...overrides });
  return { file, key, server };
}

t.test('every metered response carries the limit headers; ping and lookups count one each', async (t) => {
  const { key, server } = await fixture(t, { FREE_REQUESTS_PER_MINUTE: 50, FREE_MONTHLY_QUOTA: 1000 });
  const r1 = await server.get('/v1/ping', { key: key.key });
  t.equal(r1.status, 200);
  t.equal(r1.headers['x-ratelimit-limit'], '50');
  t.equal(r1.headers['x-ratelimit-remaining'], '49');
  t.ok(Number(r1.headers['x-ratelimit-reset']) >= 1 && Number(r1.headers['x-ratelimit-reset']) <= 60);
  t.equal(r1.headers['x-quota-limit'], '1000');
  t.equal(r1.headers['x-quota-used'], '1');
  t.equal(r1.headers['x-quota-remaining'], '999');
  t.notOk('x-project-quota-limit' in r1.headers, 'no project headers without a cap');
  const r2 = await server.get('/v1/ip/1.1.1.1', { key: key.key });
  t.equal(r2.status, 200);
  t.equal(r2.headers['x-quota-used'], '2');
  const health = await server.get('/health');
  t.notOk('x-quota-used' in health.headers, '/health is not metered');
});

t.test('refused responses are not counted: bogon, 422, 400, 401', async (t) => {
  const { key, server } = await fixture(t);
  const bogon = await server.get('/v1/ip/10.0.0.1', { key: key.key });
  t.equal(bogon.status, 200);
  t.equal(bogon.headers['x-quota-used'], '0', 'a bogon lookup_ip is not counted');
  const invalid = await server.get('/v1/ip/1.2.3.0%2F24', { key: key.key });
  t.equal(invalid.status, 422);
  t.equal(invalid.headers['x-quota-used'], '0', '422 is not counted and still has the headers');
  const limit = await server.get('/v1/asn/13335?limit=0', { key: key.key });
  t.equal(limit.status, 422);
  const cursor = await server.get('/v1/asn/13335?cursor=garbage', { key: key.key });
  t.equal(cursor.status, 400);
  const nonPublic = await server.get('/v1/ip/10.0.0.1/domains', { key: key.key });
  t.equal(nonPublic.status, 422);
  const unauthorized = await server.get('/v1/ping', { key: 'sk_notakey' });
  t.equal(unauthorized.status, 401);
  const ping = await server.get('/v1/ping', { key: key.key });
  t.equal(ping.headers['x-quota-used'], '1', 'only the ping counted');
  t.equal(ping.headers['x-ratelimit-remaining'], String(60 - 1), 'refused calls gave their minute unit back');
});

t.test('per-minute limit: 429 rate_limited with Retry-After once the workspace used it', async (t) => {
  const { key, file, server } = await fixture(t, { FREE_REQUESTS_PER_MINUTE: 5 });
  // A second key of the same workspace shares the limit.
  const other = await createTestKey(file, { project: 'other' });
  const statuses: number[] = [];
  for (let i = 0; i < 8; i++)
    statuses.push((await server.get('/v1/ping', { key: i % 2 ? key.key : other.key })).status);
  t.same(statuses, [200, 200, 200, 200, 200, 429, 429, 429]);
  const refused = await server.get('/v1/ping', { key: key.key });
  t.equal(refused.status, 429);
  t.match(JSON.parse(refused.text), { error: 'rate_limited' });
  t.ok(Number(refused.headers['retry-after']) >= 1 && Number(refused.headers['retry-after']) <= 60);
  t.equal(refused.headers['x-ratelimit-remaining'], '0');
  t.equal(refused.headers['x-quota-used'], '5', '429s are not counted');
});

t.test(
  'monthly quota (402 quota_exceeded) and project cap (402 project_cap_exceeded), the tighter refuses',
  async (t) => {
    const { key, file, server } = await fixture(t, { FREE_MONTHLY_QUOTA: 4 }, { monthlyCap: 2 });
    const capped = [
      await server.get('/v1/ping', { key: key.key }),
      await server.get('/v1/ping', { key: key.key }),
    ];
    t.same(
      capped.map((r) => r.status),
      [200, 200],
    );
    t.equal(capped[1]!.headers['x-project-quota-limit'], '2');
    t.equal(capped[1]!.headers['x-project-quota-used'], '2');
    t.equal(capped[1]!.headers['x-project-quota-remaining'], '0');
    const overCap = await server.get('/v1/ping', { key: key.key });
    t.equal(overCap.status, 402);
    t.match(JSON.parse(overCap.text), { error: 'project_cap_exceeded' });
    // Another project of the workspace has no cap: the workspace quota (4) refuses next.
    const other = await createTestKey(file, { project: 'uncapped' });
    t.equal((await server.get('/v1/ping', { key: other.key })).status, 200);
    t.equal((await server.get('/v1/ping', { key: other.key })).status, 200);
    const overQuota = await server.get('/v1/ping', { key: other.key });
    t.equal(overQuota.status, 402);
    t.match(JSON.parse(overQuota.text), { error: 'quota_exceeded' });
    t.equal(overQuota.headers['x-quota-used'], '4');
    t.equal(overQuota.headers['x-quota-remaining'], '0');
  },
);

t.test('with one unit of quota left, 100 parallel requests give exactly one 200', async (t) => {
  const { key, server } = await fixture(t, { FREE_MONTHLY_QUOTA: 1, FREE_REQUESTS_PER_MINUTE: 1000 });
  const answers = await Promise.all(
    Array.from({ length: 100 }, () => server.get('/v1/ip/1.1.1.1', { key: key.key })),
  );
  const counts = new Map<number, number>();
  for (const a of answers) counts.set(a.status, (counts.get(a.status) ?? 0) + 1);
  t.same(Object.fromEntries(counts), { 200: 1, 402: 99 });
});

t.test(
  'Free keys asking for more than the page ceiling get the ceiling and next_cursor continues',
  async (t) => {
    const { key, file, server } = await fixture(t, { FREE_MAX_PAGE_SIZE: 2 });
    const page = JSON.parse((await server.get('/v1/asn/13335?limit=5', { key: key.key })).text) as {
      ranges: unknown[];
      next_cursor: string | null;
    };
    t.equal(page.ranges.length, 2, 'lowered to FREE_MAX_PAGE_SIZE');
    t.type(page.next_cursor, 'string');
    const next = await server.get(`/v1/asn/13335?limit=5&cursor=${page.next_cursor}`, { key: key.key });
    t.equal(next.status, 200, 'the cursor continues');
    // A table plan with a higher ceiling gets what it asks for.
    const store = openAccountsStore(file);
    await store.upsertPlan({ name: 'pro', requestsPerMinute: 100, monthlyQuota: 1000, maxPageSize: 1000 });
    const pro = await store.createWorkspace({ name: 'pro-ws', plan: 'pro' });
    await store.close();
    const proKey = await createTestKey(file, { workspace: pro.name });
    const proPage = JSON.parse((await server.get('/v1/asn/13335?limit=5', { key: proKey.key })).text) as {
      ranges: unknown[];
    };
    t.equal(proPage.ranges.length, 5);
  },
);

t.test('a lapsed plan falls back to the Free limits', async (t) => {
  const { file, server } = await fixture(t, { FREE_REQUESTS_PER_MINUTE: 7 });
  const store = openAccountsStore(file);
  await store.upsertPlan({ name: 'pro', requestsPerMinute: 500, monthlyQuota: 100000, maxPageSize: 1000 });
  const lapsed = await store.createWorkspace({
    name: 'lapsed',
    plan: 'pro',
    planExpiresAt: new Date(Date.now() - 1000),
  });
  const active = await store.createWorkspace({
    name: 'active',
    plan: 'pro',
    planExpiresAt: new Date(Date.now() + 86_400_000),
  });
  await store.close();
  const lapsedKey = await createTestKey(file, { workspace: lapsed.name });
  const activeKey = await createTestKey(file, { workspace: active.name });
  t.equal((await server.get('/v1/ping', { key: lapsedKey.key })).headers['x-ratelimit-limit'], '7');
  t.equal((await server.get('/v1/ping', { key: activeKey.key })).headers['x-ratelimit-limit'], '500');
});

t.test(
  'counts survive a restart: served requests are in the accounts file after a graceful stop',
  async (t) => {
    const { key, file, server } = await fixture(t, { USAGE_FLUSH_MS: 10_000 }, { monthlyCap: 100 });
    for (let i = 0; i < 7; i++) t.equal((await server.get('/v1/ping', { key: key.key })).status, 200);
    await server.get('/v1/ip/10.0.0.1', { key: key.key }); // bogon: not counted
    await server.close();
    const store = openAccountsStore(file);
    t.equal(await store.getUsage('workspace', key.workspaceId, month), 7);
    t.equal(await store.getUsage('project', key.projectId, month), 7);
    await store.close();
    const again = await startMeteredServer(t, { ACCOUNTS_DB: file });
    const r = await again.get('/v1/ping', { key: key.key });
    t.equal(r.headers['x-quota-used'], '8', 'the restarted server continues from the durable count');
    t.equal(r.headers['x-project-quota-used'], '8');
  },
);

t.test('more than 100 refused keys from one address in a minute: 429 with Retry-After', async (t) => {
  const { key, server } = await fixture(t);
  const statuses: number[] = [];
  for (let i = 0; i < 100; i++) {
    statuses.push((await server.get('/v1/ping', i % 2 ? { key: null } : { key: 'sk_wrong' })).status);
  }
  t.ok(
    statuses.every((s) => s === 401),
    'the first 100 are 401',
  );
  const throttled = await server.get('/v1/ping', { key: 'sk_wrong' });
  t.equal(throttled.status, 429);
  t.match(JSON.parse(throttled.text), { error: 'rate_limited' });
  t.ok(Number(throttled.headers['retry-after']) >= 1);
  t.equal(
    (await server.get('/v1/ping?api_key=x', { key: key.key })).status,
    429,
    'a key in the URL is a refused key',
  );
  t.equal((await server.get('/v1/ping', { key: key.key })).status, 200, 'a valid key is still served');
});

t.test('the client address is the socket unless TRUST_PROXY names the proxy', async (t) => {
  const trusting = await fixture(t, { TRUST_PROXY: '127.0.0.1' });
  for (let i = 0; i < 101; i++) {
    await trusting.server.get('/v1/ping', { key: null, headers: { 'x-forwarded-for': '203.0.113.9' } });
  }
  const other = await trusting.server.get('/v1/ping', {
    key: null,
    headers: { 'x-forwarded-for': '203.0.113.10' },
  });
  t.equal(other.status, 401, 'another forwarded client is counted on its own');
  const same = await trusting.server.get('/v1/ping', {
    key: null,
    headers: { 'x-forwarded-for': '203.0.113.9' },
  });
  t.equal(same.status, 429);

  const untrusting = await fixture(t);
  for (let i = 0; i < 101; i++) {
    await untrusting.server.get('/v1/ping', { key: null, headers: { 'x-forwarded-for': `203.0.113.${i}` } });
  }
  const spoofed = await untrusting.server.get('/v1/ping', {
    key: null,
    headers: { 'x-forwarded-for': '198.51.100.1' },
  });
  t.equal(spoofed.status, 429, 'X-Forwarded-For from an untrusted socket does not change the address');
});
