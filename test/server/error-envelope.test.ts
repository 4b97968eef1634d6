/**
 * The error envelope across every route (docs/api.md#errors): 401 for every kind of bad key (and
 * before bad parameters), 404, 405, the 422 detail list, trailing-slash redirect, X-Request-ID,
 * browser origins (403 and CORS), 503 without a release while /health stays healthy, and 500.
 */
import t from 'tap';
import { ERROR_TABLE } from '../../shared/errors.js';
import { CONSOLE_URL, startTestServer } from '../helpers/test-server.js';

interface RouteCase {
  name: string;
  path: string;
  /** A request with an invalid path parameter and the error code it gets. */
  bad?: { path: string; code: string };
  paged: boolean;
}

const ROUTES: RouteCase[] = [
  {
    name: 'lookup_ip',
    path: '/v1/ip/23.228.249.10',
    bad: { path: '/v1/ip/1.2.3.0%2F24', code: 'invalid_ip' },
    paged: false,
  },
  {
    name: 'ip_domains',
    path: '/v1/ip/23.228.249.10/domains',
    bad: { path: '/v1/ip/10.1.2.3/domains', code: 'non_public_ip' },
    paged: true,
  },
  {
    name: 'domain_history',
    path: '/v1/domain/example.com/history',
    bad: { path: '/v1/domain/localhost/history', code: 'invalid_domain' },
    paged: true,
  },
  {
    name: 'domain_hosting',
    path: '/v1/domain/example.com/hosting',
    bad: { path: '/v1/domain/https%3A%2F%2Fexample.com%2Fx/hosting', code: 'invalid_domain' },
    paged: false,
  },
  {
    name: 'lookup_asn',
    path: '/v1/asn/AS13335',
    bad: { path: '/v1/asn/AS0', code: 'invalid_asn' },
    paged: true,
  },
  { name: 'ping', path: '/v1/ping', paged: false },
];

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('with the demo release and real keys', async (t) => {
  const s = await startTestServer(t);

  t.test('every route answers 200 with a valid key', async (t) => {
    for (const route of ROUTES) {
      const r = await s.get(route.path);
      t.equal(r.status, 200, route.name);
      t.equal(r.headers['content-type'], 'application/json; charset=utf-8', `${route.name} content type`);
      t.match(r.headers['x-request-id'], UUID, `${route.name} X-Request-ID`);
    }
  });

  t.test('401 unauthorized for every kind of bad key, same message', async (t) => {
    const cases: Array<[string, Record<string, string>, string | null]> = [
      ['missing header', {}, null],
      ['Basic scheme', { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` }, null],
      ['Bearer without a key', { authorization: 'Bearer ' }, null],
      ['key without Bearer', { authorization: s.key }, null],
      ['unknown key', {}, 'sk_' + 'A'.repeat(32)],
      ['mistyped key', {}, s.key.slice(0, -1) + (s.key.endsWith('a') ? 'b' : 'a')],
      ['revoked key', {}, s.revokedKey],
      ['expired key', {}, s.expiredKey],
      ['over-long token', {}, 'sk_' + 'x'.repeat(5000)],
    ];
    for (const route of ROUTES) {
      for (const [label, headers, key] of cases) {
        const r = await s.get(route.path, { key, headers });
        t.equal(r.status, 401, `${route.name}: ${label}`);
        t.same(
          r.json(),
          { error: 'unauthorized', message: ERROR_TABLE.unauthorized.message },
          `${route.name}: ${label} body`,
        );
        t.match(r.headers['x-request-id'], UUID);
      }
    }
  });

  t.test('a key in the URL is refused even with a valid header', async (t) => {
    for (const route of ROUTES) {
      for (const name of ['api_key', 'APIKEY', 'Key', 'token', 'authorization']) {
        const r = await s.get(`${route.path}?${name}=${s.key}`);
        t.equal(r.status, 401, `${route.name} ?${name}=`);
        t.equal((r.json() as { error: string }).error, 'unauthorized');
        t.match((r.json() as { message: string }).message, /not accepted in the URL/);
      }
    }
  });

  t.test('the key is checked before the parameters', async (t) => {
    for (const route of ROUTES) {
      const path = `${route.bad?.path ?? route.path}?limit=0&cursor=${'x'.repeat(2000)}`;
      const r = await s.get(path, { key: 'sk_wrong' });
      t.equal(r.status, 401, route.name);
      t.equal((r.json() as { error: string }).error, 'unauthorized');
    }
  });

  t.test('422 with the error code for an invalid path parameter', async (t) => {
    for (const route of ROUTES.filter((r) => r.bad)) {
      const r = await s.get(route.bad!.path);
      t.equal(r.status, 422, route.name);
      const body = r.json() as { error: string; message: string };
      t.equal(body.error, route.bad!.code, route.name);
      t.type(body.message, 'string');
    }
  });

  t.test(
    'as_of: its own 422 code, never a detail list; a release without history refuses every moment',
    async (t) => {
      for (const route of ROUTES.filter((r) => r.name !== 'ping')) {
        for (const query of [
          'as_of=yesterday',
          `as_of=${'2026'.repeat(11)}`,
          'as_of=2026-10-05&as_of=2026-10-06',
          'as_of=2026-10-05',
          // Both refused by the query-string schema: as_of's own code, not the detail list.
          `limit=0&as_of=${'2026'.repeat(11)}`,
        ]) {
          if (query.startsWith('limit') && !route.paged) continue;
          const r = await s.get(`${route.path}?${query}`);
          t.equal(r.status, 422, `${route.name}?${query.slice(0, 30)}`);
          t.equal(
            (r.json() as { error: string }).error,
            'as_of_out_of_range',
            `${route.name}?${query.slice(0, 30)}`,
          );
        }
      }
      const plain = await s.get('/v1/ip/23.228.249.10');
      t.notOk('as_of' in (plain.json() as { coverage: object }).coverage, 'no as_of: no echo');
    },
  );

  t.test('422 detail list for out-of-range query parameters', async (t) => {
    const cases: Array<[string, Array<{ loc: string[]; type: string }>]> = [
      ['limit=0', [{ loc: ['query', 'limit'], type: 'greater_than_equal' }]],
      ['limit=1001', [{ loc: ['query', 'limit'], type: 'less_than_equal' }]],
      ['limit=abc', [{ loc: ['query', 'limit'], type: 'int_parsing' }]],
      ['limit=1.5', [{ loc: ['query', 'limit'], type: 'int_parsing' }]],
      ['limit=-1', [{ loc: ['query', 'limit'], type: 'int_parsing' }]],
      ['limit=', [{ loc: ['query', 'limit'], type: 'int_parsing' }]],
      [`cursor=${'a'.repeat(1025)}`, [{ loc: ['query', 'cursor'], type: 'string_too_long' }]],
      [
        `limit=0&cursor=${'a'.repeat(1025)}`,
        [
          { loc: ['query', 'limit'], type: 'greater_than_equal' },
          { loc: ['query', 'cursor'], type: 'string_too_long' },
        ],
      ],
    ];
    for (const route of ROUTES.filter((r) => r.paged)) {
      for (const [query, expected] of cases) {
        const r = await s.get(`${route.path}?${query}`);
        t.equal(r.status, 422, `${route.name}?${query.slice(0, 20)}`);
        const body = r.json() as { detail: Array<{ loc: string[]; msg: string; type: string }> };
        t.same(
          body.detail.map((d) => ({ loc: d.loc, type: d.type })),
          expected,
          `${route.name}?${query.slice(0, 20)} detail`,
        );
        for (const d of body.detail) t.type(d.msg, 'string');
      }
      const ok = await s.get(`${route.path}?limit=1000&cursor=`);
      t.not(ok.status, 422, `${route.name}: limit=1000 is in range`);
    }
    const r = await s.get('/v1/ip/23.228.249.10/domains?include_ended=maybe');
    t.equal(r.status, 422);
    t.same(
      (r.json() as { detail: Array<{ loc: string[]; type: string }> }).detail.map((d) => [d.loc, d.type]),
      [[['query', 'include_ended'], 'bool_parsing']],
    );
    for (const value of ['true', 'false', 'TRUE']) {
      t.equal((await s.get(`/v1/ip/23.228.249.10/domains?include_ended=${value}`)).status, 200, value);
    }
  });

  t.test('404 {detail: "Not Found"} for unknown paths, with or without a key', async (t) => {
    for (const path of ['/', '/v1', '/v2/ip/1.1.1.1', '/v1/ip', '/v1/ip/1.1.1.1/whois', '/mcpx']) {
      for (const key of [s.key, null]) {
        const r = await s.get(path, { key });
        t.equal(r.status, 404, path);
        t.same(r.json(), { detail: 'Not Found' });
        t.match(r.headers['x-request-id'], UUID);
      }
    }
  });

  t.test('a malformed URL is 400 {detail} with X-Request-ID', async (t) => {
    const r = await s.get('/v1/ip/%zz');
    t.equal(r.status, 400);
    t.match((r.json() as { detail: string }).detail, /malformed percent-encoding/);
    t.match(r.headers['x-request-id'], UUID);
  });

  t.test('405 {detail: "Method Not Allowed"} with Allow: GET, HEAD for other methods', async (t) => {
    const paths = [...ROUTES.map((r) => r.path), '/health', '/v1/openapi.json', '/llms-full.txt'];
    for (const path of paths) {
      for (const method of ['POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
        const r = await s.get(path, {
          method,
          headers: method === 'POST' ? { 'content-type': 'application/x-unknown' } : {},
        });
        t.equal(r.status, 405, `${method} ${path}`);
        t.equal(r.headers.allow, 'GET, HEAD');
        t.same(r.json(), { detail: 'Method Not Allowed' });
      }
    }
  });

  t.test('a trailing slash redirects (308) to the path without it, query kept', async (t) => {
    const cases: Array<[string, string]> = [
      ['/v1/ping/', '/v1/ping'],
      [
        '/v1/ip/23.228.249.10/domains/?limit=5&include_ended=true',
        '/v1/ip/23.228.249.10/domains?limit=5&include_ended=true',
      ],
      ['/health//', '/health'],
      ['/v1/unknown/', '/v1/unknown'],
    ];
    for (const [from, to] of cases) {
      const r = await s.get(from, { key: null });
      t.equal(r.status, 308, from);
      t.equal(r.headers.location, to, from);
      t.ok(r.headers['x-request-id']);
    }
    const open = await s.get('//evil.example/', { key: null });
    t.not(open.status, 308, 'no protocol-relative redirect');
  });

  t.test('X-Request-ID: a sane incoming id is echoed, anything else replaced', async (t) => {
    const sane = 'req-123.abc_DEF:42';
    for (const [path, key] of [
      ['/v1/ping', s.key],
      ['/v1/ping', null],
      ['/nowhere', null],
      ['/health', null],
    ] as Array<[string, string | null]>) {
      const r = await s.get(path, { key, headers: { 'x-request-id': sane } });
      t.equal(r.headers['x-request-id'], sane, path);
    }
    for (const bad of ['has space', 'x'.repeat(200), 'semi;colon', '']) {
      const r = await s.get('/v1/ping', { headers: { 'x-request-id': bad } });
      t.match(r.headers['x-request-id'], UUID, JSON.stringify(bad.slice(0, 10)));
    }
  });

  t.test('browser origins: 403 for foreign ones, CORS for the console', async (t) => {
    for (const route of ROUTES) {
      for (const origin of [
        'https://evil.example',
        'null',
        `${CONSOLE_URL}:8443`,
        'http://console.ipscope.test',
      ]) {
        const r = await s.get(route.path, { headers: { origin } });
        t.equal(r.status, 403, `${route.name} from ${origin}`);
        t.same(r.json(), { detail: 'Forbidden' });
        t.notOk(r.headers['access-control-allow-origin']);
      }
      const ok = await s.get(route.path, { headers: { origin: CONSOLE_URL } });
      t.equal(ok.status, 200, `${route.name} from the console`);
      t.equal(ok.headers['access-control-allow-origin'], CONSOLE_URL);
      t.match(ok.headers['access-control-expose-headers'], /X-Request-ID/);
      t.match(ok.headers['access-control-expose-headers'], /X-RateLimit-Remaining/);
      t.match(ok.headers['access-control-expose-headers'], /X-Quota-Remaining/);
      t.match(ok.headers['access-control-expose-headers'], /Retry-After/);
      t.match(ok.headers.vary, /Origin/);
      const unauthorized = await s.get(route.path, { key: null, headers: { origin: CONSOLE_URL } });
      t.equal(unauthorized.status, 401);
      t.equal(unauthorized.headers['access-control-allow-origin'], CONSOLE_URL, 'CORS on errors too');

      const preflight = await s.get(route.path, {
        key: null,
        method: 'OPTIONS',
        headers: {
          origin: CONSOLE_URL,
          'access-control-request-method': 'GET',
          'access-control-request-headers': 'authorization',
        },
      });
      t.equal(preflight.status, 204, `${route.name} preflight`);
      t.equal(preflight.headers['access-control-allow-origin'], CONSOLE_URL);
      t.match(preflight.headers['access-control-allow-methods'], 'GET');
      t.match(preflight.headers['access-control-allow-headers'], /Authorization/);
      t.match(preflight.headers['access-control-allow-headers'], /Content-Type/);
      const foreign = await s.get(route.path, {
        key: null,
        method: 'OPTIONS',
        headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
      });
      t.equal(foreign.status, 403, `${route.name} foreign preflight`);
    }
    const health = await s.get('/health', { key: null, headers: { origin: 'https://evil.example' } });
    t.equal(health.status, 200, '/health is not an API call');
  });

  t.test('logs: one line per request, keys and Authorization never logged', async (t) => {
    const secret = 'sk_ThisMustNotBeLogged000000000000';
    await s.get(`/v1/ping?api_key=${secret}&x=1&TOKEN=${secret}`);
    await s.get(`/v1/ping?x=2`);
    const line = s.logs
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .find((l) => l.url === '/v1/ping?x=2');
    t.ok(line, 'request line logged');
    t.equal(line?.method, 'GET');
    t.equal(line?.statusCode, 200);
    t.type(line?.responseTime, 'number');
    t.type(line?.reqId, 'string');
    const redacted = s.logs.find((l) => l.includes('&x=1&'));
    t.match(redacted, 'api_key=REDACTED&x=1&TOKEN=REDACTED', 'URL logged with the keys redacted');
    const all = s.logs.join('\n');
    t.notMatch(all, secret);
    t.notMatch(all, s.key);
    t.notMatch(all, /"authorization"|Bearer/i, 'no headers logged');
  });
});

t.test('without a release: lookups 503 release_unavailable, /health healthy', async (t) => {
  const s = await startTestServer(t, { release: false });
  for (const route of ROUTES.filter((r) => r.name !== 'ping')) {
    const r = await s.get(route.path);
    t.equal(r.status, 503, route.name);
    t.same(r.json(), { error: 'release_unavailable', message: ERROR_TABLE.release_unavailable.message });
  }
  t.equal((await s.get('/v1/ping')).status, 200, 'ping needs no release');
  const bogon = await s.get('/v1/ip/192.168.1.1');
  t.equal(bogon.status, 200, 'a bogon answers without a release');
  t.same(bogon.json(), {
    is_bogon: true,
    bogon: { prefix: '192.168.0.0/16', name: 'Private-Use', rfc: 'RFC 1918' },
  });
  const health = await s.get('/health', { key: null });
  t.equal(health.status, 200);
  const body = health.json() as {
    status: string;
    checks: Record<string, string>;
    release: { status: string; id: null; error: string };
  };
  t.equal(body.status, 'healthy');
  t.same(body.checks, { database: 'ok', cache: 'ok', release: 'error' });
  t.equal(body.release.status, 'unavailable');
  t.equal(body.release.id, null);
  t.match(body.release.error, /CURRENT does not exist/);
});

t.test('an unexpected failure is 500 internal_error and logged', async (t) => {
  const s = await startTestServer(t, {
    releases: {
      current() {
        throw new Error('disk on fire');
      },
      health: () => ({ status: 'unavailable', id: null, built_at: null, age_seconds: null }),
    },
  });
  const r = await s.get('/v1/domain/example.com/history');
  t.equal(r.status, 500);
  t.same(r.json(), { error: 'internal_error', message: ERROR_TABLE.internal_error.message });
  const logged = s.logs.map((l) => JSON.parse(l) as { level: number; err?: { message: string } });
  t.ok(
    logged.some((l) => l.level >= 50 && l.err?.message === 'disk on fire'),
    'error logged with its cause',
  );
});

t.test('/health is 503 unhealthy when the accounts database does not answer', async (t) => {
  const s = await startTestServer(t, {
    accounts: {
      verifyKey: async () => null,
      ping: async () => {
        throw new Error('database is locked');
      },
    },
  });
  const r = await s.get('/health', { key: null });
  t.equal(r.status, 503);
  const body = r.json() as { status: string; checks: Record<string, string>; release: { status: string } };
  t.equal(body.status, 'unhealthy');
  t.same(body.checks, { database: 'error', cache: 'ok', release: 'ok' });
  t.equal(body.release.status, 'ok');
});
