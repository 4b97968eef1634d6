/**
 * The domain queries on the demo release, with exact values: ip_domains, domain_history and
 * domain_hosting, their paging, cursors and the errors each raises.
 */
import t from 'tap';
import { domainHistory, domainHosting, ipDomains, type Release } from '../../shared/queries/index.js';
import { openDemoQueries, epoch, refused } from '../helpers/query-release.js';

const { release } = openDemoQueries(t);

t.test('ip_domains: current intervals by default, ended ones on request, oldest first', async (t) => {
  const current = ipDomains(release, { ip: '151.101.1.195', includeEnded: false, limit: 100 });
  t.same(
    current.items.map((i) => [i.domain, i.first_observed, i.current]),
    [
      ['garden.example', '2026-10-01T00:11:20Z', true],
      ['www.garden.example', '2026-10-01T00:11:30Z', true],
      ['news.example', '2026-10-15T00:01:20Z', true],
      ['www.news.example', '2026-10-15T00:01:30Z', true],
    ],
  );
  const all = ipDomains(release, { ip: '151.101.1.195', includeEnded: true, limit: 100 });
  t.equal(all.include_ended, true);
  t.same(all.items[0], {
    domain: 'news.example',
    record_type: 'A',
    first_observed: '2026-10-01T00:01:20Z',
    last_confirmed: '2026-10-01T00:01:20Z',
    ended_at: '2026-10-08T00:01:20Z',
    current: false,
  });
  t.equal(all.items.length, 6);
  t.equal(all.next_cursor, null);
});

t.test(
  'ip_domains: keyset pages cover every item once; cursors are bound to query and release',
  async (t) => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = ipDomains(release, { ip: '104.16.132.229', includeEnded: true, limit: 3, cursor });
      seen.push(...page.items.map((i) => i.domain));
      cursor = page.next_cursor ?? undefined;
      t.ok(cursor === undefined || cursor.length <= 1024);
      pages++;
    } while (cursor);
    t.equal(pages, 5, '14 items in pages of 3');
    t.equal(seen.length, 14);
    t.equal(new Set(seen).size, 14);
    const first = ipDomains(release, { ip: '104.16.132.229', includeEnded: true, limit: 3 });
    const c = first.next_cursor!;
    refused(
      t,
      () => ipDomains(release, { ip: '104.16.132.229', includeEnded: false, limit: 3, cursor: c }),
      'invalid_cursor',
      400,
    );
    refused(
      t,
      () => ipDomains(release, { ip: '151.101.1.195', includeEnded: true, limit: 3, cursor: c }),
      'invalid_cursor',
      400,
    );
    refused(
      t,
      () => domainHistory(release, { domain: 'news.example', limit: 3, cursor: c }),
      'invalid_cursor',
      400,
    );
    refused(
      t,
      () =>
        ipDomains(release, { ip: '104.16.132.229', includeEnded: true, limit: 3, cursor: 'not a cursor' }),
      'invalid_cursor',
      400,
    );
    refused(
      t,
      () =>
        ipDomains(release, { ip: '104.16.132.229', includeEnded: true, limit: 3, cursor: c.slice(0, -3) }),
      'invalid_cursor',
      400,
    );
    const other = { ...release, id: '20991231T000000Z' } as Release;
    refused(
      t,
      () => ipDomains(other, { ip: '104.16.132.229', includeEnded: true, limit: 3, cursor: c }),
      'cursor_expired',
      410,
    );
  },
);

t.test('ip_domains: refusals', async (t) => {
  refused(
    t,
    () => ipDomains(release, { ip: '192.168.1.1', includeEnded: false, limit: 1 }),
    'non_public_ip',
    422,
  );
  refused(t, () => ipDomains(release, { ip: '::1', includeEnded: false, limit: 1 }), 'non_public_ip', 422);
  refused(
    t,
    () => ipDomains(release, { ip: '1.1.1.0/24', includeEnded: false, limit: 1 }),
    'invalid_ip',
    422,
  );
  refused(
    t,
    () => ipDomains(null, { ip: '1.1.1.1', includeEnded: false, limit: 1 }),
    'release_unavailable',
    503,
  );
});

t.test('domain_history: normalised name, current states and intervals, paged', async (t) => {
  const now = epoch('2026-10-23T00:00:00Z');
  const page1 = domainHistory(release, { domain: 'NEWS.example.', limit: 3 }, now);
  t.equal(page1.domain, 'news.example');
  t.equal(page1.observed, true);
  t.same(page1.current[0], {
    record_type: 'A',
    outcome: 'positive',
    outcome_class: 'positive',
    values: ['151.101.1.195', '151.101.65.195'],
    cnames: [],
    last_observed: '2026-10-22T00:01:20Z',
    last_confirmed: '2026-10-22T00:01:20Z',
    last_positive: '2026-10-22T00:01:20Z',
    age_seconds: 86320,
    stale: false,
    stale_reason: null,
  });
  t.same(page1.intervals[0], {
    record_type: 'A',
    value: '151.101.1.195',
    first_observed: '2026-10-01T00:01:20Z',
    last_confirmed: '2026-10-01T00:01:20Z',
    ended_at: '2026-10-08T00:01:20Z',
    current: false,
  });
  const page2 = domainHistory(release, { domain: 'news.example', limit: 3, cursor: page1.next_cursor! }, now);
  const page3 = domainHistory(release, { domain: 'news.example', limit: 3, cursor: page2.next_cursor! }, now);
  t.equal(page3.next_cursor, null);
  const all = [...page1.intervals, ...page2.intervals, ...page3.intervals];
  t.equal(all.length, 8);
  t.equal(all.filter((i) => i.ended_at !== null).length, 5);
  t.same(
    all.filter((i) => i.current).map((i) => i.value),
    ['151.101.1.195', '151.101.65.195', '2a04:4e42::323'],
  );
});

t.test('domain_history: staleness reasons and outcome classes', async (t) => {
  const later = epoch('2026-11-01T00:00:00Z');
  const news = domainHistory(release, { domain: 'news.example', limit: 1 }, later);
  t.same([news.current[0]?.stale, news.current[0]?.stale_reason], [true, 'older_than_seven_days']);
  const flaky = domainHistory(release, { domain: 'flaky.example', limit: 10 }, later);
  t.same(
    flaky.current.map((c) => [c.record_type, c.outcome, c.outcome_class, c.last_confirmed, c.stale_reason]),
    [
      ['A', 'servfail', 'transient', null, 'never_confirmed'],
      ['AAAA', 'timeout', 'transient', null, 'never_confirmed'],
    ],
  );
  const gone = domainHistory(release, { domain: 'gone.example', limit: 10 }, epoch('2026-10-23T00:00:00Z'));
  t.same(
    gone.current.map((c) => [c.outcome, c.outcome_class, c.stale]),
    [
      ['nxdomain', 'negative', false],
      ['nxdomain', 'negative', false],
    ],
  );
  const www = domainHistory(release, { domain: 'www.example.com', limit: 10 });
  t.same(www.current[0]?.cnames, ['d111111abcdef8.cloudfront.net']);
});

t.test('domain_history: a name outside the resolved set', async (t) => {
  const r = domainHistory(release, { domain: 'not-in-seed.example.org', limit: 10 });
  t.same(
    { observed: r.observed, current: r.current, intervals: r.intervals, next_cursor: r.next_cursor },
    { observed: false, current: [], intervals: [], next_cursor: null },
  );
  t.equal(domainHistory(release, { domain: 'bücher.example', limit: 1 }).domain, 'xn--bcher-kva.example');
  for (const domain of ['https://example.com', 'example.com/path', 'localhost', '', 'a..b', '1.2.3.4']) {
    refused(t, () => domainHistory(release, { domain, limit: 1 }), 'invalid_domain', 422);
  }
});

t.test('domain_hosting: runs per network, a return starts a new run', async (t) => {
  const r = domainHosting(release, { domain: 'news.example' });
  t.equal(r.truncated, false);
  t.same(
    r.hosting.map((h) => [h.asn, h.as_name, h.provider, h.category, h.addresses, h.record_types, h.current]),
    [
      [54113, 'Fastly, Inc.', 'Fastly', 'cdn', 3, ['A', 'AAAA'], false],
      [133119, 'China Unicom IP network', 'AWS', 'cdn', 1, ['A'], false],
      [16509, 'Amazon.com, Inc.', 'AWS', 'cdn', 1, ['AAAA'], false],
      [54113, 'Fastly, Inc.', 'Fastly', 'cdn', 3, ['A', 'AAAA'], true],
    ],
  );
  t.same(r.hosting[0], {
    public: true,
    asn: 54113,
    as_name: 'Fastly, Inc.',
    provider: 'Fastly',
    category: 'cdn',
    addresses: 3,
    record_types: ['A', 'AAAA'],
    first_observed: '2026-10-01T00:01:20Z',
    last_confirmed: '2026-10-01T00:01:25Z',
    ended_at: '2026-10-08T00:01:25Z',
    current: false,
  });
  t.same(domainHosting(release, { domain: 'unknown.example.org' }).hosting, []);
  refused(t, () => domainHosting(release, { domain: 'nodot' }), 'invalid_domain', 422);
});
