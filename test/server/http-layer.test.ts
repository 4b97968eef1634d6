/**
 * Issue 16, defects 2, 4 and 5, over raw sockets against the real server:
 * - 2: a request whose headers or body do not arrive in time is answered 408 and its connection
 *   closed (before the fix `requestTimeout = 0` and `setTimeout(0)` kept a never-ending chunked
 *   POST /mcp, or one trickling a byte at a time, open forever: those subtests timed out);
 * - 4: the HTTP layer's refusals (431, 400, 408) are in the `{detail}` envelope (docs/api.md#errors)
 *   with X-Request-ID (before: Fastify's `{"error":…,"statusCode":431}` without it);
 * - 5: HEAD answers wherever GET does, with the same status and headers and no body (before: 405).
 */
import t, { type Test } from 'tap';
import { buildApp } from '../../server/app.js';
import { assertContract } from '../helpers/contract.js';
import { rawRequest } from '../helpers/raw-http.js';
import { startTestServer } from '../helpers/test-server.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const TIMEOUTS = { headersMs: 600, requestMs: 1_200 };
/** Generous: the connection check runs every 150 ms here, but the machine may be loaded. */
const CLOSED_WITHIN_MS = 8_000;

function checkEnvelope(
  t: Test,
  r: Awaited<ReturnType<typeof rawRequest>>,
  status: number,
  detail: RegExp,
): void {
  t.equal(r.status, status, `status ${status}`);
  t.match(r.headers['x-request-id'], UUID, 'X-Request-ID');
  t.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  t.equal(r.headers.connection, 'close');
  const body = JSON.parse(r.body) as { detail: string };
  t.same(Object.keys(body), ['detail']);
  t.match(body.detail, detail);
  t.equal(r.closed, true, 'connection closed');
  t.doesNotThrow(() => assertContract({ method: 'GET', url: '/', status, headers: r.headers, body: r.body }));
}

t.test('timeouts: stalled headers, a body that never ends or trickles: 408 and closed', async (t) => {
  const s = await startTestServer(t, { timeouts: TIMEOUTS });
  const key = `authorization: Bearer ${s.key}\r\n`;
  const mcpHead = `POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\n${key}`;

  const stalled = await rawRequest(s.port, 'GET /v1/ping HTTP/1.1\r\nhost: x\r\n', {
    timeoutMs: CLOSED_WITHIN_MS,
  });
  checkEnvelope(t, stalled, 408, /^Request Timeout: send the headers within 600 ms/);

  const endless = await rawRequest(s.port, `${mcpHead}transfer-encoding: chunked\r\n\r\n1\r\n{\r\n`, {
    timeoutMs: CLOSED_WITHIN_MS,
    more: { chunks: Array.from({ length: 200 }, () => '1\r\n \r\n'), everyMs: 100 },
  });
  checkEnvelope(t, endless, 408, /whole request within 1200 ms/);
  t.ok(endless.ms >= TIMEOUTS.requestMs, `not before the timeout (${Math.round(endless.ms)} ms)`);

  const trickle = await rawRequest(s.port, `${mcpHead}content-length: 1000\r\n\r\n{`, {
    timeoutMs: CLOSED_WITHIN_MS,
    more: { chunks: Array.from({ length: 999 }, () => ' '), everyMs: 50 },
  });
  checkEnvelope(t, trickle, 408, /^Request Timeout/);

  // Many at once: every one is closed, none holds its connection.
  const many = await Promise.all(
    Array.from({ length: 40 }, () =>
      rawRequest(s.port, `${mcpHead}transfer-encoding: chunked\r\n\r\n`, { timeoutMs: CLOSED_WITHIN_MS }),
    ),
  );
  t.equal(many.filter((r) => r.closed && r.status === 408).length, 40, '40 of 40 closed with 408');
});

t.test('timeouts: a keep-alive connection idle between requests is not cut by them', async (t) => {
  const s = await startTestServer(t, { timeouts: TIMEOUTS });
  const { request } = await import('undici');
  const { Agent } = await import('undici');
  const agent = new Agent({ connections: 1, keepAliveTimeout: 60_000 });
  t.teardown(() => agent.close());
  const ping = async () => {
    const r = await request(`${s.url}/v1/ping`, {
      dispatcher: agent,
      headers: { authorization: `Bearer ${s.key}` },
    });
    await r.body.text();
    return r.statusCode;
  };
  t.equal(await ping(), 200);
  await new Promise((resolve) => setTimeout(resolve, TIMEOUTS.requestMs * 2));
  t.equal(await ping(), 200, 'the same connection answers after twice the request timeout');
  // A POST /mcp whose body arrives in time is answered as usual.
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });
  const listed = await rawRequest(
    s.port,
    `POST /mcp HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\naccept: application/json, text/event-stream\r\nmcp-protocol-version: 2025-06-18\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`,
    { more: { chunks: [body.slice(10)], everyMs: 200 }, untilResponse: true },
  );
  t.equal(listed.status, 200);
  t.match(listed.body, /"lookup_ip"/);
});

t.test('HTTP-layer refusals in the envelope with X-Request-ID', async (t) => {
  const s = await startTestServer(t);
  const big = 'a'.repeat(20 * 1024);
  const cases: Array<[string, string | Buffer, number, RegExp]> = [
    ['oversized header', `GET /health HTTP/1.1\r\nhost: x\r\nx-big: ${big}\r\n\r\n`, 431, /16 KiB/],
    [
      'oversized URL',
      `GET /health?${big} HTTP/1.1\r\nhost: x\r\n\r\n`,
      431,
      /^Request Header Fields Too Large/,
    ],
    [
      'a byte >= 0x80 in the request line',
      Buffer.concat([
        Buffer.from('GET /health'),
        Buffer.from([0xff]),
        Buffer.from(' HTTP/1.1\r\nhost: x\r\n\r\n'),
      ]),
      400,
      /^Bad Request: /,
    ],
    [
      'a control byte in a header',
      'GET /health HTTP/1.1\r\nhost: x\r\nx-a: b\x01c\r\n\r\n',
      400,
      /^Bad Request: /,
    ],
    ['not HTTP at all', 'HELLO\r\n\r\n', 400, /^Bad Request: /],
    [
      'a bad chunk size',
      'POST /mcp HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n',
      400,
      /^Bad Request: /,
    ],
  ];
  t.test('HTTP/1.1 without Host (node:http would answer a bare 400)', async (t) => {
    const r = await rawRequest(s.port, 'GET /health HTTP/1.1\r\n\r\n', { untilResponse: true });
    t.equal(r.status, 400);
    t.match(r.headers['x-request-id'], UUID);
    t.same(JSON.parse(r.body), { detail: 'Bad Request: an HTTP/1.1 request needs a Host header' });
    const old = await rawRequest(s.port, 'GET /health HTTP/1.0\r\n\r\n');
    t.equal(old.status, 200, 'HTTP/1.0 needs none');
  });
  for (const [name, bytes, status, detail] of cases) {
    t.test(name, async (t) => checkEnvelope(t, await rawRequest(s.port, bytes), status, detail));
  }
});

t.test('HEAD answers wherever GET does: same status and headers, no body', async (t) => {
  const s = await startTestServer(t);
  const paths = [
    '/health',
    '/v1/ping',
    '/v1/ip/23.228.249.10',
    '/v1/ip/23.228.249.10/domains?limit=2',
    '/v1/domain/example.com/history',
    '/v1/domain/example.com/hosting',
    '/v1/asn/AS13335',
    '/v1/openapi.json',
    '/llms-full.txt',
    '/v1/ip/1.2.3.0%2F24',
    '/v1/ping?limit=0',
    '/no/such/path',
  ];
  // Per response, or per connection (undici closes the connection after a HEAD).
  const varying = new Set(['date', 'x-request-id', 'keep-alive', 'connection']);
  for (const path of paths) {
    for (const key of [s.key, null]) {
      const get = await s.get(path, { key });
      const head = await s.get(path, { key, method: 'HEAD' });
      const label = `${path}${key ? '' : ' without a key'}`;
      t.equal(head.status, get.status, `${label}: status ${get.status}`);
      t.equal(head.text, '', `${label}: no body`);
      t.match(head.headers['x-request-id'], /.+/, `${label}: X-Request-ID`);
      const strip = (h: Record<string, string>) =>
        Object.fromEntries(Object.entries(h).filter(([name]) => !varying.has(name)));
      t.same(strip(head.headers), strip(get.headers), `${label}: same headers`);
      t.equal(
        Number(head.headers['content-length']),
        Buffer.byteLength(get.text),
        `${label}: content-length`,
      );
    }
  }
  const mcp = await s.get('/mcp', { method: 'HEAD' });
  t.equal(mcp.status, 405, 'HEAD /mcp: only POST there');
  t.equal(mcp.headers.allow, 'POST');
});

t.test('a headers timeout longer than the request timeout is refused at start', async (t) => {
  t.throws(
    () =>
      buildApp({
        envelope: {} as never,
        releases: { current: () => null } as never,
        accounts: {} as never,
        timeouts: { headersMs: 2_000, requestMs: 1_000 },
      }),
    { message: 'HEADERS_TIMEOUT_MS (2000) must not exceed REQUEST_TIMEOUT_MS (1000)' },
  );
});
