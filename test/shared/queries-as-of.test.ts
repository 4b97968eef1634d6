/**
 * The as-of queries (shared/queries/as-of/, docs/api.md#as-of-a-past-moment) on a copy of the demo
 * release given a history by hand (test/helpers/history-release.ts): an older epoch with small,
 * exact rows, and the release itself as the newest. Epoch resolution and its edges, each lookup as
 * of the older epoch with every value, the newest epoch as the current answer, cursors bound to
 * the moment.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ipKey, parseIp } from '../../shared/ip.js';
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
  openRelease,
  resolveAsOf,
} from '../../shared/queries/index.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { writeHistory } from '../helpers/history-release.js';
import { refused } from '../helpers/query-release.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'queries-as-of-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const demo = copyDemoRelease(path.join(work, 'releases'));
const file = path.join(demo.releasesDir, demo.file);

const key = (text: string) => {
  const ip = parseIp(text)!;
  return ipKey(ip.version, ip.value);
};
const iso = (s: number) => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
const at = (text: string) => Date.parse(text) / 1000;

/** The older epoch: built 2026-10-10, its DNS cut and last round in the first demo round. */
const E1 = { built: at('2026-10-10T00:00:00Z'), cut: 1790813100, roundFrom: 1790813000, roundTo: 1790813105 };
const SOURCE_DATE_1 = at('2026-10-09T00:00:00Z');
const OLD_COVERAGE = {
  observation_window: { first: '2026-10-01T00:00:00Z', last: iso(E1.cut) },
  vantage_count: 1,
};
const OLD_ATTRIBUTION = [{ source: 'old', by: 'someone', license: 'MIT' }];

// The newest epoch is this release: its meta as stored.
{
  const opened = openRelease(file);
  const newest = {
    epoch: 2,
    release_id: opened.id,
    built_at: opened.builtAtEpoch,
    dns_cut: 1792627910,
    round_from: 1792627200,
    round_to: 1792627910,
    coverage: JSON.stringify(opened.coverage),
    attribution: JSON.stringify(opened.attribution),
    source_dates: '{}',
  };
  opened.close();
  const old = { e_from: 1, e_to: 2 };
  const state = (lastPositive: number) =>
    JSON.stringify([['A', 'positive', ['104.16.132.229'], [], -1, -1, lastPositive]]);
  const seedName = (name: string, rank: number, lastPositive = -1) => ({
    name,
    rank,
    in_seed: 1,
    states: state(lastPositive),
    ...old,
  });
  writeHistory(
    file,
    {
      epoch: [
        {
          epoch: 1,
          release_id: '20261010T000000Z',
          built_at: E1.built,
          dns_cut: E1.cut,
          round_from: E1.roundFrom,
          round_to: E1.roundTo,
          coverage: JSON.stringify(OLD_COVERAGE),
          attribution: JSON.stringify(OLD_ATTRIBUTION),
          source_dates: JSON.stringify({ cloudflare: SOURCE_DATE_1 }),
        },
        newest,
      ],
      provider_range_hist: [
        {
          hid: 1,
          prefix: '104.16.0.0/12',
          version: 4,
          first: key('104.16.0.0'),
          last: key('104.31.255.255'),
          prefix_length: 12,
          provider: 'Cloudflare',
          category: 'cdn',
          metadata: '{"service":"old"}',
          first_seen: at('2026-09-01T00:00:00Z'),
          last_seen: -2,
          source: 'cloudflare',
          ...old,
        },
      ],
      provider_segment_hist: [
        {
          first: key('104.16.0.0'),
          last: key('104.31.255.255'),
          range_hids: '[1]',
          hosting_range_hid: 1,
          ...old,
        },
      ],
      asn_range_hist: [
        ['104.16.0.0', '104.16.255.255', 0, 10],
        ['1.1.1.0', '1.1.1.255', 0, 11],
        ['104.16.0.0', '104.16.127.255', 0, 12],
      ].map(([first, last, ord, hid]) => ({
        hid,
        first: key(first as string),
        last: key(last as string),
        version: 4,
        first_text: first,
        last_text: last,
        asn: 13335,
        country: hid === 10 ? 'GB' : null,
        descr: null,
        prefixes: JSON.stringify([`${first as string}/${hid === 11 ? 24 : hid === 10 ? 16 : 17}`]),
        source: 'iptoasn',
        ord,
        ...old,
      })),
      asn_segment_hist: [{ first: key('104.16.0.0'), last: key('104.16.255.255'), range_hid: 10, ...old }],
      asn_hist: [
        {
          asn: 13335,
          name: 'CLOUDFLARE-OLD',
          country: 'US',
          source: 'iptoasn',
          category: 'hosting',
          category_source: 'external',
          network_role: null,
          routes_v4: 3,
          routes_v6: 0,
          ipv4_addresses: 65792,
          providers: '[]',
          observed_ips: 1,
          observed_domains: 9,
          ...old,
        },
        {
          ...{
            asn: 16509,
            name: 'AMAZON-OLD',
            routes_v4: 0,
            routes_v6: 0,
            ipv4_addresses: 0,
            providers: '[]',
          },
          ...old,
        },
      ],
      ptr_hist: [
        {
          value: '104.16.132.229',
          names: '["edge.example."]',
          status: 'ok',
          checked_at: -1,
          last_confirmed: 1790000000,
          ...old,
        },
      ],
      ip_summary_hist: [
        {
          value: '104.16.132.229',
          current_count: 9,
          sample: '["example.net","example.com"]',
          first_observed: 1790813000,
          last_confirmed: -1,
          ...old,
        },
      ],
      domain_hist: [
        // example.net outranks example.com then: the reverse of the newest release's ids.
        seedName('example.net', 1),
        seedName('example.com', 2, 1790813001),
        seedName('blog.example', 10, 1790813100),
        seedName('www.blog.example', 10),
        seedName('forum.example', 11),
        seedName('www.forum.example', 11),
        seedName('wiki.example', 12),
        seedName('www.wiki.example', 12),
        seedName('docs.example', 13),
      ],
      domain_hosting_hist: [
        {
          name: 'example.com',
          runs: '[[1,16509,"AWS","cdn",2,1,1790812800,-1,null]]',
          truncated: 0,
          ...old,
        },
      ],
    },
    // Two names first seen on the address at one instant (ids 1 and 3: example.com, example.net).
    [
      `INSERT INTO dns_interval (domain_id, rtype, value, first_observed, last_confirmed, ended_at)
         VALUES (1, 'A', '104.16.132.229', 1790813000, 1790813050, NULL),
                (3, 'A', '104.16.132.229', 1790813000, 1790813400, 1790813500)`,
    ],
  );
}

const release = openRelease(file);
t.teardown(() => release.close());
const NOW = release.builtAtEpoch + 3600;
const OLD_T = '2026-10-11T12:00:00Z';

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
