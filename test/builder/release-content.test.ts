/**
 * Builds the demo release (committed real feed excerpts + generated observation rounds) through
 * the CLI, as `make demo` does, and checks exact values in it.
 */
import t from 'tap';
import Database from 'better-sqlite3';
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeRun, type EncodedRun } from '../../builder/release/hosting-runs.js';
import { ipKey, parseIp } from '../../shared/ip.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'content-'));
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
const stateDir = path.join(work, 'state');
const releasesDir = path.join(work, 'releases');
const env = { ...process.env, ASN_MAPPING: 'ip-location-db' };

function builder(...args: string[]): string {
  const r = spawnSync(
    process.execPath,
    [path.join(root, 'bin/builder.js'), '--state-dir', stateDir, '--releases-dir', releasesDir, ...args],
    { encoding: 'utf8', env },
  );
  if (r.status !== 0) throw new Error(`builder ${args.join(' ')} failed:\n${r.stdout}${r.stderr}`);
  return r.stdout;
}

const feeds = spawnSync('bash', [path.join(root, 'demo/import-feeds.sh'), stateDir, releasesDir], {
  encoding: 'utf8',
  env,
});
t.equal(feeds.status, 0, feeds.stderr);
t.notMatch(feeds.stdout, /rejected [1-9]/, 'no feed excerpt has a rejected row');
builder(
  'import',
  'ip-location-db',
  path.join(root, 'demo/data/asn/asn-ipv4.csv'),
  path.join(root, 'demo/data/asn/asn-ipv6.csv'),
);
builder('import', 'tranco', path.join(root, 'demo/data/seed.csv'));
const rounds = [1, 2, 3, 4].map((n) => path.join(root, `demo/data/observations/round-${n}.ndjson`));
const imported = builder('import', 'observations', ...rounds);
t.match(imported, 'round-4.ndjson: read 148, rejected 0, written 148');
builder('release', '--demo');

const file = path.join(releasesDir, fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim());
const db = new Database(file, { readonly: true, fileMustExist: true });
t.teardown(() => db.close());
const meta = Object.fromEntries(
  (db.prepare(`SELECT key, value FROM meta`).all() as Array<{ key: string; value: string }>).map((r) => [
    r.key,
    r.value,
  ]),
);
const domainId = (name: string) =>
  db.prepare(`SELECT id FROM domain WHERE name = ?`).pluck().get(name) as number;
const iso = (s: number | null) =>
  s === null ? null : new Date(s * 1000).toISOString().replace('.000Z', 'Z');

t.test('meta: id, schema, coverage labelled demo, sources with sha256', async (t) => {
  t.equal(meta.schema_version, '4');
  t.equal(`${meta.release_id}.sqlite`, path.basename(file));
  const coverage = JSON.parse(meta.coverage!);
  t.same(coverage.observation_window, { first: '2026-10-01T00:00:00Z', last: '2026-10-22T00:12:15Z' });
  t.same(
    [
      coverage.vantage_count,
      coverage.record_types,
      coverage.seed.names,
      coverage.derived.www_names,
      coverage.dataset,
    ],
    [1, ['A', 'AAAA'], 37, 37, 'demo'],
  );
  t.notOk('ptr' in coverage, 'no PTR counts without PTR data');
  const sources = JSON.parse(meta.sources!) as Array<{
    source: string;
    records: number;
    files: Array<{ file: string; sha256: string }>;
  }>;
  const cloudflare = sources.find((s) => s.source === 'cloudflare')!;
  const v4 = fs.readFileSync(path.join(root, 'test/fixtures/feeds/cloudflare/ips-v4.txt'));
  t.equal(cloudflare.records, 22);
  t.same(
    cloudflare.files.find((f) => f.file === 'ips-v4.txt')?.sha256,
    createHash('sha256').update(v4).digest('hex'),
  );
  const attribution = JSON.parse(meta.attribution!) as Array<{ source: string }>;
  // Exactly the sources the answers rest on: not the 2013 Tor exit list (every entry older than
  // the tor_exit freshness), not the demo seed (read with the Tranco parser, but not Tranco's).
  t.strictSame(
    attribution.map((a) => a.source),
    [
      'DNS observations and PTR names',
      'iCloud Private Relay egress IP ranges',
      'ipscope AS classification',
      'AS network roles',
      'asn2org',
      'AWS IP address ranges',
      'Azure IP Ranges and Service Tags – Public Cloud',
      'Bingbot IP ranges',
      'Cloudflare IP ranges',
      'DigitalOcean geofeed',
      'Fastly public IP list',
      'Google Cloud IP ranges',
      'Google special-case crawler IP ranges',
      'Google user-triggered fetcher IP ranges',
      'Googlebot IP ranges',
      'ip-fetcher Hetzner prefixes (BGPView / RIPEstat)',
      'ip-location-db ASN',
      'IPtoASN',
      'Linode geofeed',
      'OCI public IP ranges',
      'ip-fetcher OVH prefixes (BGPView / RIPEstat)',
      'Tor bulk exit list',
      'X4BNet lists_vpn datacenter ASNs',
    ],
  );
  t.equal(sources.length, 24, 'every imported source is listed in meta.sources all the same');
});

t.test('hosting runs: a move, and a return to a network as a new run', async (t) => {
  const runs = (name: string) => {
    const row = db
      .prepare(`SELECT runs, truncated FROM domain_hosting WHERE domain_id = ?`)
      .get(domainId(name)) as { runs: string; truncated: number };
    return (JSON.parse(row.runs) as EncodedRun[]).map((r) => {
      const run = decodeRun(r, null);
      return [
        run.asn,
        run.provider,
        run.category,
        run.addresses,
        run.record_types.join('+'),
        iso(run.first_observed),
        iso(run.ended_at),
        run.current,
      ];
    });
  };
  t.same(runs('shop.example'), [
    [63949, 'Linode', 'hosting', 2, 'A+AAAA', '2026-10-01T00:01:00Z', '2026-10-15T00:01:05Z', false],
    [13335, 'Cloudflare', 'cdn', 4, 'A+AAAA', '2026-10-15T00:01:00Z', null, true],
  ]);
  const news = runs('news.example');
  t.equal(news.length, 4);
  t.same(news[0]!.slice(0, 3), [54113, 'Fastly', 'cdn']);
  t.same(news[3]!.slice(0, 3), [54113, 'Fastly', 'cdn']);
  t.equal(news[3]![7], true);
});

t.test('per-IP summary: 14 current domains, sample by seed rank', async (t) => {
  t.same(db.prepare(`SELECT current_count, sample FROM ip_summary WHERE value = ?`).get('104.16.132.229'), {
    current_count: 14,
    sample: JSON.stringify([
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
    ]),
  });
});

t.test('DNS state: a transient failure keeps the answer', async (t) => {
  const page = (name: string) =>
    db
      .prepare(`SELECT id, states, intervals, interval_lo, interval_hi FROM domain_page WHERE name = ?`)
      .get(name) as {
      id: number;
      states: string;
      intervals: string;
      interval_lo: number;
      interval_hi: number;
    };
  const status = page('status.example');
  t.equal(status.id, domainId('status.example'));
  t.same(JSON.parse(status.states)[0], [
    'A',
    'timeout',
    ['15.181.232.17'],
    [],
    Date.parse('2026-10-22T00:03:00Z') / 1000, // last_observed: a week later, timed out
    Date.parse('2026-10-15T00:03:00Z') / 1000,
    Date.parse('2026-10-15T00:03:00Z') / 1000,
  ]);
  const api = page('api.example');
  const history = db
    .prepare(`SELECT value, ended_at FROM dns_interval WHERE id BETWEEN ? AND ? ORDER BY id`)
    .all(api.interval_lo, api.interval_hi);
  t.same(
    history,
    [
      { value: '15.181.232.18', ended_at: null },
      { value: '216.244.7.45', ended_at: null },
    ],
    'an order-only change ends nothing',
  );
});

t.test(
  'domain_page: every domain, its states as in the DNS state, its intervals as in dns_interval',
  async (t) => {
    // Brute force from the other tables: the state file's dns_state (joined by name) and each
    // domain's dns_interval rows.
    const st = new Database(path.join(stateDir, 'state.sqlite'), { readonly: true, fileMustExist: true });
    t.teardown(() => st.close());
    const stateOf = st.prepare(
      `SELECT s.rtype, s.outcome, s.vals, s.cnames, s.last_observed, s.last_confirmed, s.last_positive
       FROM dns_state s JOIN dns_name n ON n.id = s.name_id WHERE n.name = ? ORDER BY s.rtype`,
    );
    const intervalsOf = db.prepare(
      `SELECT id, rtype, value, first_observed, last_confirmed, ended_at FROM dns_interval WHERE domain_id = ? ORDER BY id`,
    );
    const pages = db
      .prepare(`SELECT name, id, states, intervals, interval_lo, interval_hi FROM domain_page`)
      .all() as Array<{
      name: string;
      id: number;
      states: string;
      intervals: string;
      interval_lo: number | null;
      interval_hi: number | null;
    }>;
    t.same(
      pages.map((p) => [p.id, p.name]).sort((a, b) => (a[0] as number) - (b[0] as number)),
      db.prepare(`SELECT id, name FROM domain ORDER BY id`).raw().all(),
      'one row per domain, keyed by its name',
    );
    let withIntervals = 0;
    let withStates = 0;
    for (const p of pages) {
      const states = (stateOf.raw().all(p.name) as unknown[][]).map((r) => [
        r[0],
        r[1],
        JSON.parse(r[2] as string),
        JSON.parse(r[3] as string),
        r[4],
        r[5],
        r[6],
      ]);
      t.same(JSON.parse(p.states), states, `${p.name}: states`);
      const rows = intervalsOf.raw().all(p.id) as Array<
        [number, string, string, number, number, number | null]
      >;
      t.same(
        [p.interval_lo, p.interval_hi],
        rows.length === 0 ? [null, null] : [rows[0]![0], rows[rows.length - 1]![0]],
        `${p.name}: span`,
      );
      t.same(
        JSON.parse(p.intervals),
        rows.slice(0, 100).map((r) => r.slice(1)),
        `${p.name}: first page`,
      );
      if (rows.length > 0) withIntervals++;
      if (states.length > 0) withStates++;
    }
    t.same(
      { domains: pages.length, withIntervals, withStates },
      { domains: 74, withIntervals: 68, withStates: 74 },
      'names without intervals have rows too',
    );
  },
);

t.test('ranges: ASN route with its CIDR decomposition, provider segments', async (t) => {
  const ip = parseIp('104.21.48.7')!;
  const key = ipKey(ip.version, ip.value);
  t.same(
    db
      .prepare(
        `SELECT first_text, last_text, asn, descr, prefixes FROM asn_range
           WHERE id = (SELECT range_id FROM asn_segment WHERE first <= ? ORDER BY first DESC LIMIT 1)`,
      )
      .get(key),
    {
      first_text: '104.16.0.0',
      last_text: '104.21.127.255',
      asn: 13335,
      descr: 'Cloudflare, Inc.',
      prefixes: '["104.16.0.0/14","104.20.0.0/16","104.21.0.0/17"]',
    },
  );
  const segment = db
    .prepare(`SELECT last, range_ids FROM provider_segment WHERE first <= ? ORDER BY first DESC LIMIT 1`)
    .get(key) as { last: Buffer; range_ids: string };
  t.ok(Buffer.compare(segment.last, key) >= 0, 'the segment holds the address');
  const ranges = db
    .prepare(
      `SELECT prefix, provider, category FROM provider_range WHERE id IN (SELECT value FROM json_each(?))`,
    )
    .all(segment.range_ids);
  t.same(ranges, [{ prefix: '104.16.0.0/13', provider: 'Cloudflare', category: 'cdn' }]);
  t.match(
    db
      .prepare(
        `SELECT routes_v4, routes_v6, category, category_source, network_role, observed_ips, observed_domains FROM asn WHERE asn = 13335`,
      )
      .get(),
    {
      routes_v4: 4,
      // ip-location-db's three, and the IPtoASN row 2606:4700:2:: to 2606:4700:11:ffff:… in their gap.
      routes_v6: 4,
      // Cloudflare's published CDN ranges cover more than half of its routed IPv4 space.
      category: 'cdn',
      category_source: 'own',
      network_role: 'content_network',
      observed_ips: 11,
      observed_domains: 22,
    },
  );
});

t.test('planner statistics: the same sqlite_stat1 rows as a full ANALYZE of the file', async (t) => {
  const copy = path.join(work, 'analyzed.sqlite');
  fs.copyFileSync(file, copy);
  const other = new Database(copy);
  t.teardown(() => other.close());
  const stat1 = (d: Database.Database) =>
    d.prepare(`SELECT tbl, idx, stat FROM sqlite_stat1 ORDER BY tbl, idx`).raw().all() as Array<
      [string, string | null, string]
    >;
  const built = stat1(db);
  other.exec('ANALYZE');
  t.same(built, stat1(other));
  // The keyed tables' rows are there (written from the counts, not by ANALYZE): the demo's counts.
  t.same(
    built.filter((r) => ['domain', 'domain_page', 'ip_summary', 'domain_hosting'].includes(r[0])),
    [
      ['domain', 'domain_by_name', '74 1'],
      ['domain_hosting', null, '68'],
      ['domain_page', 'domain_page', '74 1'],
      ['ip_summary', 'ip_summary', '45 1'],
    ],
  );
});
