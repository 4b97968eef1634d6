/**
 * Right answers on the real feeds (issue 13): the committed real excerpts of ../shared/data
 * (test/fixtures/oracle) go through `bin/builder.js import` and `release`, a real server serves
 * the release, and GET /v1/ip/{ip} must agree with the independent oracle (test/oracle/oracle.ts)
 * on every address of a seeded draw: inside and at the boundaries of every feed's ranges and of
 * the mapping rows (nested ones included), around every bogon block, random IPv4 and IPv6, and
 * other spellings of the same addresses.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { startTestServer } from '../helpers/test-server.js';
import { askService, byField, compare, drawQueries, FIELD_GROUPS, formatDifference } from './harness.js';
import { DEFAULT_ASN_MAPPING, Oracle, readManifest } from './oracle.js';
import { importAndRelease, ROOT } from './service.js';

const FIXTURES = path.join(ROOT, 'test/fixtures/oracle');
const SEED = 13;

// One release of the excerpts, served by one real server, for both tests of this file.
const manifest = readManifest(fs.readFileSync(path.join(FIXTURES, 'manifest.txt'), 'utf8'), FIXTURES);
const asnMapping = process.env.ASN_MAPPING ? process.env.ASN_MAPPING.split(',') : DEFAULT_ASN_MAPPING;
const server = await startTestServer(t, { release: false });
const state = fs.mkdtempSync(path.join(os.tmpdir(), 'ipscope-oracle-state-'));
t.teardown(() => fs.rmSync(state, { recursive: true, force: true }));
const importWindow = importAndRelease(state, server.releasesDir, manifest, {
  ...process.env,
  ASN_MAPPING: asnMapping.join(','),
});
let builtAt: string | null = null;
for (let i = 0; i < 100 && !builtAt; i += 1) {
  const probe = await server.get('/v1/ip/8.8.8.8');
  if (probe.status === 200) builtAt = (probe.json() as { release: { built_at: string } }).release.built_at;
  else await new Promise((resolve) => setTimeout(resolve, 100));
}
if (!builtAt) throw new Error('the server never loaded the release');

t.test('GET /v1/ip/{ip} agrees with the oracle on the real excerpts', async (t) => {
  const oracle = new Oracle({
    manifest,
    builtAt: builtAt!,
    asnMapping,
    importWindow,
    ianaDir: path.join(FIXTURES, 'iana'),
  });
  const queries = drawQueries(oracle, {
    seed: SEED,
    rangesPerFeed: 160,
    rowsPerSource: 150,
    nestedRows: 150,
    randomV4: 600,
    randomV6: 600,
    respelled: 150,
  });
  const expected = oracle.expectAll(queries, 'scan');
  const swept = oracle.expectAll(queries, 'sweep');
  t.same(
    queries.filter((q) => JSON.stringify(expected.get(q)) !== JSON.stringify(swept.get(q))),
    [],
    'the oracle gives the same answers scanning every range per address and sweeping sorted addresses',
  );

  // A few exact answers of the real data, asked of the oracle and of the service.
  const facts: [string, string, (e: Record<string, unknown>) => unknown, unknown][] = [
    [
      '2a02:26f7:b542:4000::1',
      'asn.asn (AS36183 row inside an AS20940 row)',
      (e) => (e.asn as { asn: number } | null)?.asn,
      36183,
    ],
    [
      '2804:490:8c00::1',
      'asn.asn (held only by an overlapping row)',
      (e) => (e.asn as { asn: number } | null)?.asn,
      28613,
    ],
    [
      '2a0a:2e87::1',
      'asn.source (an iptoasn gap filled by ip-location-db)',
      (e) => (e.asn as { source: string } | null)?.source,
      'ip-location-db',
    ],
    ['18.160.0.1', 'is_cdn of a CloudFront address', (e) => e.is_cdn, true],
    ['18.160.0.1', 'is_datacenter of a CloudFront address', (e) => e.is_datacenter, null],
    ['18.160.0.1', 'provider of a CloudFront address', (e) => e.provider, 'AWS'],
    [
      '66.223.170.168',
      'tor_exit ranges of a 2013 Tor exit address',
      (e) =>
        (e.provider_ranges as { category: string }[] | undefined)?.filter((r) => r.category === 'tor_exit')
          .length,
      0,
    ],
    [
      '93.95.230.253',
      'tor_exit ranges of a torbulkexitlist address (dated at import)',
      (e) =>
        (e.provider_ranges as { category: string }[] | undefined)?.filter((r) => r.category === 'tor_exit')
          .length,
      1,
    ],
    ['::ffff:8.8.8.8', 'ip of an IPv4-mapped address', (e) => e.ip, '8.8.8.8'],
    [
      '::1.1.1.1',
      'bogon of an IPv4-compatible address',
      (e) => (e.bogon as { prefix: string } | null)?.prefix ?? e.bogon_prefix,
      '::/8',
    ],
    ['64:ff9b::1.1.1.1', 'is_bogon of a NAT64 address', (e) => e.is_bogon, false],
  ];
  const factQueries = [...new Set(facts.map(([q]) => q))];
  const factAnswers = await askService(server.url, server.key, factQueries);
  for (const [query, what, pick, value] of facts) {
    t.same(
      pick(oracle.expect(query) as unknown as Record<string, unknown>),
      value,
      `oracle: ${query} ${what}`,
    );
    const answer = factAnswers.get(query)!;
    t.same(answer.body ? pick(answer.body) : undefined, value, `service: ${query} ${what}`);
  }

  const answers = await askService(server.url, server.key, queries);
  const diffs = queries.flatMap((q) => compare(expected.get(q)!, answers.get(q)!, importWindow));
  const differing = new Set(diffs.map((d) => d.query));
  const valid = queries.filter((q) => expected.get(q)!.valid).length;
  t.ok(queries.length >= 5000, `addresses checked: ${queries.length} (≥ 5,000; ${valid} valid)`);
  t.comment(`${queries.length - differing.size} agree, ${differing.size} differ`);
  const groups = byField(diffs);
  for (const field of [...new Set([...FIELD_GROUPS, ...groups.keys()])]) {
    const list = groups.get(field) ?? [];
    t.equal(
      list.length,
      0,
      `${field}: the service agrees with the oracle on all ${queries.length} addresses`,
      {
        diagnostic: list.length > 0,
        first: list.slice(0, 5).map(formatDifference),
      },
    );
  }
});

/** A response body as the tests read it: any field, any depth. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Answer = Record<string, any>;

/** The answer of the service, as JSON (throws on a status other than 200). */
async function ask(urlPath: string): Promise<Answer> {
  const response = await server.get(urlPath);
  if (response.status !== 200) throw new Error(`${urlPath}: ${response.status} ${response.text}`);
  return response.json() as Answer;
}

/** Lines of a fixture file whose TAB-separated column `column` is `value`. */
function rowsWith(file: string, column: number, value: string): number {
  return fs
    .readFileSync(path.join(FIXTURES, file), 'utf8')
    .split('\n')
    .filter((line) => line.split('\t')[column] === value).length;
}

t.test("issue 13's seven cases, exact values on the real excerpts", async (t) => {
  t.test('1. nested mapping rows: the most specific answers, every row is kept', async (t) => {
    const akamai = await ask('/v1/ip/2a02:26f7:b542:4000::1');
    t.same(
      [akamai.asn.asn, akamai.asn.route, akamai.asn.descr, akamai.asn.country],
      [36183, '2a02:26f7:b542::/48', 'AKAMAI-AS', 'US'],
      'the AS36183 row inside the AS20940 row 2a02:26f4::/30',
    );
    const hughes = await ask('/v1/ip/2804:490:8c00::1');
    t.same([hughes.asn.asn, hughes.asn.route], [28613, '2804:490:8c00::/38'], 'held only by a nested row');
    const notRouted = await ask('/v1/ip/2804:490:8880::1');
    t.same(
      notRouted.asn,
      {
        asn: null,
        route: '2804:490:8880::/41',
        descr: null,
        country: null,
        source: 'iptoasn',
        category: null,
        category_source: null,
        network_role: null,
      },
      'a "Not routed" row inside the AS28613 row 2804:490:8800::/38 answers asn: null',
    );
    t.equal((await ask('/v1/ip/2804:490:8800::1')).asn.asn, 28613, 'the enclosing row answers around it');
    const akamaiAs = await ask('/v1/asn/AS20940?limit=1000');
    t.equal(akamaiAs.routes.ipv6, 45, 'AS20940: 45 IPv6 routes');
    t.equal(akamaiAs.routes.ipv6, rowsWith('iptoasn/ip2asn-v6.tsv', 2, '20940'), 'as many as the file lists');
    t.equal(akamaiAs.ranges.length, 45, 'and as many ranges');
  });

  t.test('2. mappings layered per address', async (t) => {
    t.same(
      pickAsn(await ask('/v1/ip/8.8.8.8')),
      [15169, '8.8.8.0/24', 'iptoasn'],
      'inside the IPtoASN IPv4 excerpt: IPtoASN (preferred) answers',
    );
    t.same(
      pickAsn(await ask('/v1/ip/3.5.32.1')),
      [16509, '3.5.32.0/19', 'ip-location-db'],
      'outside it: ip-location-db fills the gap',
    );
    const amazon = await ask('/v1/asn/AS16509?limit=1');
    t.same(
      amazon.routes,
      { ipv4: 65, ipv6: 362 },
      'IPv6: the 360 IPtoASN rows and 2 ip-location-db rows in gaps',
    );
    t.equal(rowsWith('iptoasn/ip2asn-v6.tsv', 2, '16509'), 360);
    t.same(
      amazon.attribution
        .map((a: { source: string }) => a.source)
        .filter((s: string) => /ASN|IPtoASN/.test(s)),
      ['ip-location-db ASN', 'IPtoASN'],
      'both mappings contributed rows and both are credited',
    );
  });

  t.test("3. dates are the publisher's", async (t) => {
    const cloudfront = await ask('/v1/ip/18.160.0.1');
    t.same(
      [cloudfront.provider_ranges[0].first_seen, cloudfront.provider_ranges[0].last_seen],
      ['2026-08-22T15:17:05Z', '2026-08-22T15:17:05Z'],
      "AWS: the file's createDate 2026-08-22-15-17-05",
    );
    const oldExit = await ask('/v1/ip/66.223.170.168');
    t.same(
      oldExit.provider_ranges,
      [],
      'a 2013 exit-addresses entry is older than tor_exit allows: not served',
    );
    const bulk = await ask('/v1/ip/93.95.230.253');
    t.same(
      bulk.provider_ranges.map((r: { category: string; first_seen: string }) => [
        r.category,
        r.first_seen >= importWindow.start && r.first_seen <= importWindow.end,
      ]),
      [['tor_exit', true]],
      'the undated bulk list is dated at its import, so served',
    );
  });

  t.test("4. the own AS category over the AS's whole routed IPv4 space", async (t) => {
    const cloudflare = await ask('/v1/asn/AS13335?limit=1');
    t.same(
      [cloudflare.category, cloudflare.category_source, cloudflare.routes.ipv4, cloudflare.ipv4_addresses],
      ['cdn', 'own', 1051, 1904384],
    );
    t.same(
      [(await ask('/v1/ip/1.0.0.1')).asn.category, (await ask('/v1/ip/1.0.0.1')).asn.category_source],
      ['cdn', 'own'],
    );
  });

  t.test('5. a CloudFront edge is cdn, not also AMAZON cloud', async (t) => {
    const edge = await ask('/v1/ip/18.160.0.1');
    t.same(
      [edge.is_cdn, edge.is_datacenter, edge.provider, edge.prefix],
      [true, null, 'AWS', '18.160.0.0/15'],
    );
    t.same(
      edge.provider_ranges.map((r: { metadata: { service: string } }) => r.metadata.service),
      ['CLOUDFRONT'],
    );
  });

  t.test('6. address parsing and reserved IPv6 space', async (t) => {
    for (const [ip, prefix] of [
      ['::1.1.1.1', '::/8'],
      ['::101:101', '::/8'],
      ['::2', '::/8'],
      ['4000::1', '4000::/3'],
      ['e000::1', 'e000::/4'],
      ['fec0::1', 'fec0::/10'],
    ]) {
      const answer = await ask(`/v1/ip/${ip}`);
      t.same(answer, { is_bogon: true, bogon: answer.bogon }, `${ip}: is_bogon and its block only`);
      t.equal(answer.bogon.prefix, prefix, `${ip}: ${prefix}`);
    }
    t.equal((await ask('/v1/ip/::ffff:8.8.8.8')).ip, '8.8.8.8', 'only ::ffff:a.b.c.d is IPv4-mapped');
  });

  t.test('7. honest blocks', async (t) => {
    const answer = await ask('/v1/asn/AS13335?limit=1');
    t.equal(answer.observed, null, 'no DNS observations: observed is unknown, not zero');
    const credited = answer.attribution.map((a: { source: string }) => a.source);
    t.notOk(credited.includes('DNS observations and PTR names'), 'no observations credited');
    t.notOk(credited.includes('TorDNSEL exit list'), 'the stale 2013 exit list adds nothing: not credited');
    t.equal(credited.length, 18, 'the 18 sources with rows in the release');
  });
});

function pickAsn(answer: Answer): unknown[] {
  return [answer.asn?.asn, answer.asn?.route, answer.asn?.source];
}
