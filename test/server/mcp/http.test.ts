/**
 * POST /mcp at the HTTP level: 405 for other methods, 403 for foreign web pages, 413 for bodies over
 * 1 MiB, JSON (never SSE) answers in every era, and the metering seam: limit headers on the HTTP
 * response, a refusal from the meter as tool error text, commit for answered calls and release for
 * refused or uncounted ones.
 */
import path from 'node:path';
import t from 'tap';
import { request } from 'undici';
import { ApiError, ERROR_TABLE } from '../../../shared/errors.js';
import { openAccountsStore } from '../../../accounts/index.js';
import type { KeyPrincipal } from '../../../accounts/index.js';
import type { Meter } from '../../../server/limits/meter.js';
import { apiEnvelope, buildApp } from '../../../server/app.js';
import { ReleaseStore } from '../../../server/releases/store.js';
import { createTestKey } from '../../helpers/accounts.js';
import { MODERN, modernToolCall } from '../../helpers/mcp-calls.js';
import { copyDemoRelease } from '../../helpers/demo-release.js';
import { assertContract } from '../../helpers/contract.js';
import { CONSOLE_URL, startTestServer, type TestServer } from '../../helpers/test-server.js';

const ACCEPT = 'application/json, text/event-stream';

interface Raw {
  status: number;
  headers: Record<string, string>;
  text: string;
  json(): unknown;
}

async function post(url: string, body: string | Buffer, headers: Record<string, string> = {}): Promise<Raw> {
  const r = await request(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: ACCEPT, ...headers },
    body,
  });
  const text = await r.body.text();
  const flat: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers))
    if (v !== undefined) flat[k] = Array.isArray(v) ? v.join(', ') : v;
  // The real server's answers (not those of the bare MCP-route apps of the metering tests below).
  if (url.startsWith(`${server.url}/`))
    assertContract({
      method: 'POST',
      url,
      status: r.statusCode,
      headers: flat,
      body: text,
      origin: headers.origin !== undefined,
    });
  return { status: r.statusCode, headers: flat, text, json: () => JSON.parse(text) as unknown };
}

function legacyCall(tool: string, args: Record<string, unknown>, version = '2025-06-18') {
  return {
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: { name: tool, arguments: args },
    }),
    headers: { 'mcp-protocol-version': version },
  };
}

let server: TestServer;
t.before(async () => {
  server = await startTestServer(t);
});

t.test('methods other than POST answer 405 with Allow: POST', async (t) => {
  for (const method of ['GET', 'DELETE', 'PUT', 'PATCH']) {
    const r = await server.get('/mcp', { method, headers: { accept: ACCEPT } });
    t.equal(r.status, 405, method);
    t.equal(r.headers.allow, 'POST');
    t.same(r.json(), { detail: 'Method Not Allowed' });
  }
});

t.test('web pages other than the console are refused with 403', async (t) => {
  const list = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' });
  const foreign = await post(`${server.url}/mcp`, list, { origin: 'https://evil.example' });
  t.equal(foreign.status, 403);
  t.same(foreign.json(), { detail: 'Forbidden' });
  const console = await post(`${server.url}/mcp`, list, { origin: CONSOLE_URL });
  t.equal(console.status, 200);
  t.equal(console.headers['access-control-allow-origin'], CONSOLE_URL);
  t.match(console.headers['access-control-expose-headers'], /Mcp-Session-Id/);
  // The headers the SDK's browser transport sends must pass the preflight, or the browser stops.
  const sent = ['authorization', 'content-type', 'accept', 'mcp-protocol-version', 'mcp-method', 'mcp-name'];
  const preflight = await server.get('/mcp', {
    method: 'OPTIONS',
    key: null,
    headers: {
      origin: CONSOLE_URL,
      'access-control-request-method': 'POST',
      'access-control-request-headers': sent.join(','),
    },
  });
  t.equal(preflight.status, 204);
  t.match(preflight.headers['access-control-allow-methods'], /POST/);
  const allowed = preflight.headers['access-control-allow-headers']!.toLowerCase().split(/,\s*/);
  for (const header of sent) t.ok(allowed.includes(header), `${header} allowed`);
});

t.test('a body over 1 MiB answers 413 payload_too_large', async (t) => {
  const big = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: { pad: 'x'.repeat(1024 * 1024) },
  });
  const r = await post(`${server.url}/mcp`, big, { authorization: `Bearer ${server.key}` });
  t.equal(r.status, 413);
  t.same(r.json(), { error: 'payload_too_large', message: ERROR_TABLE.payload_too_large.message });
  // Just under the limit is read and answered.
  const fits = JSON.stringify({
    jsonrpc: '2.0',
    id: 1,
    method: 'tools/list',
    params: { pad: 'x'.repeat(1000 * 1000) },
  });
  t.equal((await post(`${server.url}/mcp`, fits)).status, 200);
});

t.test('non-JSON bodies are refused the JSON-RPC way', async (t) => {
  const r = await post(`${server.url}/mcp`, 'hello', { 'content-type': 'text/plain' });
  t.equal(r.status, 415);
  const bad = await post(`${server.url}/mcp`, '{not json');
  t.equal(bad.status, 400);
  t.match(bad.json(), { jsonrpc: '2.0', error: { code: -32700 } });
});

t.test('every 2025 version opens with initialize and gets JSON, not SSE', async (t) => {
  for (const version of ['2025-03-26', '2025-06-18', '2025-11-25']) {
    const init = await post(
      `${server.url}/mcp`,
      JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'raw', version: '1.0.0' } },
      }),
    );
    t.equal(init.status, 200, version);
    t.match(init.headers['content-type'], /^application\/json/);
    t.equal(init.headers['mcp-session-id'], undefined, 'stateless: no session');
    t.match(init.json(), { result: { protocolVersion: version, serverInfo: { name: 'ipscope' } } });
    const initialized = await post(
      `${server.url}/mcp`,
      JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' }),
      { 'mcp-protocol-version': version },
    );
    t.equal(initialized.status, 202);
    const call = legacyCall('lookup_ip', { ip: '104.16.132.229' }, version);
    const r = await post(`${server.url}/mcp`, call.body, {
      ...call.headers,
      authorization: `Bearer ${server.key}`,
    });
    t.equal(r.status, 200);
    t.match(r.headers['content-type'], /^application\/json/);
    const rest = await server.get('/v1/ip/104.16.132.229');
    t.same((r.json() as { result: { structuredContent: unknown } }).result.structuredContent, rest.json());
  }
});

t.test('2026-07-28 requests get JSON answers', async (t) => {
  const call = modernToolCall('domain_hosting', { domain: 'example.com' });
  const r = await post(`${server.url}/mcp`, call.body, {
    ...call.headers,
    authorization: `Bearer ${server.key}`,
  });
  t.equal(r.status, 200);
  t.match(r.headers['content-type'], /^application\/json/);
  const rest = await server.get('/v1/domain/example.com/hosting');
  t.same((r.json() as { result: { structuredContent: unknown } }).result.structuredContent, rest.json());
  // A modern header without the envelope is refused by the SDK's validation ladder.
  const bare = await post(`${server.url}/mcp`, legacyCall('lookup_ip', { ip: '8.8.8.8' }).body, {
    'mcp-protocol-version': MODERN,
  });
  t.equal(bare.status, 400);
});

// ---------------------------------------------------------------------------------------------
// The metering seam, with a recording meter in an app of its own.

interface Recorded {
  reserved: number;
  committed: number;
  released: number;
}

function recordingMeter(refuse: ApiError | null): { meter: Meter; counts: Recorded } {
  const counts = { reserved: 0, committed: 0, released: 0 };
  const meter: Meter = {
    async reserve(_principal: KeyPrincipal) {
      if (refuse) throw refuse;
      counts.reserved++;
      const headers = {
        'x-ratelimit-limit': '60',
        'x-ratelimit-remaining': '59',
        'x-ratelimit-reset': '30',
        'x-quota-limit': '1000',
        'x-quota-used': String(counts.committed + 1),
        'x-quota-remaining': String(999 - counts.committed),
      };
      return {
        maxPageSize: 2,
        commit: () => (counts.committed++, { headers, done: Promise.resolve() }),
        release: () => (counts.released++, { headers, done: Promise.resolve() }),
      };
    },
  };
  return { meter, counts };
}

type Tap = Pick<typeof t, 'testdir' | 'teardown'>;

async function meteredApp(t: Tap, refuse: ApiError | null) {
  const dir = t.testdir({});
  copyDemoRelease(path.join(dir, 'releases'));
  const store = openAccountsStore(path.join(dir, 'accounts.sqlite'));
  const { key } = await createTestKey(store, { plan: 'pro' });
  const releases = new ReleaseStore({ dir: path.join(dir, 'releases'), pollMs: 60_000 }).start();
  const { meter, counts } = recordingMeter(refuse);
  const app = buildApp({
    envelope: apiEnvelope({ releases, accounts: store, meter }),
    releases,
    accounts: store,
  });
  await app.listen({ port: 0, host: '127.0.0.1' });
  t.teardown(async () => {
    await app.close();
    await releases.close();
    await store.close();
  });
  const address = app.server.address() as { port: number };
  return { url: `http://127.0.0.1:${address.port}/mcp`, key, counts };
}

t.test('limit headers go on the HTTP response; answered calls commit, refused ones release', async (t) => {
  const { url, key, counts } = await meteredApp(t, null);
  const auth = { authorization: `Bearer ${key}` };
  for (const [era, call] of [
    ['modern', modernToolCall('lookup_ip', { ip: '104.16.132.229' })],
    ['legacy', legacyCall('lookup_ip', { ip: '104.16.132.229' })],
  ] as const) {
    const r = await post(url, call.body, { ...call.headers, ...auth });
    t.equal(r.status, 200, era);
    t.equal(r.headers['x-ratelimit-limit'], '60');
    t.equal(r.headers['x-quota-limit'], '1000');
    t.ok(r.headers['x-quota-remaining']);
  }
  t.same(counts, { reserved: 2, committed: 2, released: 0 });

  // A bogon lookup_ip answers but is not counted; a refused argument is not counted.
  await post(url, modernToolCall('lookup_ip', { ip: '10.0.0.1' }).body, {
    ...modernToolCall('lookup_ip', {}).headers,
    ...auth,
  });
  t.same(counts, { reserved: 3, committed: 2, released: 1 });
  const refused = modernToolCall('lookup_ip', { ip: '1.2.3.0/24' });
  const r = await post(url, refused.body, { ...refused.headers, ...auth });
  t.match(r.text, /Error executing tool lookup_ip: invalid_ip: /);
  t.same(counts, { reserved: 4, committed: 2, released: 2 });
  // As on REST, the unit is reserved before the arguments are read, and released when they are bad.
  const badLimit = modernToolCall('lookup_asn', { asn: 13335, limit: 5000 });
  t.match(
    (await post(url, badLimit.body, { ...badLimit.headers, ...auth })).text,
    /invalid_arguments: limit/,
  );
  t.same(counts, { reserved: 5, committed: 2, released: 3 });

  // The plan's page size applies (this meter allows 2 per page).
  const page = modernToolCall('lookup_asn', { asn: 13335, limit: 50 });
  const paged = (await post(url, page.body, { ...page.headers, ...auth })).json() as {
    result: { structuredContent: { ranges: unknown[]; next_cursor: string | null } };
  };
  t.equal(paged.result.structuredContent.ranges.length, 2);

  // Listing is not metered.
  const list = await post(url, JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }));
  t.equal(list.status, 200);
  t.equal(list.headers['x-ratelimit-limit'], undefined);
});

t.test("the meter's refusals are tool errors with their code, and Retry-After on the response", async (t) => {
  const refusals = [
    // The meter's refusals carry the limit headers (server/limits/meter.ts).
    new ApiError('rate_limited', undefined, {
      retryAfter: 17,
      headers: { 'x-ratelimit-limit': '60', 'x-ratelimit-remaining': '0' },
    }),
    new ApiError('quota_exceeded'),
    new ApiError('project_cap_exceeded'),
    new ApiError('service_unavailable', undefined, { retryAfter: 3 }),
  ];
  for (const refusal of refusals) {
    const { url, key } = await meteredApp(t, refusal);
    for (const call of [
      modernToolCall('domain_history', { domain: 'example.com' }),
      legacyCall('domain_history', { domain: 'example.com' }),
    ]) {
      const r = await post(url, call.body, { ...call.headers, authorization: `Bearer ${key}` });
      t.equal(r.status, 200);
      const result = (r.json() as { result: { isError: boolean; content: Array<{ text: string }> } }).result;
      t.equal(result.isError, true);
      t.equal(
        result.content[0]!.text,
        `Error executing tool domain_history: ${refusal.code}: ${ERROR_TABLE[refusal.code].message}`,
      );
      t.equal(
        r.headers['retry-after'],
        refusal.retryAfter === undefined ? undefined : String(refusal.retryAfter),
      );
      t.equal(
        r.headers['x-ratelimit-remaining'],
        refusal.code === 'rate_limited' ? '0' : undefined,
        'limit headers of the refusal',
      );
    }
  }
});
