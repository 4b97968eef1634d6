/**
 * The time fence of the interval lists (docs/api.md#paging): `from`, `to` and `strict` on
 * GET /v1/domain/{domain}/history and GET /v1/ip/{ip}/domains, and the same arguments over MCP, on
 * the demo release. news.example answered three addresses from 2026-10-01 (ended 10-08), two others
 * from 10-08 (ended 10-15), and the first three again from 10-15 (current, last seen 10-22).
 */
import t from 'tap';
import { MODERN, modernToolCall } from '../helpers/mcp-calls.js';
import { startTestServer } from '../helpers/test-server.js';

interface Interval {
  value: string;
  first_observed: string;
  last_confirmed: string;
}

const history = (body: unknown) =>
  (body as { intervals: Interval[] }).intervals.map((i) => `${i.value} ${i.first_observed.slice(5, 10)}`);

t.test('domain history: overlapping the window, or wholly inside it', async (t) => {
  const s = await startTestServer(t);
  const ask = async (query: string) => {
    const r = await s.get(`/v1/domain/news.example/history?${query}`);
    t.equal(r.status, 200, query);
    return history(r.json());
  };
  t.same(await ask('from=2026-10-08&to=2026-10-08T23:59:59Z'), [
    '120.52.22.100 10-08',
    '2600:9000:3002:5c00:1f:e2b0:8dc0:93a1 10-08',
  ]);
  t.same(
    await ask('to=2026-10-01T00:01:20Z'),
    ['151.101.1.195 10-01', '151.101.65.195 10-01'],
    'first seen at or before to (the AAAA five seconds later is not)',
  );
  t.same(await ask('from=2026-10-05&to=2026-10-20'), [
    '120.52.22.100 10-08',
    '2600:9000:3002:5c00:1f:e2b0:8dc0:93a1 10-08',
    '151.101.1.195 10-15',
    '151.101.65.195 10-15',
    '2a04:4e42::323 10-15',
  ]);
  t.same(
    await ask('from=2026-10-05&to=2026-10-20&strict=true'),
    ['120.52.22.100 10-08', '2600:9000:3002:5c00:1f:e2b0:8dc0:93a1 10-08'],
    'strict: the current ones were last seen after to',
  );
  t.same((await ask('from=2026-10-23')).length, 0, 'nothing seen after the last round');
});

t.test('paging a fenced list: the cursor belongs to the fence', async (t) => {
  const s = await startTestServer(t);
  const fence = 'from=2026-10-05&to=2026-10-20';
  const pages: string[] = [];
  let cursor: string | null = null;
  do {
    const r = await s.get(
      `/v1/domain/news.example/history?${fence}&limit=2${cursor ? `&cursor=${cursor}` : ''}`,
    );
    t.equal(r.status, 200);
    const body = r.json() as { intervals: Interval[]; next_cursor: string | null };
    pages.push(...history(body));
    cursor = body.next_cursor;
  } while (cursor !== null);
  t.same(pages, [
    '120.52.22.100 10-08',
    '2600:9000:3002:5c00:1f:e2b0:8dc0:93a1 10-08',
    '151.101.1.195 10-15',
    '151.101.65.195 10-15',
    '2a04:4e42::323 10-15',
  ]);
  const unfenced = (await s.get('/v1/domain/news.example/history?limit=2')).json() as {
    next_cursor: string;
  };
  const r = await s.get(`/v1/domain/news.example/history?${fence}&limit=2&cursor=${unfenced.next_cursor}`);
  t.equal(r.status, 400);
  t.equal((r.json() as { error: string }).error, 'invalid_cursor', 'a cursor of another fence');
});

t.test('reverse IP: the same fence', async (t) => {
  const s = await startTestServer(t);
  const ask = async (query: string) => {
    const r = await s.get(`/v1/ip/151.101.1.195/domains?include_ended=true&${query}`);
    t.equal(r.status, 200, query);
    return (r.json() as { items: Array<{ domain: string; first_observed: string }> }).items.map(
      (i) => `${i.domain} ${i.first_observed.slice(5, 10)}`,
    );
  };
  t.same(await ask('to=2026-10-07'), [
    'news.example 10-01',
    'www.news.example 10-01',
    'garden.example 10-01',
    'www.garden.example 10-01',
  ]);
  t.same(await ask('from=2026-10-02&to=2026-10-14'), ['garden.example 10-01', 'www.garden.example 10-01']);
  t.same(await ask('from=2026-10-01&to=2026-10-07&strict=true'), [
    'news.example 10-01',
    'www.news.example 10-01',
  ]);
  const current = await s.get('/v1/ip/151.101.1.195/domains?from=2026-10-16');
  t.same(
    (current.json() as { items: Array<{ domain: string }> }).items.map((i) => i.domain),
    ['garden.example', 'www.garden.example', 'news.example', 'www.news.example'],
    'without include_ended: the current ones seen in the window',
  );
});

t.test('a moment that is not one, or a window that ends before it starts: 422 detail', async (t) => {
  const s = await startTestServer(t);
  const cases: Array<[string, string[]]> = [
    ['from=2026-13-01', ['query', 'from']],
    ['from=2026-02-30', ['query', 'from']],
    ['to=yesterday', ['query', 'to']],
    ['from=2026-10-05&to=2026-10-01', ['query', 'to']],
  ];
  for (const [query, loc] of cases) {
    const r = await s.get(`/v1/domain/news.example/history?${query}`);
    t.equal(r.status, 422, query);
    const detail = (r.json() as { detail: Array<{ loc: string[]; msg: string; type: string }> }).detail;
    t.same(
      detail.map((d) => d.loc),
      [loc],
      `${query}: ${detail[0]?.msg}`,
    );
  }
});

t.test('MCP: the same arguments, the same JSON', async (t) => {
  const s = await startTestServer(t);
  const call = modernToolCall('domain_history', {
    domain: 'news.example',
    from: '2026-10-05',
    to: '2026-10-20',
    strict: true,
  });
  const r = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${s.key}`,
      ...call.headers,
    },
    body: call.body,
  });
  const body = (await r.json()) as { result: { structuredContent: unknown } };
  const rest = await s.get('/v1/domain/news.example/history?from=2026-10-05&to=2026-10-20&strict=true');
  t.same(history(body.result.structuredContent), history(rest.json()), `${MODERN}: the REST answer`);
  const bad = modernToolCall('domain_history', { domain: 'news.example', from: 'soon' });
  const refused = await fetch(`${s.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      authorization: `Bearer ${s.key}`,
      ...bad.headers,
    },
    body: bad.body,
  });
  t.match(
    JSON.stringify(await refused.json()),
    /Error executing tool domain_history: invalid_arguments: from: Input should be an ISO 8601/,
  );
});
