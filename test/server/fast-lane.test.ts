/**
 * The fast lane (server/fast-lane.ts) answers plain lookups in front of Fastify. Two metered
 * servers with their own accounts stores, one with FAST_LANE=on and one with FAST_LANE=off, get the
 * same requests in the same order: every response must be the same (status, body, every header but
 * the request id and the date), and the lane must have answered exactly the plain successful ones.
 */
import t, { type Test } from 'tap';
import fs from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
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
import { modernToolCall } from '../helpers/mcp-calls.js';
import { createFastLane, matchFastRoute } from '../../server/fast-lane.js';
import { createEnvelope } from '../../server/call/envelope.js';
import { openAccountsStore } from '../../accounts/sqlite-store.js';
import { cachedKeyVerifier } from '../../server/limits/key-verifier.js';
import { CountingMeter } from '../../server/limits/meter.js';
import { MemoryCounters } from '../../server/limits/memory-counters.js';
import { PlanBook, freePlan } from '../../server/limits/plans.js';
import type { Meter } from '../../server/metering.js';
import { openRelease } from '../../shared/queries/index.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** [path, taken by the lane] in request order; the repeats hit the lookup_ip answer cache. */
const REQUESTS: Array<[string, boolean]> = [
  ['/v1/ip/1.1.1.1', true],
  ['/v1/ip/1.1.1.1', true],
  ['/v1/ip/23.228.249.10', true],
  ['/v1/ip/2600:9000:3001:a400:9:6f0a:3c00:93a1', true],
  ['/v1/ip/::ffff:1.1.1.1', true],
  ['/v1/ip/10.0.0.1', true], // a bogon: answered, not counted
  ['/v1/ip/23.228.249.10/domains', true],
  ['/v1/domain/example.com/history', true],
  ['/v1/domain/not-covered.example/history', true],
  ['/v1/domain/example.com/hosting', true],
  ['/v1/asn/13335', true],
  ['/v1/asn/AS13335', true],
  ['/v1/asn/64512', true],
  ['/v1/ip/1.1.1.1', true],
  // Everything below goes to Fastify: errors, query strings, encoded paths, other routes.
  ['/v1/ip/1.2.3.0%2F24', false],
  ['/v1/ip/999.1.1.1', false],
  ['/v1/ip/10.0.0.1/domains', false],
  ['/v1/domain/localhost/history', false],
  ['/v1/asn/abc', false],
  ['/v1/asn/13335?limit=1', false],
  ['/v1/domain/example.com/history?limit=2', false],
  ['/v1/ip/1.1.1.1/', false],
  ['/v1/openapi.json', false],
  ['/v1/ip/1.1.1.1', true],
];

const metered = (t: Test, fastLane: 'on' | 'off') => startKeyedMeteredServer(t, { FAST_LANE: fastLane });

/** The headers but the request id, the date and the seconds to the next minute (they move on). */
function comparable(headers: Record<string, string>): Record<string, string> {
  const { 'x-request-id': _id, date: _date, 'x-ratelimit-reset': reset, ...rest } = headers;
  return reset === undefined
    ? rest
    : { ...rest, 'x-ratelimit-reset': Number(reset) >= 1 && Number(reset) <= 60 ? 'in 1..60' : reset };
}

t.test('the lane and Fastify give the same responses, and the lane takes only plain lookups', async (t) => {
  const on = await metered(t, 'on');
  const off = await metered(t, 'off');
  let taken = 0;
  const ask = (s: { server: MeteredServer; key: string }, p: string, key?: string) =>
    s.server.get(p, { key: key ?? s.key });
  for (const [p, lane] of REQUESTS) {
    const a = await ask(on, p);
    const b = await ask(off, p);
    t.equal(a.status, b.status, `${p}: status`);
    t.equal(sameClockText(a.text, b.text), b.text, `${p}: body`);
    t.same(comparable(a.headers), comparable(b.headers), `${p}: headers`);
    t.match(a.headers['x-request-id'], UUID, `${p}: a request id`);
    if (lane) taken += 1;
    t.equal(
      on.server.app.fastLaneAnswered(),
      taken,
      `${p}: ${lane ? 'answered by the lane' : 'left to Fastify'}`,
    );
  }
  t.equal(off.server.app.fastLaneAnswered(), 0, 'FAST_LANE=off: the lane answers nothing');

  // Refused keys and browser requests are Fastify's to answer, with the same bodies.
  const refusals: Array<
    [string, (key: string) => { key?: string | null; headers?: Record<string, string> }]
  > = [
    ['unknown key', () => ({ key: 'sk_notakey' })],
    ['no key', () => ({ key: null })],
    ['foreign origin', (key) => ({ key, headers: { origin: 'https://elsewhere.example' } })],
  ];
  for (const [label, options] of refusals) {
    const a = await on.server.get('/v1/ip/1.1.1.1', options(on.key));
    const b = await off.server.get('/v1/ip/1.1.1.1', options(off.key));
    t.equal(a.status, b.status, `${label}: status ${b.status}`);
    t.equal(a.text, b.text, `${label}: body`);
  }
  t.equal(on.server.app.fastLaneAnswered(), taken, 'none of those took the lane');

  // The same units were counted: the next answer shows the same usage on both.
  const a = await ask(on, '/v1/ip/1.1.1.1');
  const b = await ask(off, '/v1/ip/1.1.1.1');
  t.equal(a.headers['x-quota-used'], b.headers['x-quota-used']);
  // 14 lane answers counted (not the bogon), the two 200s with a query string, and this one.
  t.equal(a.headers['x-quota-used'], '17', 'the bogon and the refusals were not counted');
});

/** Sends REQUESTS to both servers in order; every response must be the same. */
async function sameResponses(
  t: Test,
  a: { server: MeteredServer; key: string },
  b: { server: MeteredServer; key: string },
  requests: ReadonlyArray<[string, boolean]> = REQUESTS,
): Promise<void> {
  for (const [p] of requests) {
    const x = await a.server.get(p, { key: a.key });
    const y = await b.server.get(p, { key: b.key });
    t.equal(x.status, y.status, `${p}: status`);
    t.equal(sameClockText(x.text, y.text), y.text, `${p}: body`);
    t.same(comparable(x.headers), comparable(y.headers), `${p}: headers`);
  }
}

t.test('a plan whose page size is below the default: the lane gives the pages Fastify gives', async (t) => {
  // Free keys get pages of at most 2 items here: the lane's first page (100 by default) is cut.
  const on = await startKeyedMeteredServer(t, { FAST_LANE: 'on', FREE_MAX_PAGE_SIZE: 2 });
  const off = await startKeyedMeteredServer(t, { FAST_LANE: 'off', FREE_MAX_PAGE_SIZE: 2 });
  await sameResponses(t, on, off);
  const page = JSON.parse((await on.server.get('/v1/domain/example.com/history', { key: on.key })).text) as {
    intervals: unknown[];
    next_cursor: string | null;
  };
  t.equal(page.intervals.length, 2, 'two items a page');
  t.type(page.next_cursor, 'string', 'and a cursor to the next');
  t.ok(on.server.app.fastLaneAnswered() > 10, 'the lane answered the plain lookups');
});

t.test('the Redis meter (waiting) and the in-process meter give the same responses', async (t) => {
  requireSharedStores('redis');
  const { prefix } = uniqueNamespace(t, 'lane_redis');
  const redis = await startKeyedMeteredServer(t, {
    FAST_LANE: 'on',
    REDIS_URL: TEST_REDIS_URL,
    REDIS_KEY_PREFIX: prefix,
  });
  const memory = await startKeyedMeteredServer(t, { FAST_LANE: 'on' });
  // Until its Redis connection is up a server counts in-process (and its minute window starts over
  // once Redis answers): begin when /health sees the cache.
  for (let i = 0; i < 100; i++) {
    const health = JSON.parse((await redis.server.get('/health', { key: null })).text) as {
      checks: { cache: string };
    };
    if (health.checks.cache === 'ok') break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await sameResponses(t, redis, memory);
  t.equal(
    redis.server.app.fastLaneAnswered(),
    memory.server.app.fastLaneAnswered(),
    'the lane took the same',
  );
});

t.test('with a logger at info, the lane and Fastify write the same request lines', async (t) => {
  const logsOn: string[] = [];
  const logsOff: string[] = [];
  const on = await startKeyedMeteredServer(t, { FAST_LANE: 'on', LOG_LEVEL: 'info' }, logsOn);
  const off = await startKeyedMeteredServer(t, { FAST_LANE: 'off', LOG_LEVEL: 'info' }, logsOff);
  await sameResponses(t, on, off);
  // The request lines, without what differs by nature: time, request id, duration, process.
  const lines = (logs: string[]) =>
    logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.msg === 'request completed')
      .map(({ time: _t, reqId, responseTime, pid: _p, hostname: _h, ...rest }) => ({
        ...rest,
        reqId: typeof reqId,
        responseTime: typeof responseTime,
      }));
  t.equal(lines(logsOn).length, REQUESTS.length, 'one line a request');
  t.same(lines(logsOn), lines(logsOff), 'the same lines, in the same order');
  t.ok(on.server.app.fastLaneAnswered() > 10, 'the lane wrote most of them');
});

t.test('a request id sent by the client is kept, and the lane logs the request line', async (t) => {
  const server = await startTestServer(t);
  const r = await server.get('/v1/ip/1.1.1.1', { headers: { 'x-request-id': 'client-id-42' } });
  t.equal(r.status, 200);
  t.equal(r.headers['x-request-id'], 'client-id-42');
  t.equal(server.app.fastLaneAnswered(), 1, 'answered by the lane');
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

t.test('matchFastRoute: the plain lookup paths and nothing else', async (t) => {
  const param = (url: string) => matchFastRoute(url)?.param ?? null;
  t.equal(param('/v1/ip/1.1.1.1'), '1.1.1.1');
  t.equal(param('/v1/ip/2001:db8::1/domains'), '2001:db8::1');
  t.equal(param('/v1/domain/example.com/history'), 'example.com');
  t.equal(param('/v1/domain/example.com/hosting'), 'example.com');
  t.equal(param('/v1/asn/AS13335'), 'AS13335');
  for (const url of [
    '/v1/ip/',
    '/v1/ip/1.1.1.1/',
    '/v1/ip/1.1.1.1?x=1',
    '/v1/ip/1.1.1.1/other',
    '/v1/domain/example.com',
    '/v1/domain/ex%C3%A4mple.com/history',
    '/v1/ping',
    '/v1/openapi.json',
    '/health',
    `/v1/domain/${'a'.repeat(300)}.com/history`,
  ]) {
    t.equal(matchFastRoute(url), null, `${url.slice(0, 40)}: not for the lane`);
  }
});

t.test('a meter that cannot grant at once (Redis): each request asks the query layer once', async (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'lane-async-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const demo = copyDemoRelease(path.join(work, 'releases'));
  const release = openRelease(path.join(demo.releasesDir, demo.file));
  t.teardown(() => release.close());
  const store = openAccountsStore(path.join(work, 'accounts.sqlite'));
  t.teardown(() => store.close());
  const { key } = await createTestKey(store, {});
  // Every look at the current release: one for the lane's check, one per lookup.
  let looks = 0;
  const releases = {
    current() {
      looks += 1;
      return release;
    },
  };
  const counting = new CountingMeter({
    plans: new PlanBook(
      freePlan({ FREE_REQUESTS_PER_MINUTE: 1000, FREE_MONTHLY_QUOTA: 5000, FREE_MAX_PAGE_SIZE: 100 }),
      store,
      5_000,
    ),
    counters: new MemoryCounters({ ledger: null, load: async () => 0 }),
  });
  // Only the asynchronous reserve, as the Redis counters have: the lane must wait for the unit.
  const meter: Meter = { reserve: (principal) => counting.reserve(principal) };
  const lane = createFastLane({
    releases,
    envelope: createEnvelope({ releases, meter, logError: (error) => t.error(error) }),
    accounts: cachedKeyVerifier(store, { ttlMs: 60_000 }),
    closing: () => false,
  });
  const server = http.createServer((req, res) =>
    lane.handle(req, res, () => {
      res.writeHead(599).end();
    }),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const ask = async (p: string) => {
    const before = looks;
    const r = await fetch(base + p, { headers: { authorization: `Bearer ${key}` } });
    await r.text();
    return { status: r.status, looks: looks - before, remaining: r.headers.get('x-quota-remaining') };
  };
  // The first request verifies the key (not yet known to the lane); the rest find it at once.
  t.same(await ask('/v1/ip/1.1.1.1'), { status: 200, looks: 2, remaining: '4999' });
  t.same(await ask('/v1/ip/23.228.249.10'), { status: 200, looks: 2, remaining: '4998' });
  t.same(await ask('/v1/asn/13335'), { status: 200, looks: 2, remaining: '4997' });
  t.same(await ask('/v1/domain/example.com/history'), { status: 200, looks: 2, remaining: '4996' });
  t.equal(lane.answered(), 4);
});

/** A response's status line (bodies here are JSON: they hold no such line). */
const STATUS_LINE = /HTTP\/1\.1 (\d{3}) [A-Za-z ]+\r\n/g;

/**
 * Raw HTTP/1.1 on one connection: writes `requests` (all at once: pipelined) and resolves with the
 * statuses of the responses once `count` of them have arrived.
 */
async function rawExchange(port: number, requests: string, count: number): Promise<number[]> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setEncoding('latin1');
  let text = '';
  const statuses = () => [...text.matchAll(STATUS_LINE)].map((m) => Number(m[1]));
  try {
    return await new Promise<number[]>((resolve, reject) => {
      socket.on('data', (chunk: string) => {
        text += chunk;
        if (statuses().length >= count) resolve(statuses());
      });
      socket.on('error', reject);
      socket.on('close', () =>
        reject(new Error(`closed after ${statuses().length} responses: ${text.slice(0, 300)}`)),
      );
      socket.write(requests);
    });
  } finally {
    socket.destroy();
  }
}

t.test('one connection: the lane answers GETs one after another, with and without a body', async (t) => {
  const server = await startTestServer(t);
  const head = (path: string) =>
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.key}\r\n`;
  // 200 requests pipelined on one connection: each answered, in order, by the lane.
  const many = Array.from(
    { length: 200 },
    (_, i) => `${head(i % 2 ? '/v1/ip/1.1.1.1' : '/v1/asn/13335')}\r\n`,
  );
  t.same(await rawExchange(server.port, many.join(''), 200), Array(200).fill(200));
  t.equal(server.app.fastLaneAnswered(), 200);
  // A GET with a body (sent whole, or in chunks), then a plain one: the body is drained, not taken
  // for the next request, and the connection goes on.
  const withBody = `${head('/v1/ip/1.1.1.1')}Content-Length: 11\r\n\r\nhello world`;
  const chunked = `${head('/v1/asn/13335')}Transfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n`;
  const plain = `${head('/v1/ip/23.228.249.10')}\r\n`;
  t.same(await rawExchange(server.port, withBody + chunked + plain, 3), [200, 200, 200]);
  t.equal(server.app.fastLaneAnswered(), 203);
  // A body larger than the request stream's buffer, sent with its request: node:http stopped
  // reading the socket when the buffer filled; draining it starts the reads again.
  const big = 'x'.repeat(200_000);
  const withBigBody = `${head('/v1/ip/1.1.1.1')}Content-Length: ${big.length}\r\n\r\n${big}`;
  t.same(await rawExchange(server.port, withBigBody + plain, 2), [200, 200]);
  // The same body arriving after the answer was found: dropped as it comes, then the next request.
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  socket.setEncoding('latin1');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write(`${head('/v1/ip/1.1.1.1')}Content-Length: ${big.length}\r\n\r\n${big.slice(0, 1000)}`);
  await new Promise((resolve) => setTimeout(resolve, 100));
  socket.write(`${big.slice(1000)}${plain}`);
  const deadline = Date.now() + 5000;
  const answered = () => [...text.matchAll(STATUS_LINE)].map((m) => Number(m[1]));
  while (answered().length < 2 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.same(answered(), [200, 200], 'both answered on the same connection');
  t.match(text, /"ip":"23\.228\.249\.10"/, 'the second answer is the second request');
});

/**
 * Sends MCP calls (`call` sends one and checks its answer) until the fast path answers one: it
 * turns on once its start-up check against the SDK has passed. At most 5 s.
 */
async function untilMcpFastPath(
  server: { app: { fastLaneAnswered(): number } },
  call: () => Promise<unknown>,
): Promise<void> {
  const deadline = Date.now() + 5000;
  while (Date.now() < deadline) {
    const before = server.app.fastLaneAnswered();
    await call();
    if (server.app.fastLaneAnswered() > before) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

t.test('one connection: MCP calls sent whole, pipelined or in pieces, each answered in order', async (t) => {
  const server = await startTestServer(t);
  const post = (ip: string, id: number) => {
    const call = modernToolCall('lookup_ip', { ip }, id);
    const headers = Object.entries(call.headers)
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join('');
    return {
      head:
        `POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.key}\r\n` +
        `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n${headers}` +
        `Content-Length: ${Buffer.byteLength(call.body)}\r\n\r\n`,
      body: call.body,
    };
  };
  const whole = (ip: string, id: number) => {
    const p = post(ip, id);
    return p.head + p.body;
  };
  await untilMcpFastPath(server, async () =>
    t.same(await rawExchange(server.port, whole('1.1.1.1', 1), 1), [200]),
  );
  const start = server.app.fastLaneAnswered();
  const ips = ['1.1.1.1', '23.228.249.10', '8.8.8.8'];
  // Ten calls pipelined in one write: each body is all there when its request is taken.
  const socket = net.connect(server.port, '127.0.0.1');
  t.teardown(() => socket.destroy());
  socket.setEncoding('latin1');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  socket.write(Array.from({ length: 10 }, (_, i) => whole(ips[i % 3]!, i + 1)).join(''));
  const answers = () => [...text.matchAll(/"structuredContent":\{"ip":"([^"]+)".*?"id":(\d+)\}/g)];
  const wait = async (n: number) => {
    const until = Date.now() + 5000;
    while (answers().length < n && Date.now() < until)
      await new Promise((resolve) => setTimeout(resolve, 20));
  };
  await wait(10);
  t.same(
    answers().map((m) => `${m[2]} ${m[1]}`),
    Array.from({ length: 10 }, (_, i) => `${i + 1} ${ips[i % 3]}`),
    'ten answers, in order, each for its own call',
  );
  // A body that arrives in two pieces, 100 ms apart, then a GET on the same connection.
  const split = post('8.8.8.8', 11);
  socket.write(split.head + split.body.slice(0, 20));
  await new Promise((resolve) => setTimeout(resolve, 100));
  t.equal(answers().length, 10, 'no answer before the body is whole');
  socket.write(split.body.slice(20));
  await wait(11);
  t.same(answers()[10]?.slice(1), ['8.8.8.8', '11'], 'the call whose body came in pieces');
  socket.write(
    `GET /v1/ip/23.228.249.10 HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer ${server.key}\r\n\r\n`,
  );
  const until = Date.now() + 5000;
  const statuses = () => [...text.matchAll(STATUS_LINE)].map((m) => m[1]);
  while (statuses().length < 12 && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  t.same(statuses(), Array(12).fill('200'), 'twelve 200s');
  t.match(text.slice(text.lastIndexOf('HTTP/1.1')), /"ip":"23\.228\.249\.10"/, 'the last is the GET');
  t.equal(server.app.fastLaneAnswered() - start, 12, 'all twelve answered by the lane');
});

/** One request on its own connection (closed by the server after it): the whole response text. */
async function exchangeClosing(port: number, request: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.setEncoding('latin1');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  await new Promise<void>((resolve, reject) => {
    socket.on('error', reject);
    socket.on('close', () => resolve());
    socket.write(request);
  });
  return text;
}

t.test(
  'MCP lane: header names in any case, repeated lines as node joins them, X-Request-ID kept',
  async (t) => {
    const server = await startTestServer(t);
    const call = modernToolCall('lookup_ip', { ip: '23.228.249.10' }, 5);
    /** A call whose header lines are `lines` (name and value as sent), Connection: close. */
    const request = (lines: Array<[string, string]>) =>
      `POST /mcp HTTP/1.1\r\n${lines.map(([n, v]) => `${n}: ${v}\r\n`).join('')}` +
      `Connection: close\r\nContent-Length: ${Buffer.byteLength(call.body)}\r\n\r\n${call.body}`;
    const plain: Array<[string, string]> = [
      ['Host', '127.0.0.1'],
      ['Authorization', `Bearer ${server.key}`],
      ['Content-Type', 'application/json'],
      ['Accept', 'application/json, text/event-stream'],
      ['MCP-Protocol-Version', call.headers['mcp-protocol-version']!],
      ['Mcp-Method', 'tools/call'],
      ['MCP-NAME', 'lookup_ip'],
    ];
    const answer = /"structuredContent":\{"ip":"23\.228\.249\.10".*"id":5\}$/;
    await untilMcpFastPath(server, async () =>
      t.match(await exchangeClosing(server.port, request(plain)), /^HTTP\/1\.1 200 /),
    );
    const cases: Array<{
      label: string;
      lines: Array<[string, string]>;
      lane: boolean;
      id?: string;
      status?: number;
    }> = [
      { label: 'names in mixed case', lines: plain, lane: true },
      {
        label: 'a sane X-Request-ID',
        lines: [...plain, ['X-Request-Id', 'trace-42.a']],
        lane: true,
        id: 'trace-42.a',
      },
      {
        label: 'Accept in two lines (node joins them)',
        lines: [
          ...plain.filter(([n]) => n !== 'Accept'),
          ['Accept', 'application/json'],
          ['accept', 'text/event-stream'],
        ],
        lane: true,
      },
      {
        // Node keeps the first of two Authorization lines.
        label: 'Authorization twice',
        lines: [...plain, ['Authorization', 'Bearer sk_not_a_key']],
        lane: true,
      },
      // A web origin is Fastify's to check (this one is not allowed: 403).
      { label: 'an Origin', lines: [...plain, ['Origin', 'http://127.0.0.1']], lane: false, status: 403 },
    ];
    for (const c of cases) {
      const before = server.app.mcpLaneExchanges();
      const text = await exchangeClosing(server.port, request(c.lines));
      const status = c.status ?? 200;
      t.equal(/^HTTP\/1\.1 (\d{3}) /.exec(text)?.[1], String(status), `${c.label}: ${status}`);
      if (status === 200) t.match(text, answer, `${c.label}: the tool's answer`);
      t.equal(server.app.mcpLaneExchanges() - before, c.lane ? 1 : 0, `${c.label}: lane ${c.lane}`);
      const id = /\r\nx-request-id: ([^\r]+)\r\n/i.exec(text)?.[1];
      if (c.id === undefined) t.match(id, UUID, `${c.label}: a new request id`);
      else t.equal(id, c.id, `${c.label}: the client's request id`);
    }
  },
);
