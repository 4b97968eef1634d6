/**
 * The one path of a REST call (server/http/server.ts → router → call envelope → Exchange): every
 * request, answered or refused, against the contract (/v1/openapi.json, test/helpers/contract.ts),
 * with the exact status, error code and the unit it counted; the same on the in-process meter and
 * on the Redis one (which makes the envelope wait); pages cut to the plan's size; one log line per
 * request; a meter that cannot grant at once still looks each request up once.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  TEST_REDIS_URL,
  requireSharedStores,
  startKeyedMeteredServer,
  uniqueNamespace,
  type MeteredServer,
} from '../helpers/limits.js';
import { startTestServer } from '../helpers/test-server.js';
import { sameClockText } from '../helpers/same-clock.js';
import { createTestKey } from '../helpers/accounts.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { apiEnvelope, buildApp } from '../../server/app.js';
import { openAccountsStore } from '../../accounts/sqlite-store.js';
import { cachedKeyVerifier } from '../../server/limits/key-verifier.js';
import { CountingMeter, type Meter } from '../../server/limits/meter.js';
import { MemoryCounters } from '../../server/limits/memory-counters.js';
import { PlanBook, freePlan } from '../../server/limits/plans.js';
import { openRelease } from '../../shared/queries/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

interface Case {
  path: string;
  status: number;
  /** The error code of a refusal. */
  error?: string;
  /** True: the answer counts one unit. */
  counted: boolean;
}

const ok = (p: string): Case => ({ path: p, status: 200, counted: true });
const refused = (p: string, error: string): Case => ({ path: p, status: 422, error, counted: false });

/** In request order; the repeats hit the lookup_ip answer cache. */
const REQUESTS: Case[] = [
  ok('/v1/ip/1.1.1.1'),
  ok('/v1/ip/1.1.1.1'),
  ok('/v1/ip/23.228.249.10'),
  ok('/v1/ip/2600:9000:3001:a400:9:6f0a:3c00:93a1'),
  ok('/v1/ip/::ffff:1.1.1.1'),
  { path: '/v1/ip/10.0.0.1', status: 200, counted: false }, // a bogon: answered, not counted
  ok('/v1/ip/23.228.249.10/domains'),
  ok('/v1/domain/example.com/history'),
  ok('/v1/domain/not-covered.example/history'),
  ok('/v1/domain/example.com/hosting'),
  ok('/v1/asn/13335'),
  ok('/v1/asn/AS13335'),
  ok('/v1/asn/64512'),
  refused('/v1/ip/1.2.3.0%2F24', 'invalid_ip'),
  refused('/v1/ip/999.1.1.1', 'invalid_ip'),
  refused('/v1/ip/10.0.0.1/domains', 'non_public_ip'),
  refused('/v1/domain/localhost/history', 'invalid_domain'),
  refused('/v1/asn/abc', 'invalid_asn'),
  ok('/v1/asn/13335?limit=1'),
  ok('/v1/domain/example.com/history?limit=2'),
  { path: '/v1/ip/1.1.1.1/', status: 308, counted: false },
  { path: '/v1/openapi.json', status: 200, counted: false },
  ok('/v1/ip/1.1.1.1'),
];

/** The headers but the request id, the date and the seconds to the next minute (they move on). */
function comparable(headers: Record<string, string>): Record<string, string> {
  const { 'x-request-id': _id, date: _date, 'x-ratelimit-reset': reset, ...rest } = headers;
  return reset === undefined
    ? rest
    : { ...rest, 'x-ratelimit-reset': Number(reset) >= 1 && Number(reset) <= 60 ? 'in 1..60' : reset };
}

/** Sends REQUESTS; each answer has its status, its code, and X-Quota-Used counts exactly the answered units. */
async function exactAnswers(t: Test, s: { server: MeteredServer; key: string }): Promise<void> {
  let used = 0;
  for (const c of REQUESTS) {
    const r = await s.server.get(c.path, { key: s.key });
    t.equal(r.status, c.status, `${c.path}: ${c.status}`);
    t.match(r.headers['x-request-id'], UUID, `${c.path}: a request id`);
    if (c.error !== undefined) t.equal((JSON.parse(r.text) as { error: string }).error, c.error, c.error);
    if (c.counted) used += 1;
    const metered = c.path.startsWith('/v1/') && c.status !== 308 && c.path !== '/v1/openapi.json';
    t.equal(r.headers['x-quota-used'], metered ? String(used) : undefined, `${c.path}: X-Quota-Used`);
  }
  const mapped = JSON.parse((await s.server.get('/v1/ip/::ffff:1.1.1.1', { key: s.key })).text) as {
    ip: string;
  };
  t.equal(mapped.ip, '1.1.1.1', 'an IPv4-mapped address is looked up as IPv4');

  // Refused keys and foreign browser origins: refused before anything is counted.
  const refusals: Array<[string, { key?: string | null; headers?: Record<string, string> }, number, object]> =
    [
      ['unknown key', { key: 'sk_notakey' }, 401, { error: 'unauthorized' }],
      ['no key', { key: null }, 401, { error: 'unauthorized' }],
      [
        'foreign origin',
        { key: s.key, headers: { origin: 'https://elsewhere.example' } },
        403,
        { detail: 'Forbidden' },
      ],
    ];
  for (const [label, options, status, body] of refusals) {
    const r = await s.server.get('/v1/ip/1.1.1.1', options);
    t.equal(r.status, status, `${label}: ${status}`);
    t.match(JSON.parse(r.text), body, `${label}: body`);
  }
  const last = await s.server.get('/v1/ip/1.1.1.1', { key: s.key });
  t.equal(last.headers['x-quota-used'], String(used + 2), 'the refusals were not counted');
}

t.test('every request of the one path: its status, its code, its unit', async (t) => {
  await exactAnswers(t, await startKeyedMeteredServer(t));
});

t.test('the Redis meter (waiting) answers exactly as the in-process meter', async (t) => {
  requireSharedStores('redis');
  const { prefix } = uniqueNamespace(t, 'one_path_redis');
  const redis = await startKeyedMeteredServer(t, { REDIS_URL: TEST_REDIS_URL, REDIS_KEY_PREFIX: prefix });
  const memory = await startKeyedMeteredServer(t);
  for (const c of REQUESTS) {
    const x = await redis.server.get(c.path, { key: redis.key });
    const y = await memory.server.get(c.path, { key: memory.key });
    t.equal(x.status, c.status, `${c.path}: status ${c.status}`);
    t.equal(x.status, y.status, `${c.path}: the same status`);
    t.equal(sameClockText(x.text, y.text), y.text, `${c.path}: body`);
    t.same(comparable(x.headers), comparable(y.headers), `${c.path}: headers`);
  }
});

t.test('a plan whose page size is below the default: pages of the plan', async (t) => {
  // Free keys get pages of at most 2 items here: the first page (100 by default) is cut.
  const s = await startKeyedMeteredServer(t, { FREE_MAX_PAGE_SIZE: 2 });
  await exactAnswers(t, s);
  for (const p of ['/v1/domain/example.com/history', '/v1/domain/example.com/history?limit=50']) {
    const page = JSON.parse((await s.server.get(p, { key: s.key })).text) as {
      intervals: unknown[];
      next_cursor: string | null;
    };
    t.equal(page.intervals.length, 2, `${p}: two items a page`);
    t.type(page.next_cursor, 'string', `${p}: and a cursor to the next`);
  }
  const asn = JSON.parse((await s.server.get('/v1/asn/AS13335', { key: s.key })).text) as {
    ranges: unknown[];
  };
  t.equal(asn.ranges.length, 2, 'lookup_asn: two ranges a page');
});

t.test('with a logger at info: one request line per request, in order', async (t) => {
  const logs: string[] = [];
  const s = await startKeyedMeteredServer(t, { LOG_LEVEL: 'info' }, logs);
  await exactAnswers(t, s);
  const lines = logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .filter((l) => l.msg === 'request completed');
  const sent = REQUESTS.length + 1 + 3 + 1;
  t.equal(lines.length, sent, 'one line a request');
  t.same(
    lines.slice(0, REQUESTS.length).map((l) => [l.method, l.url, l.statusCode]),
    REQUESTS.map((c) => ['GET', c.path, c.status]),
    'method, URL and status of each, in order',
  );
  for (const line of lines) {
    t.match(line.reqId, UUID);
    t.type(line.responseTime, 'number');
  }
});

t.test('a request id sent by the client is kept and logged', async (t) => {
  const server = await startTestServer(t);
  const r = await server.get('/v1/ip/1.1.1.1', { headers: { 'x-request-id': 'client-id-42' } });
  t.equal(r.status, 200);
  t.equal(r.headers['x-request-id'], 'client-id-42');
  const line = server.logs
    .map((l) => JSON.parse(l) as Record<string, unknown>)
    .find((l) => l.reqId === 'client-id-42');
  t.match(line, {
    level: 30,
    reqId: 'client-id-42',
    method: 'GET',
    url: '/v1/ip/1.1.1.1',
    statusCode: 200,
    msg: 'request completed',
  });
  t.type(line?.responseTime, 'number');
});

/**
 * A server over the demo release whose meter is a CountingMeter over in-process counters with the
 * Free plan's `perMinute` and `monthly` limits, asynchronous only (as the Redis counters are) or
 * granting at once too; `ask` answers a request's status, the lookups it made (each a look at the
 * current release) and its X-Quota-Remaining.
 */
async function meteredServer(t: Test, options: { async: boolean; perMinute: number; monthly: number }) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'one-path-meter-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const demo = copyDemoRelease(path.join(work, 'releases'));
  const release = openRelease(path.join(demo.releasesDir, demo.file));
  t.teardown(() => release.close());
  const store = openAccountsStore(path.join(work, 'accounts.sqlite'));
  t.teardown(() => store.close());
  const { key } = await createTestKey(store, {});
  // Every look at the current release: one per lookup.
  let looks = 0;
  const releases = {
    current() {
      looks += 1;
      return release;
    },
    health: () => ({ status: 'ok' as const, id: release.id, built_at: release.builtAt, age_seconds: 0 }),
  };
  const counting = new CountingMeter({
    plans: new PlanBook(
      freePlan({
        FREE_REQUESTS_PER_MINUTE: options.perMinute,
        FREE_MONTHLY_QUOTA: options.monthly,
        FREE_MAX_PAGE_SIZE: 100,
      }),
      store,
      5_000,
    ),
    counters: new MemoryCounters({ ledger: null, load: async () => 0 }),
  });
  // Only the asynchronous reserve, as the Redis counters have: the envelope must wait for the unit.
  const meter: Meter = options.async ? { reserve: (principal) => counting.reserve(principal) } : counting;
  const accounts = cachedKeyVerifier(store, { ttlMs: 60_000 });
  const app = buildApp({ envelope: apiEnvelope({ releases, accounts, meter }), releases, accounts });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(() => app.close());
  const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return async (p: string) => {
    const before = looks;
    const r = await fetch(base + p, { headers: { authorization: `Bearer ${key}` } });
    await r.text();
    return { status: r.status, looks: looks - before, remaining: r.headers.get('x-quota-remaining') };
  };
}

t.test('a meter that cannot grant at once (Redis): each request is looked up once', async (t) => {
  const ask = await meteredServer(t, { async: true, perMinute: 1000, monthly: 5000 });
  t.same(await ask('/v1/ip/1.1.1.1'), { status: 200, looks: 1, remaining: '4999' });
  t.same(await ask('/v1/ip/23.228.249.10'), { status: 200, looks: 1, remaining: '4998' });
  t.same(await ask('/v1/asn/13335'), { status: 200, looks: 1, remaining: '4997' });
  t.same(await ask('/v1/domain/example.com/history'), { status: 200, looks: 1, remaining: '4996' });
});

t.test('a call the meter or its parameters refuse is never looked up', async (t) => {
  for (const async of [false, true]) {
    // Two per minute: the third request is refused 429 before any lookup.
    const ask = await meteredServer(t, { async, perMinute: 2, monthly: 5000 });
    const at = async ? 'asynchronous meter' : 'meter granting at once';
    t.same(await ask('/v1/ip/1.1.1.1'), { status: 200, looks: 1, remaining: '4999' }, at);
    // A bad query parameter: refused 422 with the unit given back, and nothing looked up.
    t.same(await ask('/v1/ip/1.1.1.1/domains?limit=abc'), { status: 422, looks: 0, remaining: '4999' }, at);
    t.same(await ask('/v1/ip/23.228.249.10'), { status: 200, looks: 1, remaining: '4998' }, at);
    t.same(await ask('/v1/ip/8.8.8.8'), { status: 429, looks: 0, remaining: '4998' }, at);
  }
});
