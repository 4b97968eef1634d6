/**
 * Property-based fuzzing (fast-check) of the real server on port 0, over raw sockets so malformed
 * request lines and headers reach it as sent: random and malformed paths, query strings, methods,
 * headers, MCP bodies and bytes that are not HTTP at all. Every answer: no 5xx, a refusal in the
 * envelope of docs/api.md#errors (`{error, message}` or `{detail}`) with X-Request-ID, every
 * response valid against /v1/openapi.json (test/helpers/contract.ts), and the server still healthy
 * at the end.
 *
 * Bounded in time: each property stops after TIME_LIMIT_MS (or its runs), so `make test` spends
 * about a minute here on a loaded 2-core machine. A failure prints fast-check's seed and path;
 * rerun it with FUZZ_SEED=<seed>.
 */
import fc from 'fast-check';
import t from 'tap';
import { assertContract } from '../helpers/contract.js';
import { rawRequest, type RawResponse } from '../helpers/raw-http.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const TIME_LIMIT_MS = Number(process.env.FUZZ_TIME_LIMIT_MS ?? 12_000);
const RUNS = Number(process.env.FUZZ_RUNS ?? 300);
const SEED = process.env.FUZZ_SEED === undefined ? undefined : Number(process.env.FUZZ_SEED);
const PARAMETERS = {
  numRuns: RUNS,
  interruptAfterTimeLimit: TIME_LIMIT_MS,
  markInterruptAsFailure: false,
  ...(SEED === undefined ? {} : { seed: SEED }),
};

const ROUTES = [
  '/v1/ip/{}',
  '/v1/ip/{}/domains',
  '/v1/domain/{}/history',
  '/v1/domain/{}/hosting',
  '/v1/asn/{}',
  '/v1/ping',
  '/health',
  '/v1/openapi.json',
  '/llms-full.txt',
  '/mcp',
];
const PARAMS = [
  '8.8.8.8',
  '23.228.249.10',
  '2600:9000::1',
  '10.0.0.1',
  'example.com',
  'AS13335',
  '64512',
  'x',
];
const METHODS = ['GET', 'GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE'];
/** Characters that stress URL parsing: escapes, separators, dots, brackets, non-ASCII. */
const URL_CHARS = [...'abcAZ09-._~%/?#[]@!$&\'()*+,;=:{}|\\^`"<> é€💥'];

const urlText = (max: number) =>
  fc
    .array(
      fc.oneof(fc.constantFrom(...URL_CHARS), fc.constantFrom('%00', '%2F', '%zz', '%C0%AF', '..', '//')),
      {
        maxLength: max,
      },
    )
    .map((parts) => parts.join(''));

/** A request target: a route with a random or real parameter, or random text. */
const target = fc.oneof(
  fc
    .tuple(fc.constantFrom(...ROUTES), fc.oneof(fc.constantFrom(...PARAMS), urlText(40)), fc.boolean())
    .map(([route, param, slash]) => route.replace('{}', param) + (slash ? '/' : '')),
  urlText(60).map((text) => `/${text}`),
  fc.constantFrom('*', '/', '//x', 'http://evil.example/v1/ping', '/v1/ping?' + 'a'.repeat(5000)),
);

const query = fc
  .array(
    fc.tuple(
      fc.oneof(
        fc.constantFrom('limit', 'cursor', 'include_ended', 'api_key', 'access_token', 'q', 'a[]'),
        urlText(10),
      ),
      fc.oneof(fc.constantFrom('0', '1', '1001', '-1', 'true', 'yes', 'x'.repeat(1100)), urlText(20)),
    ),
    { maxLength: 4 },
  )
  .map((pairs) => (pairs.length === 0 ? '' : `?${pairs.map(([k, v]) => `${k}=${v}`).join('&')}`));

const headerName = fc
  .stringMatching(/^[A-Za-z][A-Za-z0-9-]{0,20}$/)
  .filter(
    (name) => !['content-length', 'transfer-encoding', 'host', 'connection'].includes(name.toLowerCase()),
  );
const headerValue = fc.oneof(
  fc.string({ maxLength: 60 }).map((s) => s.replace(/[\r\n]/g, '')),
  fc.constantFrom('https://evil.example', 'https://console.ipscope.test', 'application/json', '\u0001', 'é'),
);

function headerLines(server: TestServer) {
  return fc
    .tuple(
      fc.constantFrom('valid', 'none', 'revoked', 'garbage', 'two'),
      fc.array(fc.tuple(headerName, headerValue), { maxLength: 5 }),
    )
    .map(([auth, extra]) => {
      const lines: string[] = [];
      if (auth === 'valid') lines.push(`authorization: Bearer ${server.key}`);
      if (auth === 'revoked') lines.push(`authorization: Bearer ${server.revokedKey}`);
      if (auth === 'garbage') lines.push('authorization: Bearer sk_\u00ff\u00fe');
      if (auth === 'two') lines.push(`authorization: Bearer ${server.key}`, 'authorization: Basic eDp5');
      for (const [name, value] of extra) lines.push(`${name}: ${value}`);
      return lines;
    });
}

/** A JSON-RPC message as MCP clients send it, with random methods, tools and arguments. */
const mcpBody = fc.oneof(
  fc
    .record({
      jsonrpc: fc.constantFrom('2.0', '1.0', 2),
      id: fc.oneof(fc.integer(), fc.string({ maxLength: 8 }), fc.constant(null)),
      method: fc.constantFrom('tools/call', 'tools/list', 'initialize', 'ping', 'resources/list', 'x'),
      params: fc.oneof(
        fc.record({
          name: fc.constantFrom(
            'lookup_ip',
            'ip_domains',
            'domain_history',
            'domain_hosting',
            'lookup_asn',
            'nope',
          ),
          arguments: fc.dictionary(
            fc.constantFrom('ip', 'domain', 'asn', 'limit', 'cursor', 'include_ended'),
            fc.oneof(fc.constantFrom(...PARAMS), fc.integer(), fc.boolean(), fc.string({ maxLength: 30 })),
          ),
        }),
        fc.jsonValue({ maxDepth: 3 }),
      ),
    })
    .map((message) => JSON.stringify(message)),
  fc.json({ maxDepth: 3 }),
  fc.string({ maxLength: 200 }),
);

/** The checks every answer passes. */
function checkAnswer(r: RawResponse, method: string, url: string, contract: boolean): void {
  if (r.status === 0) throw new Error(`no answer to ${method} ${url.slice(0, 120)} (closed: ${r.closed})`);
  if (r.status >= 500)
    throw new Error(`${r.status} for ${method} ${url.slice(0, 120)}: ${r.body.slice(0, 300)}`);
  if (r.headers['x-request-id'] === undefined)
    throw new Error(`no X-Request-ID: ${method} ${url.slice(0, 120)}`);
  if (r.status >= 400 && method !== 'HEAD') {
    const body = JSON.parse(r.body) as Record<string, unknown>;
    const keys = Object.keys(body).sort().join(',');
    const mcpError = url.startsWith('/mcp') && keys === 'error,id,jsonrpc';
    if (keys !== 'error,message' && keys !== 'detail' && !mcpError) {
      throw new Error(
        `refusal outside the envelope (${keys}): ${method} ${url.slice(0, 120)}: ${r.body.slice(0, 200)}`,
      );
    }
  }
  if (contract) {
    assertContract({ method, url, status: r.status, headers: r.headers, body: r.body, origin: true });
  }
}

function send(
  server: TestServer,
  method: string,
  url: string,
  headers: string[],
  body = '',
): Promise<RawResponse> {
  const head = [`${method} ${url} HTTP/1.1`, 'host: fuzz.test', 'connection: close', ...headers];
  if (body !== '' || method === 'POST') head.push(`content-length: ${Buffer.byteLength(body)}`);
  return rawRequest(server.port, `${head.join('\r\n')}\r\n\r\n${body}`, { timeoutMs: 15_000 });
}

let server: TestServer;
t.before(async () => {
  server = await startTestServer(t, { timeouts: { headersMs: 500, requestMs: 1_000 } });
});

t.test('random paths, query strings, methods and headers', async () => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.constantFrom(...METHODS),
      target,
      query,
      headerLines(server),
      async (method, path, q, headers) => {
        runs += 1;
        const url = path + q;
        const r = await send(server, method, url, headers);
        // A target the request line cannot carry (a space, a control byte) is refused by the parser.
        const wellFormed = /^[\x21-\x7e]+$/.test(url) && (url.startsWith('/') || url === '*');
        // So is a header value with a control byte (llhttp allows tab only): the answer is the
        // parser's {detail} envelope, before any route, so no route's contract applies.
        const parsable = headers.every((h) => [...h].every((c) => c === '\t' || (c >= ' ' && c !== '\x7f')));
        const hasOrigin = headers.some((h) => h.toLowerCase().startsWith('origin:'));
        checkAnswer(
          r,
          method,
          url,
          wellFormed && parsable && url.startsWith('/') && !url.startsWith('//') && !hasOrigin,
        );
      },
    ),
    PARAMETERS,
  );
  t.ok(runs >= 20, `${runs} requests`);
});

t.test('random MCP bodies', async () => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      mcpBody,
      fc.constantFrom('application/json', 'text/plain', 'application/json; charset=utf-8'),
      fc.constantFrom('2025-06-18', '2026-07-28', 'x', ''),
      fc.boolean(),
      async (body, type, version, keyed) => {
        runs += 1;
        const headers = [`content-type: ${type}`, 'accept: application/json, text/event-stream'];
        if (version !== '') headers.push(`mcp-protocol-version: ${version}`);
        if (keyed) headers.push(`authorization: Bearer ${server.key}`);
        const r = await send(server, 'POST', '/mcp', headers, body);
        checkAnswer(r, 'POST', '/mcp', true);
      },
    ),
    PARAMETERS,
  );
  t.ok(runs >= 20, `${runs} requests`);
});

t.test('bytes that are not a valid request line or header', async () => {
  let runs = 0;
  await fc.assert(
    fc.asyncProperty(
      fc.oneof(
        fc.uint8Array({ minLength: 1, maxLength: 120 }).map((bytes) => Buffer.from(bytes)),
        fc
          .tuple(fc.constantFrom('GET', 'POST', 'G\u00ffT', ''), fc.uint8Array({ maxLength: 40 }))
          .map(([m, bytes]) =>
            Buffer.concat([Buffer.from(`${m} /`), Buffer.from(bytes), Buffer.from(' HTTP/1.1\r\n')]),
          ),
        fc
          .uint8Array({ minLength: 1, maxLength: 40 })
          .map((bytes) =>
            Buffer.concat([
              Buffer.from('GET /health HTTP/1.1\r\nhost: x\r\nx-f: '),
              Buffer.from(bytes),
              Buffer.from('\r\n'),
            ]),
          ),
      ),
      async (bytes) => {
        runs += 1;
        const r = await rawRequest(server.port, Buffer.concat([bytes, Buffer.from('\r\n\r\n')]), {
          timeoutMs: 15_000,
          end: true,
        });
        // Some byte strings are a valid request after all (a GET of /health): answered, not refused.
        if (r.status === 0 && r.closed) return; // closed without a word only when the parser saw nothing to answer
        checkAnswer(r, 'GET', '/', false);
      },
    ),
    PARAMETERS,
  );
  t.ok(runs >= 20, `${runs} requests`);
});

t.test('the server is still healthy afterwards', async (t) => {
  const health = await server.get('/health', { key: null });
  t.equal(health.status, 200);
  t.equal((health.json() as { status: string }).status, 'healthy');
  const errors = server.logs.filter((line) => (JSON.parse(line) as { level: number }).level >= 50);
  t.same(errors, [], 'no error logged');
});
