/**
 * Reading a release: the files openRelease refuses, and the faster paths (domain_history from the
 * domain_page row, lookup_ip and lookup_asn from the range tables in memory) answering exactly as
 * the SQL seeks do, on the demo release.
 */
import t from 'tap';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import path from 'node:path';
import {
  domainHistory,
  lookupAsn,
  lookupIp,
  openRelease,
  ReleaseOpenError,
  warmLookupIp,
  type Release,
} from '../../shared/queries/index.js';
import { encodeCursor } from '../../shared/queries/paging.js';
import { RELEASE_SCHEMA_VERSION } from '../../shared/release-schema.js';
import { openDemoQueries, epoch, releaseAddresses } from '../helpers/query-release.js';

const { work, demo, release } = openDemoQueries(t);

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
      `release ${old} has schema version 2; this server reads version ${RELEASE_SCHEMA_VERSION} only: build a new release ` +
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
  const texts = releaseAddresses(release);
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
