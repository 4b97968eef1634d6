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

t.test('GET /v1/ip/{ip} agrees with the oracle on the real excerpts', async (t) => {
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

  const oracle = new Oracle({
    manifest,
    builtAt,
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
