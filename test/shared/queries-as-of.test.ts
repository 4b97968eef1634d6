/**
 * The as-of queries (shared/queries/as-of/, docs/api.md#as-of-a-past-moment) on a copy of the demo
 * release given a history by hand (test/helpers/as-of-release.ts): an older epoch with small,
 * exact rows, and the release itself as the newest. Epoch resolution and its edges, each lookup as
 * of the older epoch with every value, the newest epoch as the current answer, cursors bound to
 * the moment.
 */
import t from 'tap';
import {
  domainHistory,
  domainHistoryAsOf,
  domainHosting,
  domainHostingAsOf,
  ipDomains,
  ipDomainsAsOf,
  lookupAsn,
  lookupAsnAsOf,
  lookupIp,
  lookupIpAsOf,
  resolveAsOf,
} from '../../shared/queries/index.js';
import {
  E1,
  OLD_ATTRIBUTION,
  OLD_COVERAGE,
  OLD_T,
  SOURCE_DATE_1,
  at,
  iso,
  openHistoryRelease,
} from '../helpers/as-of-release.js';
import { refused } from '../helpers/query-release.js';

const { release, now: NOW } = openHistoryRelease(t);

t.test('epoch resolution: the newest epoch built at or before the moment', async (t) => {
  t.equal(resolveAsOf(release, E1.built, NOW).epoch.epoch, 1, 'at the older epoch built_at');
  t.equal(resolveAsOf(release, '2026-10-10', NOW).epoch.epoch, 1, 'a date: its first second');
  t.equal(resolveAsOf(release, '2026-10-10', NOW).blocks.coverage.as_of, '2026-10-10T00:00:00Z');
  t.equal(resolveAsOf(release, release.builtAtEpoch - 1, NOW).epoch.epoch, 1, 'just before the newest');
  const newest = resolveAsOf(release, release.builtAt, NOW);
  t.equal(newest.epoch.epoch, 2);
  t.ok(newest.newest);
  t.equal(resolveAsOf(release, NOW, NOW).epoch.epoch, 2, 'now');
  t.equal(resolveAsOf(release, '2026-10-11T14:00:00+02:00', NOW).at, at(OLD_T), 'an offset');
  const old = resolveAsOf(release, OLD_T, NOW);
  t.same(old.blocks, {
    coverage: { ...OLD_COVERAGE, as_of: OLD_T },
    attribution: OLD_ATTRIBUTION,
    release: release.release,
  });
  t.equal(
    resolveAsOf(release, OLD_T, NOW).blocks.coverage,
    old.blocks.coverage,
    'one moment, one blocks object',
  );
});

t.test('as_of out of range: malformed, in the future, before the oldest epoch', async (t) => {
  for (const bad of [
    'yesterday',
    '2026-02-30',
    '2026-10-10T25:00:00Z',
    '',
    '2026-10-10T00:00:00Z'.repeat(3),
    1.5,
  ]) {
    refused(t, () => lookupIpAsOf(release, { ip: '8.8.8.8' }, bad, NOW), 'as_of_out_of_range', 422);
  }
  refused(t, () => lookupIpAsOf(release, { ip: '8.8.8.8' }, NOW + 1, NOW), 'as_of_out_of_range', 422);
  refused(t, () => lookupIpAsOf(release, { ip: '8.8.8.8' }, E1.built - 1, NOW), 'as_of_out_of_range', 422);
  refused(t, () => lookupIpAsOf(release, { ip: '8.8.8.8' }, '2026-10-09', NOW), 'as_of_out_of_range', 422);
  try {
    domainHostingAsOf(release, { domain: 'example.com' }, '2026-10-09', NOW);
  } catch (err) {
    t.equal(
      (err as Error).message,
      `as_of "2026-10-09" is before the oldest release kept: send an ISO 8601 date or timestamp in UTC from 2026-10-10T00:00:00Z (the oldest release kept) to now (${iso(NOW)})`,
    );
  }
  for (const fn of [
    () => ipDomainsAsOf(release, { ip: '104.16.132.229', includeEnded: false, limit: 1 }, 'x', NOW),
    () => domainHistoryAsOf(release, { domain: 'example.com', limit: 1 }, 'x', NOW),
    () => lookupAsnAsOf(release, { asn: '13335', limit: 1 }, 'x', NOW),
  ])
    refused(t, fn, 'as_of_out_of_range', 422);
  // The thing looked up is checked first, as without as_of.
  refused(t, () => lookupIpAsOf(release, { ip: '1.2.3.0/24' }, 'x', NOW), 'invalid_ip', 422);
  refused(t, () => lookupIpAsOf(null, { ip: '8.8.8.8' }, OLD_T, NOW), 'release_unavailable', 503);
});

t.test('lookup_ip as of the older epoch: every field from its rows', async (t) => {
  t.same(lookupIpAsOf(release, { ip: '104.16.132.229' }, OLD_T, NOW), {
    ip: '104.16.132.229',
    asn: {
      asn: 13335,
      route: '104.16.0.0/16',
      descr: 'CLOUDFLARE-OLD',
      country: 'GB',
      source: 'iptoasn',
      category: 'hosting',
      category_source: 'external',
      network_role: null,
    },
    is_datacenter: null,
    is_cdn: true,
    provider: 'Cloudflare',
    prefix: '104.16.0.0/12',
    provider_ranges: [
      {
        prefix: '104.16.0.0/12',
        provider: 'Cloudflare',
        category: 'cdn',
        metadata: { service: 'old' },
        first_seen: '2026-09-01T00:00:00Z',
        last_seen: iso(SOURCE_DATE_1),
      },
    ],
    ptr: {
      names: ['edge.example.'],
      status: 'ok',
      checked_at: iso(E1.roundTo),
      last_confirmed: iso(1790000000),
    },
    domains: {
      current_count: 9,
      sample: ['example.net', 'example.com'],
      first_observed: iso(1790813000),
      last_confirmed: iso(E1.roundTo),
    },
    is_bogon: false,
    bogon: null,
    coverage: { ...OLD_COVERAGE, as_of: OLD_T },
    attribution: OLD_ATTRIBUTION,
    release: release.release,
  });
  // An address no row held then: no network, no PTR, no domains.
  const other = lookupIpAsOf(release, { ip: '8.8.8.8' }, OLD_T, NOW);
  t.match(other, { asn: null, provider_ranges: [], ptr: null, domains: { current_count: 0, sample: [] } });
  t.same(
    lookupIpAsOf(release, { ip: '10.0.0.1' }, OLD_T, NOW),
    lookupIp(release, { ip: '10.0.0.1' }),
    'a bogon',
  );
});

t.test('the newest epoch answers as the release, with the as_of echo', async (t) => {
  const T = iso(release.builtAtEpoch + 60);
  const echo = { ...release.coverage, as_of: T };
  const same = (asOf: object, now: object) =>
    t.same(asOf, { ...now, coverage: echo }, (asOf as { ip?: string }).ip ?? 'lookup');
  same(lookupIpAsOf(release, { ip: '104.16.132.229' }, T, NOW), lookupIp(release, { ip: '104.16.132.229' }));
  same(lookupAsnAsOf(release, { asn: '13335', limit: 2 }, T, NOW), {
    ...lookupAsn(release, { asn: '13335', limit: 2 }),
    next_cursor: (lookupAsnAsOf(release, { asn: '13335', limit: 2 }, T, NOW) as { next_cursor: string })
      .next_cursor,
  });
  same(
    domainHostingAsOf(release, { domain: 'example.com' }, T, NOW),
    domainHosting(release, { domain: 'example.com' }),
  );
  const history = domainHistoryAsOf(release, { domain: 'example.com', limit: 100 }, T, NOW);
  same(history, domainHistory(release, { domain: 'example.com', limit: 100 }, at(T)));
  const params = { ip: '104.16.132.229', includeEnded: true, limit: 100 };
  same(ipDomainsAsOf(release, params, T, NOW), ipDomains(release, params));
});

t.test('lookup_asn as of the older epoch: its row, its ranges in page order, paged', async (t) => {
  const first = lookupAsnAsOf(release, { asn: 'AS13335', limit: 2 }, OLD_T, NOW);
  t.match(first, {
    asn: 13335,
    is_bogon: false,
    name: 'CLOUDFLARE-OLD',
    country: 'US',
    category: 'hosting',
    routes: { ipv4: 3, ipv6: 0 },
    ipv4_addresses: 65792,
    providers: [],
    observed: { ips: 1, domains: 9 },
    coverage: { as_of: OLD_T },
  });
  t.same(first.ranges, [
    { first: '1.1.1.0', last: '1.1.1.255', prefixes: ['1.1.1.0/24'] },
    { first: '104.16.0.0', last: '104.16.255.255', prefixes: ['104.16.0.0/16'] },
  ]);
  t.type(first.next_cursor, 'string');
  const second = lookupAsnAsOf(release, { asn: '13335', limit: 2, cursor: first.next_cursor! }, OLD_T, NOW);
  t.same(second.ranges, [{ first: '104.16.0.0', last: '104.16.127.255', prefixes: ['104.16.0.0/17'] }]);
  t.equal(second.next_cursor, null);
  // An AS the epoch did not list: no row, no ranges.
  t.match(lookupAsnAsOf(release, { asn: '15169', limit: 2 }, OLD_T, NOW), {
    name: null,
    ranges: [],
    observed: null,
  });
});

t.test('cursors are bound to as_of', async (t) => {
  const asOf = lookupAsnAsOf(release, { asn: '13335', limit: 2 }, OLD_T, NOW).next_cursor!;
  const plain = lookupAsn(release, { asn: '13335', limit: 2 }).next_cursor!;
  refused(t, () => lookupAsn(release, { asn: '13335', limit: 2, cursor: asOf }), 'invalid_cursor', 400);
  refused(
    t,
    () => lookupAsnAsOf(release, { asn: '13335', limit: 2, cursor: plain }, OLD_T, NOW),
    'invalid_cursor',
    400,
  );
  const another = '2026-10-12T00:00:00Z';
  refused(
    t,
    () => lookupAsnAsOf(release, { asn: '13335', limit: 2, cursor: asOf }, another, NOW),
    'invalid_cursor',
    400,
  );
  // The newest epoch too: its cursors are not the plain query's.
  const T = iso(release.builtAtEpoch + 60);
  const newest = lookupAsnAsOf(release, { asn: '13335', limit: 2 }, T, NOW).next_cursor!;
  refused(t, () => lookupAsn(release, { asn: '13335', limit: 2, cursor: newest }), 'invalid_cursor', 400);
  const p = { ip: '104.16.132.229', includeEnded: false, limit: 1 };
  const ipCursor = ipDomainsAsOf(release, p, T, NOW).next_cursor!;
  refused(t, () => ipDomains(release, { ...p, cursor: ipCursor }), 'invalid_cursor', 400);
  const d = { domain: 'example.com', limit: 1 };
  const dCursor = domainHistoryAsOf(release, d, OLD_T, NOW).next_cursor!;
  refused(t, () => domainHistory(release, { ...d, cursor: dCursor }), 'invalid_cursor', 400);
  refused(
    t,
    () => domainHistoryAsOf(release, { ...d, cursor: dCursor }, another, NOW),
    'invalid_cursor',
    400,
  );
});
