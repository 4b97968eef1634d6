/**
 * The as-of queries of the DNS lookups (domain_hosting, domain_history, ip_domains) as of an older
 * epoch, on the release of test/helpers/as-of-release.ts; the others and the edges:
 * queries-as-of.test.ts.
 */
import t from 'tap';
import { domainHistoryAsOf, domainHostingAsOf, ipDomainsAsOf } from '../../shared/queries/index.js';
import {
  E1,
  OLD_ATTRIBUTION,
  OLD_COVERAGE,
  OLD_T,
  at,
  iso,
  openHistoryRelease,
} from '../helpers/as-of-release.js';
import { refused } from '../helpers/query-release.js';

const { release, now: NOW } = openHistoryRelease(t);

t.test('domain_hosting as of the older epoch: its runs, their AS names then', async (t) => {
  t.same(domainHostingAsOf(release, { domain: 'example.com' }, OLD_T, NOW), {
    domain: 'example.com',
    hosting: [
      {
        public: true,
        asn: 16509,
        as_name: 'AMAZON-OLD',
        provider: 'AWS',
        category: 'cdn',
        addresses: 2,
        record_types: ['A'],
        first_observed: iso(1790812800),
        last_confirmed: iso(E1.roundTo),
        ended_at: null,
        current: true,
      },
    ],
    truncated: false,
    coverage: { ...OLD_COVERAGE, as_of: OLD_T },
    attribution: OLD_ATTRIBUTION,
    release: release.release,
  });
  t.match(domainHostingAsOf(release, { domain: 'example.org' }, OLD_T, NOW), {
    hosting: [],
    truncated: false,
  });
});

t.test('domain_history as of the older epoch: states then, intervals as they stood', async (t) => {
  const T = at(OLD_T);
  const page = domainHistoryAsOf(release, { domain: 'example.com', limit: 2 }, OLD_T, NOW);
  t.same(page.current, [
    {
      record_type: 'A',
      outcome: 'positive',
      outcome_class: 'positive',
      values: ['104.16.132.229'],
      cnames: [],
      last_observed: iso(E1.roundTo),
      last_confirmed: iso(E1.roundTo),
      last_positive: iso(1790813001),
      age_seconds: T - E1.roundTo,
      stale: true,
      stale_reason: 'older_than_seven_days',
    },
  ]);
  // Its three demo intervals were first seen before the cut and open then: last confirmed at the
  // type's last_positive (AAAA has no state then: capped at the cut).
  t.same(page.intervals, [
    {
      record_type: 'A',
      value: '23.228.249.10',
      first_observed: iso(1790812800),
      last_confirmed: iso(1790813001),
      ended_at: null,
      current: true,
    },
    {
      record_type: 'A',
      value: '23.228.249.76',
      first_observed: iso(1790812800),
      last_confirmed: iso(1790813001),
      ended_at: null,
      current: true,
    },
  ]);
  const rest = domainHistoryAsOf(
    release,
    { domain: 'example.com', limit: 2, cursor: page.next_cursor! },
    OLD_T,
    NOW,
  );
  t.match(rest.intervals, [{ record_type: 'AAAA', last_confirmed: iso(E1.cut), current: true }]);
  t.equal(rest.intervals.length, 1);
  t.equal(rest.next_cursor, null);
  // A name without states then: not observed.
  t.match(domainHistoryAsOf(release, { domain: 'example.org', limit: 2 }, OLD_T, NOW), {
    observed: false,
    current: [],
    intervals: [],
  });
  // The fence reads the intervals as they stood: last confirmed 1790813001, not the newest value.
  const fenced = domainHistoryAsOf(
    release,
    {
      domain: 'example.com',
      limit: 10,
      fence: { firstAfter: null, firstBefore: null, lastAfter: null, lastBefore: 1790813001 },
    },
    OLD_T,
    NOW,
  );
  t.equal(fenced.intervals.length, 2);
});

t.test("ip_domains as of the older epoch: the epoch's intervals in the epoch's order", async (t) => {
  const all = ipDomainsAsOf(release, { ip: '104.16.132.229', includeEnded: true, limit: 100 }, OLD_T, NOW);
  // First seen by the cut (1790813100): the two of one instant in the epoch's rank order, then
  // the demo's seven; example.net's ended after the cut, so it was open then.
  t.same(
    all.items.map((i) => [i.domain, i.last_confirmed, i.ended_at]),
    [
      ['example.net', iso(E1.roundTo), null],
      ['example.com', iso(1790813001), null],
      ['blog.example', iso(1790813100), null],
      ['www.blog.example', iso(E1.roundTo), null],
      ['forum.example', iso(E1.roundTo), null],
      ['www.forum.example', iso(E1.roundTo), null],
      ['wiki.example', iso(E1.roundTo), null],
      ['www.wiki.example', iso(E1.roundTo), null],
      ['docs.example', iso(E1.roundTo), null],
    ],
  );
  t.equal(all.next_cursor, null);
  t.match(all, { coverage: { as_of: OLD_T }, attribution: OLD_ATTRIBUTION });
  // One at a time through the instant shared by two names, and on.
  const names: string[] = [];
  let cursor: string | undefined;
  for (let pages = 0; pages < 20; pages++) {
    const page = ipDomainsAsOf(
      release,
      { ip: '104.16.132.229', includeEnded: false, limit: 1, cursor },
      OLD_T,
      NOW,
    );
    names.push(...page.items.map((i) => i.domain));
    if (page.next_cursor === null) break;
    cursor = page.next_cursor;
  }
  t.same(
    names,
    all.items.map((i) => i.domain),
  );
  const two = ipDomainsAsOf(release, { ip: '104.16.132.229', includeEnded: false, limit: 2 }, OLD_T, NOW);
  t.same(
    two.items.map((i) => i.domain),
    ['example.net', 'example.com'],
  );
  const fenced = ipDomainsAsOf(
    release,
    {
      ip: '104.16.132.229',
      includeEnded: false,
      limit: 100,
      fence: { firstAfter: 1790813040, firstBefore: null, lastAfter: null, lastBefore: 1790813100 },
    },
    OLD_T,
    NOW,
  );
  t.same(
    fenced.items.map((i) => i.domain),
    ['blog.example'],
  );
  refused(
    t,
    () => ipDomainsAsOf(release, { ip: '10.0.0.1', includeEnded: false, limit: 1 }, OLD_T, NOW),
    'non_public_ip',
    422,
  );
});
