/**
 * The in-memory index of an older epoch (shared/queries/as-of/epoch-index.ts, docs/decisions/0035):
 * lookup_ip and lookup_asn as of that epoch give the same answers from the index as by SQL, over
 * every segment edge of the history and every AS of it, page by page; and the index is what
 * answered (its counters), built once, in the background, only for an older epoch.
 */
import t from 'tap';
import { findIpBogon } from '../../shared/bogons.js';
import { formatIp, ipFromKey, parseIp } from '../../shared/ip.js';
import { lookupAsnAsOf, lookupIpAsOf, openRelease, type Release } from '../../shared/queries/index.js';
import { epochIndexStats, sqlOnly, warmAsOf } from '../../shared/queries/as-of/epoch-index.js';
import { OLD_T, openHistoryRelease } from '../helpers/as-of-release.js';

const { release: memory, now: NOW } = openHistoryRelease(t);
const sql = openRelease(memory.file);
t.teardown(() => sql.close());
sqlOnly(sql);

/** The addresses to ask: each segment's ends and their neighbours, and every address with a summary. */
function addresses(release: Release): string[] {
  const out = new Set<string>(['8.8.8.8', '1.1.1.1', '2606:4700::1', '104.16.132.229']);
  for (const table of ['provider_segment_hist', 'asn_segment_hist', 'provider_segment', 'asn_segment']) {
    const rows = release.db.prepare(`SELECT first, last FROM ${table}`).raw().all() as Array<
      [Buffer, Buffer]
    >;
    for (const [first, last] of rows) {
      for (const key of [first, last]) {
        const ip = ipFromKey(key);
        const max = ip.version === 4 ? 0xffffffffn : (1n << 128n) - 1n;
        for (const value of [ip.value - 1n, ip.value, ip.value + 1n]) {
          if (value >= 0n && value <= max) out.add(formatIp({ version: ip.version, value }));
        }
      }
    }
  }
  for (const v of release.db.prepare(`SELECT value FROM ip_summary_hist`).pluck().all() as string[])
    out.add(v);
  return [...out];
}

function asns(release: Release): number[] {
  return release.db
    .prepare(`SELECT asn FROM asn_range_hist WHERE asn IS NOT NULL UNION SELECT asn FROM asn_hist`)
    .pluck()
    .all() as number[];
}

/** Every page of `asn` as of `asOf`, following each release's own cursors. */
function pages(release: Release, asn: number, limit: number, asOf: string): unknown[] {
  const out: unknown[] = [];
  let cursor: string | undefined;
  do {
    const page = lookupAsnAsOf(release, { asn: String(asn), limit, cursor }, asOf, NOW);
    out.push({ ...page, next_cursor: page.next_cursor !== null });
    cursor = page.next_cursor ?? undefined;
  } while (cursor !== undefined && out.length < 1000);
  return out;
}

t.test(
  'before its index is ready, an older epoch is answered by SQL; the build is in the background',
  async (t) => {
    const before = epochIndexStats(memory);
    t.same(before.epochs, [], 'no index yet');
    const answer = lookupIpAsOf(memory, { ip: '104.16.132.229' }, OLD_T, NOW);
    t.same(answer, lookupIpAsOf(sql, { ip: '104.16.132.229' }, OLD_T, NOW));
    t.equal(epochIndexStats(memory).misses, before.misses + 1, 'answered by SQL');
    t.same(epochIndexStats(memory).epochs, [], 'not built inside the call');
    await warmAsOf(memory, OLD_T, NOW);
    const after = epochIndexStats(memory);
    t.same(after.epochs, [1], 'built for the older epoch');
    t.equal(after.built, 1);
    t.ok(after.bytes[0]! > 0 && after.wordsBytes > 0, 'its size is known');
    await warmAsOf(memory, memory.builtAt, NOW);
    t.same(epochIndexStats(memory).epochs, [1], 'none for the newest epoch (the release itself)');
  },
);

t.test('lookup_ip as of the older epoch: the index and SQL give the same answers', async (t) => {
  await warmAsOf(memory, OLD_T, NOW);
  const list = addresses(memory);
  t.ok(list.length > 100, `${list.length} addresses`);
  const hits = epochIndexStats(memory).hits;
  const differ = list.filter(
    (ip) =>
      JSON.stringify(lookupIpAsOf(memory, { ip }, OLD_T, NOW)) !==
      JSON.stringify(lookupIpAsOf(sql, { ip }, OLD_T, NOW)),
  );
  t.same(differ, [], 'no address answered differently');
  const routable = list.filter((ip) => findIpBogon(parseIp(ip)!) === null).length;
  t.equal(epochIndexStats(memory).hits - hits, routable, 'every lookup of a public address from the index');
  t.equal(epochIndexStats(sql).hits, 0, 'the SQL handle never used one');
  // Not vacuous: the older epoch's answer is not the newest's.
  const ranges = (asOf: string) => {
    const answer = lookupIpAsOf(memory, { ip: '104.16.132.229' }, asOf, NOW);
    return JSON.stringify('provider_ranges' in answer ? answer.provider_ranges : null);
  };
  t.not(ranges(OLD_T), ranges(memory.builtAt));
});

t.test('lookup_asn as of the older epoch: the same pages from the index and from SQL', async (t) => {
  await warmAsOf(memory, OLD_T, NOW);
  const list = asns(memory);
  t.ok(list.includes(13335), `${list.length} ASes`);
  const hits = epochIndexStats(memory).hits;
  for (const limit of [1, 2, 100]) {
    const differ = list.filter(
      (asn) =>
        JSON.stringify(pages(memory, asn, limit, OLD_T)) !== JSON.stringify(pages(sql, asn, limit, OLD_T)),
    );
    t.same(differ, [], `limit ${limit}: no AS paged differently`);
  }
  t.ok(epochIndexStats(memory).hits > hits, 'from the index');
  t.equal(epochIndexStats(sql).hits, 0);
  const first = lookupAsnAsOf(memory, { asn: '13335', limit: 2 }, OLD_T, NOW);
  t.same(
    first.ranges.map((r) => r.first),
    ['1.1.1.0', '104.16.0.0'],
    'the older epoch page order (version, first, last DESC)',
  );
  t.type(first.next_cursor, 'string');
});
