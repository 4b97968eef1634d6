/**
 * The query layer on the demo release (real feed excerpts + generated observation rounds), with
 * exact values: the blocks every lookup carries, lookup_ip and lookup_asn with every response field,
 * paging, cursors and the errors each raises. ip_domains, domain_history and domain_hosting:
 * queries-domains.test.ts; opening a release and the in-memory paths: queries-release.test.ts.
 */
import t from 'tap';
import { domainHistory, domainHosting, ipDomains, lookupAsn, lookupIp } from '../../shared/queries/index.js';
import { openDemoQueries, strip, refused } from '../helpers/query-release.js';

const { demo, release } = openDemoQueries(t);

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
