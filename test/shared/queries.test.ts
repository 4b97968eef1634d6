/**
 * The query layer on the demo release (real feed excerpts + generated observation rounds), with
 * exact values: every response field of SPEC.md, paging, cursors, and the errors each query raises.
 */
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { copyDemoRelease } from '../helpers/demo-release.js';
import {
  domainHistory,
  domainHosting,
  ipDomains,
  lookupAsn,
  lookupIp,
  openRelease,
  ReleaseOpenError,
  warmLookupIp,
  type Release,
} from '../../shared/queries/index.js';
import { ApiError } from '../../shared/errors.js';
import { encodeCursor } from '../../shared/queries/paging.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'queries-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const demo = copyDemoRelease(path.join(work, 'releases'));
const release = openRelease(path.join(demo.releasesDir, demo.file));
t.teardown(() => release.close());
const epoch = (iso: string) => Date.parse(iso) / 1000;

function strip<T extends Record<string, unknown>>(o: T) {
  const { coverage, attribution, release: r, ...rest } = o;
  return { rest, coverage, attribution, release: r };
}

function refused(t: Test, fn: () => unknown, code: string, status: number) {
  try {
    fn();
    t.fail(`expected ${code}`);
  } catch (err) {
    t.ok(err instanceof ApiError, 'an ApiError');
    t.equal((err as ApiError).code, code);
    t.equal((err as ApiError).status, status);
  }
}

t.test('every lookup carries the coverage, attribution and release blocks', async (t) => {
  const { coverage, attribution, release: r } = strip(lookupIp(release, { ip: '104.16.132.229' }) as never);
  t.same(r, { id: demo.id, built_at: release.builtAt });
  t.match(coverage, {
    observation_window: { first: '2026-10-01T00:00:00Z', last: '2026-10-22T00:12:15Z' },
    vantage_count: 1,
    record_types: ['A', 'AAAA'],
    seed: { source: 'demo seed (reserved example domains)', names: 37 },
    derived: { www_names: 37 },
    dataset: 'demo',
  });
  t.ok(Array.isArray((coverage as { semantics: unknown }).semantics));
  t.same((attribution as unknown[])[0], {
    source: 'DNS observations and PTR names',
    by: 'measured by this service',
    license: 'same as the service data',
  });
  for (const response of [
    ipDomains(release, { ip: '104.16.132.229', includeEnded: false, limit: 1 }),
    domainHistory(release, { domain: 'example.com', limit: 1 }),
    domainHosting(release, { domain: 'example.com' }),
    lookupAsn(release, { asn: '13335', limit: 1 }),
  ]) {
    t.same(response.release, { id: demo.id, built_at: release.builtAt });
    t.equal(response.coverage, release.coverage);
    t.equal(response.attribution, release.attribution);
  }
});

t.test('lookup_ip: CDN address with its AS, ranges and domains', async (t) => {
  const { rest } = strip(lookupIp(release, { ip: '104.16.132.229' }) as never);
  const ranges = rest.provider_ranges as unknown as Array<Record<string, unknown>>;
  t.match(ranges[0]?.first_seen, /^2026-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  t.same(
    { ...rest, provider_ranges: ranges.map(({ first_seen: _f, last_seen: _l, ...r }) => r) },
    {
      ip: '104.16.132.229',
      asn: {
        asn: 13335,
        route: '104.16.0.0/14',
        descr: 'Cloudflare, Inc.',
        // The row has no country (ip-location-db has none); the AS's, from its IPtoASN rows.
        country: 'US',
        source: 'ip-location-db',
        category: 'cdn',
        // Cloudflare's published CDN ranges cover more than half of its routed IPv4 space.
        category_source: 'own',
        network_role: 'content_network',
      },
      is_datacenter: null,
      is_cdn: true,
      provider: 'Cloudflare',
      prefix: '104.16.0.0/13',
      provider_ranges: [{ prefix: '104.16.0.0/13', provider: 'Cloudflare', category: 'cdn', metadata: {} }],
      ptr: null,
      domains: {
        current_count: 14,
        sample: [
          'blog.example',
          'www.blog.example',
          'forum.example',
          'www.forum.example',
          'wiki.example',
          'www.wiki.example',
          'docs.example',
          'www.docs.example',
          'recipes.example',
          'www.recipes.example',
        ],
        first_observed: '2026-10-01T00:04:00Z',
        last_confirmed: '2026-10-22T00:11:50Z',
      },
      is_bogon: false,
      bogon: null,
    },
  );
});

t.test(
  'lookup_ip: IPv4-mapped IPv6 is looked up as IPv4; a CloudFront edge is cdn, not also AMAZON cloud',
  async (t) => {
    const r = lookupIp(release, { ip: '::ffff:23.228.249.10' });
    if (r.is_bogon) throw new Error('not a bogon');
    t.equal(r.ip, '23.228.249.10');
    t.equal(r.is_datacenter, null, "AWS's AMAZON repeat of the CLOUDFRONT prefix is not kept");
    t.equal(r.is_cdn, true, 'inside the CLOUDFRONT (cdn) range');
    t.same(
      r.provider_ranges.map((p) => [p.prefix, p.category, p.metadata.service]),
      [['23.228.249.0/24', 'cdn', 'CLOUDFRONT']],
    );
    t.equal(r.asn, null, 'the demo mapping has no range for it');
    t.same(r.domains.sample, ['example.com', 'www.example.com', 'tickets.example', 'www.tickets.example']);
  },
);

t.test('lookup_ip: IPv6 with the route that holds it', async (t) => {
  const r = lookupIp(release, { ip: '2606:4700:0:0:0:0:6810:84E5' });
  if (r.is_bogon) throw new Error('not a bogon');
  t.equal(r.ip, '2606:4700::6810:84e5', 'canonical RFC 5952 form');
  t.equal(r.asn?.route, '2606:4700::/47');
  t.equal(r.prefix, '2606:4700::/32');
  t.equal(r.domains.current_count, 14);
});

t.test('lookup_ip: an address on no list and in no mapped range', async (t) => {
  const r = lookupIp(release, { ip: '203.0.114.1' });
  if (r.is_bogon) throw new Error('not a bogon');
  t.same(
    {
      asn: r.asn,
      dc: r.is_datacenter,
      cdn: r.is_cdn,
      provider: r.provider,
      prefix: r.prefix,
      ranges: r.provider_ranges,
    },
    { asn: null, dc: null, cdn: null, provider: null, prefix: null, ranges: [] },
  );
  t.same(r.domains, { current_count: 0, sample: [], first_observed: null, last_confirmed: null });
});

t.test('lookup_ip: bogons answer with is_bogon and the block only, even without a release', async (t) => {
  t.same(lookupIp(release, { ip: '10.0.0.1' }), {
    is_bogon: true,
    bogon: { prefix: '10.0.0.0/8', name: 'Private-Use', rfc: 'RFC 1918' },
  });
  t.same(lookupIp(null, { ip: '100.64.1.1' }), {
    is_bogon: true,
    bogon: { prefix: '100.64.0.0/10', name: 'Shared Address Space', rfc: 'RFC 6598' },
  });
  t.equal(lookupIp(null, { ip: '224.0.0.251' }).is_bogon, true, 'multicast');
  t.equal(lookupIp(null, { ip: '::ffff:127.0.0.1' }).is_bogon, true, 'mapped loopback');
  t.equal(lookupIp(null, { ip: '2001:db8::1' }).is_bogon, true, 'documentation');
  refused(t, () => lookupIp(null, { ip: '8.8.8.8' }), 'release_unavailable', 503);
});

t.test('lookup_ip: refusals', async (t) => {
  for (const ip of [
    '1.2.3.0/24',
    '1.2.3',
    '01.2.3.4',
    'example.com',
    '',
    'fe80::1%eth0',
    '1.2.3.4 ',
    '::g',
  ]) {
    refused(t, () => lookupIp(release, { ip }), 'invalid_ip', 422);
  }
});

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

t.test('lookup_asn: metadata, ranges IPv4 first, paged', async (t) => {
  const page1 = lookupAsn(release, { asn: 'AS13335', limit: 2 });
  const { rest } = strip(page1 as never);
  t.same(
    { ...rest, next_cursor: typeof rest.next_cursor },
    {
      asn: 13335,
      is_bogon: false,
      bogon: null,
      name: 'Cloudflare, Inc.',
      country: 'US',
      source: 'ip-location-db',
      category: 'cdn',
      category_source: 'own',
      network_role: 'content_network',
      routes: { ipv4: 4, ipv6: 4 },
      ipv4_addresses: 495616,
      providers: [],
      observed: { ips: 11, domains: 22 },
      ranges: [
        { first: '1.1.1.0', last: '1.1.1.255', prefixes: ['1.1.1.0/24'] },
        {
          first: '104.16.0.0',
          last: '104.21.127.255',
          prefixes: ['104.16.0.0/14', '104.20.0.0/16', '104.21.0.0/17'],
        },
      ],
      next_cursor: 'string',
    },
  );
  const rest4: string[] = [];
  let cursor = page1.next_cursor ?? undefined;
  while (cursor) {
    const page = lookupAsn(release, { asn: '13335', limit: 2, cursor });
    rest4.push(...page.ranges.map((r) => r.first));
    cursor = page.next_cursor ?? undefined;
  }
  t.equal(rest4.length, 6, '8 ranges in all');
  t.ok(
    rest4.slice(0, 2).every((f) => !f.includes(':')) && rest4.slice(2).every((f) => f.includes(':')),
    'IPv4 first',
  );
});

t.test('lookup_asn: bogon numbers, unlisted numbers, refusals', async (t) => {
  const bogon = lookupAsn(release, { asn: 'as64512', limit: 10 });
  t.same(
    [bogon.asn, bogon.is_bogon, bogon.bogon, bogon.ranges],
    [64512, true, { first: 64512, last: 65534, name: 'Private Use', rfc: 'RFC 6996' }, []],
  );
  t.same(lookupAsn(release, { asn: '23456', limit: 1 }).bogon?.first, 23456);
  const unlisted = lookupAsn(release, { asn: '4199999999', limit: 10 });
  t.same(
    [
      unlisted.is_bogon,
      unlisted.name,
      unlisted.ranges,
      unlisted.routes,
      unlisted.providers,
      unlisted.observed,
    ],
    [false, null, [], { ipv4: 0, ipv6: 0 }, [], null],
  );
  for (const asn of ['0', '4294967296', 'AS', '-1', '64500.5', 'ASN64500', '1e3', ' 64500']) {
    refused(t, () => lookupAsn(release, { asn, limit: 1 }), 'invalid_asn', 422);
  }
  t.equal(lookupAsn(release, { asn: '4294967295', limit: 1 }).is_bogon, true);
});

t.test('openRelease refuses files it does not understand', async (t) => {
  const bad = path.join(work, 'bad.sqlite');
  fs.writeFileSync(bad, 'not a database at all, just text'.repeat(100));
  t.throws(() => openRelease(bad), ReleaseOpenError);
  t.throws(() => openRelease(path.join(work, 'missing.sqlite')), /cannot open release/);
});

t.test('openRelease refuses a release of schema version 2 and says what to do', async (t) => {
  // A version 2 file as the builder before 0022 wrote it: dns_state, no domain_page.
  const old = path.join(work, 'old.sqlite');
  fs.copyFileSync(path.join(demo.releasesDir, demo.file), old);
  const db = new Database(old);
  db.exec(`DROP TABLE domain_page;
    CREATE TABLE dns_state (domain_id INTEGER NOT NULL, rtype TEXT NOT NULL, outcome TEXT NOT NULL,
      good_outcome TEXT, vals TEXT NOT NULL, cnames TEXT NOT NULL, last_observed INTEGER NOT NULL,
      last_confirmed INTEGER, last_positive INTEGER, PRIMARY KEY (domain_id, rtype)) WITHOUT ROWID;
    UPDATE meta SET value = '2' WHERE key = 'schema_version';`);
  db.close();
  t.throws(() => openRelease(old), {
    name: 'ReleaseOpenError',
    message:
      `release ${old} has schema version 2; this server reads version 3 only: build a new release ` +
      'with the builder of this version (npx builder release), or serve with the version that built this file',
  });
});

t.test('domain_history: pages from the domain_page row equal pages from dns_interval', async (t) => {
  // Copies of the release whose rows keep only the first k intervals: the rows asked for that are
  // not stored (and the look-ahead row) then come from the dns_interval span.
  const truncated = (k: number): Release => {
    const file = path.join(work, `page-${k}.sqlite`);
    fs.copyFileSync(path.join(demo.releasesDir, demo.file), file);
    const db = new Database(file);
    const rows = db.prepare(`SELECT name, intervals FROM domain_page`).all() as Array<{
      name: string;
      intervals: string;
    }>;
    const update = db.prepare(`UPDATE domain_page SET intervals = ? WHERE name = ?`);
    for (const r of rows)
      update.run(JSON.stringify((JSON.parse(r.intervals) as unknown[]).slice(0, k)), r.name);
    db.close();
    return openRelease(file);
  };
  const copies = [0, 1, 2].map(truncated);
  t.teardown(() => copies.forEach((c) => c.close()));
  const names = release.db.prepare(`SELECT name FROM domain_page ORDER BY name`).pluck().all() as string[];
  const now = epoch('2026-10-23T00:00:00Z');
  const pages = (r: Release, domain: string, limit: number) => {
    const out: unknown[] = [];
    let cursor: string | undefined;
    do {
      const page = domainHistory(r, { domain, limit, cursor }, now);
      out.push(page);
      cursor = page.next_cursor ?? undefined;
    } while (cursor !== undefined);
    return out;
  };
  let compared = 0;
  for (const domain of names) {
    for (const limit of [1, 2, 3, 100]) {
      const expected = pages(release, domain, limit);
      for (const copy of copies) {
        t.same(pages(copy, domain, limit), expected, `${domain} limit ${limit}`);
        compared++;
      }
    }
  }
  t.equal(compared, 74 * 4 * 3);
  // Exact values of one domain's row, as stored.
  t.same(
    release.db
      .prepare(`SELECT intervals, interval_lo, interval_hi FROM domain_page WHERE name = ?`)
      .raw()
      .get('api.example'),
    [
      `[["A","15.181.232.18",${epoch('2026-10-01T00:03:20Z')},${epoch('2026-10-22T00:03:20Z')},null],` +
        `["A","216.244.7.45",${epoch('2026-10-01T00:03:20Z')},${epoch('2026-10-22T00:03:20Z')},null]]`,
      56,
      57,
    ],
  );
});

t.test('range tables in memory answer exactly as the SQL seeks do', async (t) => {
  const warm = openRelease(path.join(demo.releasesDir, demo.file));
  t.teardown(() => warm.close());
  await warmLookupIp(warm);
  const texts = new Set<string>(release.db.prepare(`SELECT value FROM ip_summary`).pluck().all() as string[]);
  for (const row of release.db.prepare(`SELECT first_text, last_text FROM asn_range`).all() as Array<{
    first_text: string;
    last_text: string;
  }>) {
    texts.add(row.first_text).add(row.last_text);
  }
  for (const prefix of release.db.prepare(`SELECT prefix FROM provider_range`).pluck().all() as string[]) {
    texts.add(prefix.split('/')[0]!);
  }
  for (const extra of [
    '1.1.1.0',
    '1.1.0.255',
    '1.1.2.0',
    '255.255.255.254',
    '2606:4700::',
    '2606:4700:1::',
    'ffff::1',
  ]) {
    texts.add(extra);
  }
  let compared = 0;
  let inRanges = 0;
  for (const ip of texts) {
    const cold = lookupIp(release, { ip });
    const hot = lookupIp(warm, { ip });
    if (!cold.is_bogon && !hot.is_bogon) {
      if (cold.asn !== null || cold.provider_ranges.length > 0) inRanges++;
      t.same({ ...hot, release: null }, { ...cold, release: null }, ip);
      compared++;
    }
  }
  t.ok(compared > 300, `compared ${compared} addresses`);
  t.ok(inRanges > 200, `${inRanges} of them inside a mapped or published range`);
});

t.test('lookup_asn pages from asn_range in memory exactly as from SQL', async (t) => {
  const warm = openRelease(path.join(demo.releasesDir, demo.file));
  t.teardown(() => warm.close());
  await warmLookupIp(warm);
  const asns = release.db
    .prepare(`SELECT DISTINCT asn FROM asn_range WHERE asn IS NOT NULL`)
    .pluck()
    .all() as number[];
  t.equal(asns.length, 17, 'the demo release routes 17 AS numbers');
  let pages = 0;
  for (const asn of [...asns, 4199999999]) {
    for (const limit of [1, 2, 100]) {
      let coldCursor: string | undefined;
      let warmCursor: string | undefined;
      do {
        const cold = lookupAsn(release, { asn: String(asn), limit, cursor: coldCursor });
        const hot = lookupAsn(warm, { asn: String(asn), limit, cursor: warmCursor });
        t.same({ ...hot, next_cursor: null, release: null }, { ...cold, next_cursor: null, release: null });
        t.equal(
          hot.next_cursor === null,
          cold.next_cursor === null,
          `AS${asn} limit ${limit}: same last page`,
        );
        coldCursor = cold.next_cursor ?? undefined;
        warmCursor = hot.next_cursor ?? undefined;
        pages++;
      } while (coldCursor !== undefined);
    }
  }
  t.equal(pages, 88, 'pages compared');
  // Cursor keys a client could craft: each path gives the same page for them.
  const query = 'lookup_asn\u000013335';
  // AS13335's rows are ids 1, 15, 16, 19 (IPv4) and 42–45 (IPv6) of the demo release.
  const firsts = [
    '1.1.1.0',
    '104.16.0.0',
    '104.28.0.0',
    '172.67.0.0',
    '2606:4700::',
    '2606:4700:2::',
    '2606:4700:3030::',
  ];
  for (const [key, expected] of [
    [[0], firsts.slice(0, 3)],
    [[-5], firsts.slice(0, 3)],
    [[1], firsts.slice(1, 4)],
    [[2], firsts.slice(1, 4)],
    [[15], firsts.slice(2, 5)],
    [[19], firsts.slice(4, 7)],
    [[45], []],
    [[1e9], []],
  ] as Array<[Array<number | string>, string[]]>) {
    const cold = lookupAsn(release, { asn: '13335', limit: 3, cursor: encodeCursor(release, query, key) });
    const hot = lookupAsn(warm, { asn: '13335', limit: 3, cursor: encodeCursor(warm, query, key) });
    t.same(
      cold.ranges.map((r) => r.first),
      expected,
      `SQL, cursor key ${JSON.stringify(key)}`,
    );
    t.same(
      hot.ranges.map((r) => r.first),
      expected,
      `in memory, cursor key ${JSON.stringify(key)}`,
    );
  }
});
