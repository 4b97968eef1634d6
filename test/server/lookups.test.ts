/**
 * The five lookups over HTTP against the demo release: bodies match the published response schemas
 * (shared/api-schemas.ts, the source of /v1/openapi.json), bogons, cursors, long parameters.
 */
import t from 'tap';
import type { z } from 'zod';
import {
  AsnLookup,
  DomainHistoryPage,
  DomainHosting,
  Health,
  IpDomainsPage,
  IpLookup,
  Ping,
} from '../../shared/api-schemas.js';
import { pageLimit } from '../../server/call/page-size.js';
import { startTestServer } from '../helpers/test-server.js';

const CASES: Array<[string, z.ZodType]> = [
  ['/v1/ip/23.228.249.10', IpLookup],
  ['/v1/ip/2600:9000:3001:a400:9:6f0a:3c00:93a1', IpLookup],
  ['/v1/ip/1.1.1.1', IpLookup],
  ['/v1/ip/10.0.0.1', IpLookup],
  ['/v1/ip/23.228.249.10/domains?include_ended=true', IpDomainsPage],
  ['/v1/domain/example.com/history', DomainHistoryPage],
  ['/v1/domain/not-covered.example/history', DomainHistoryPage],
  ['/v1/domain/example.com/hosting', DomainHosting],
  ['/v1/asn/AS13335', AsnLookup],
  ['/v1/asn/64512', AsnLookup],
  ['/v1/ping', Ping],
];

t.test('responses match the schemas of the OpenAPI document', async (t) => {
  const s = await startTestServer(t);
  for (const [path, schema] of CASES) {
    const r = await s.get(path);
    t.equal(r.status, 200, path);
    const parsed = schema.safeParse(r.json());
    t.ok(parsed.success, `${path} matches its schema`, { issues: parsed.error?.issues });
  }
  const health = await s.get('/health', { key: null });
  t.ok(Health.safeParse(health.json()).success, '/health matches its schema');
});

t.test('lookup_ip of a bogon carries is_bogon, the block and nothing else', async (t) => {
  const s = await startTestServer(t);
  const r = await s.get('/v1/ip/::ffff:127.0.0.1');
  t.equal(r.status, 200);
  t.same(r.json(), { is_bogon: true, bogon: { prefix: '127.0.0.0/8', name: 'Loopback', rfc: 'RFC 1122' } });
});

t.test('paging: next_cursor continues, a foreign cursor is 400 invalid_cursor', async (t) => {
  const s = await startTestServer(t);
  const base = '/v1/domain/example.com/history';
  const all = (await s.get(`${base}?limit=1000`)).json() as { intervals: unknown[] };
  t.ok(all.intervals.length > 2, 'enough intervals to page');
  const seen: unknown[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const r = await s.get(`${base}?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
    t.equal(r.status, 200);
    const page = r.json() as { intervals: unknown[]; next_cursor: string | null };
    seen.push(...page.intervals);
    cursor = page.next_cursor;
    pages += 1;
  } while (cursor !== null && pages < 100);
  t.same(seen, all.intervals, 'pages add up to the whole list');

  const first = (await s.get(`${base}?limit=1`)).json() as { next_cursor: string };
  const foreign = await s.get(`/v1/domain/example.net/history?cursor=${first.next_cursor}`);
  t.equal(foreign.status, 400);
  t.equal((foreign.json() as { error: string }).error, 'invalid_cursor');
  const garbage = await s.get(`${base}?cursor=not-a-cursor!`);
  t.equal(garbage.status, 400);
});

t.test('long path parameters reach the query layer (no framework 404)', async (t) => {
  const s = await startTestServer(t);
  const label = 'a'.repeat(63);
  const domain = `${label}.${label}.${label}.example`;
  const r = await s.get(`/v1/domain/${domain}/history`);
  t.equal(r.status, 200);
  t.equal((r.json() as { observed: boolean }).observed, false);
  const tooLong = await s.get(`/v1/domain/${'a'.repeat(300)}.example/hosting`);
  t.equal(tooLong.status, 422);
  t.equal((tooLong.json() as { error: string }).error, 'invalid_domain');
});

t.test('free keys get at most 100 items per page', async (t) => {
  t.equal(pageLimit({ plan: 'free' } as never, 1000), 100);
  t.equal(pageLimit({ plan: 'free' } as never, 20), 20);
  t.equal(pageLimit({ plan: 'pro' } as never, 1000), 1000);
});
