/**
 * lookup_ip's heads without the answer (shared/queries/lookup-ip-head.ts, docs/decisions/0038): on
 * the demo release (real feed excerpts), with PTR rows added to a private copy, every head written
 * from the per-network parts is byte for byte the head of lookupIp's answer, and every address
 * with something of its own (an ip_summary or ptr row), a bogon or an IPv6 address is left to
 * lookupIp. Then the envelope's path (answerOf): a public address without rows is answered without
 * running the operation.
 */
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t, { type Test } from 'tap';
import { answerOf } from '../../server/call/answer-cache.js';
import { jsonText, responseParts } from '../../server/encoding/json.js';
import { OPERATIONS, type Operation } from '../../shared/operations.js';
import { lookupIp, lookupIpHead, lookupIpHeadReady, openRelease } from '../../shared/queries/index.js';
import { randomPublicIpv4 } from '../bench/public-addresses.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { openDemoQueries, releaseAddresses } from '../helpers/query-release.js';

/** Public IPv4 addresses without ip_summary rows that get PTR rows in the copy. */
const WITH_PTR = ['8.8.8.8', '52.95.110.1'];

function openWithPtr(t: Test) {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'ip-heads-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const demo = copyDemoRelease(path.join(work, 'releases'));
  const file = path.join(demo.releasesDir, demo.file);
  const db = new Database(file);
  const insert = db.prepare(
    `INSERT INTO ptr (value, names, status, checked_at, last_confirmed) VALUES (?, ?, 'ok', ?, ?)`,
  );
  for (const ip of WITH_PTR)
    insert.run(ip, JSON.stringify([`host-${ip}.example.net`]), 1_790_000_000, 1_790_000_000);
  db.close();
  const release = openRelease(file);
  t.teardown(() => release.close());
  return release;
}

/** Every address the test asks: rows of the release, range ends and their neighbours, random ones. */
function addressesOf(release: ReturnType<typeof openRelease>): string[] {
  const texts = releaseAddresses(release);
  for (const ip of WITH_PTR) texts.add(ip);
  // The neighbour above each provider range's first address too.
  for (const prefix of release.db.prepare(`SELECT prefix FROM provider_range`).pluck().all() as string[]) {
    const quad = prefix.split('/')[0]!.split('.').map(Number);
    if (quad.length === 4) texts.add([quad[0], quad[1], quad[2], Math.min(255, quad[3]! + 1)].join('.'));
  }
  for (const ip of randomPublicIpv4(20_000)) texts.add(ip);
  for (const extra of [
    '10.0.0.1',
    '192.0.2.1',
    '100.64.0.1',
    '2001:db8::1',
    '2600:1f18::1',
    '::ffff:8.8.4.4',
  ])
    texts.add(extra);
  return [...texts];
}

t.test(
  'every head lookupIpHead writes is the head of lookupIp, and what it leaves is lookupIp’s',
  async (t) => {
    const release = openWithPtr(t);
    t.equal(lookupIpHead(release, { ip: '8.8.4.4' }), null, 'nothing before the tables are in memory');
    await lookupIpHeadReady(release);
    const owned = new Set<string>([
      ...(release.db.prepare(`SELECT value FROM ip_summary`).pluck().all() as string[]),
      ...WITH_PTR,
    ]);
    let written = 0;
    let left = 0;
    let leftWithRows = 0;
    const mismatches: string[] = [];
    const addresses = addressesOf(release);
    for (const ip of addresses) {
      const head = lookupIpHead(release, { ip });
      const answer = lookupIp(release, { ip }) as {
        is_bogon: boolean;
        ptr?: unknown;
        domains?: { current_count: number };
      };
      if (head === null) {
        left++;
        if (owned.has(ip)) leftWithRows++;
        continue;
      }
      written++;
      // An IPv4-mapped address is its IPv4 address (lookupIp answers for 8.8.4.4).
      const ipv6 = ip.includes(':') && !ip.startsWith('::ffff:');
      if (answer.is_bogon || owned.has(ip) || ipv6) mismatches.push(`${ip}: written, but it is lookupIp's`);
      if (head !== responseParts(answer).head)
        mismatches.push(`${ip}: ${head} against ${responseParts(answer).head}`);
    }
    t.strictSame(mismatches, [], 'every head is lookupIp’s, byte for byte');
    t.equal(leftWithRows, owned.size, 'every address with a row of its own is left to lookupIp');
    t.equal(written + left, addresses.length);
    t.equal(written, 20_372, 'heads written from the parts (of 20,000 random addresses and the range ends)');
    t.equal(lookupIpHead(release, { ip: '8.8.8.8' }), null, 'a PTR row: lookupIp answers');
    t.not(lookupIpHead(release, { ip: '8.8.4.4' }), null, 'its neighbour without one: a head');
    t.throws(() => lookupIpHead(release, { ip: '1.2.3.4/32' }), { code: 'invalid_ip' }, 'lookupIp’s refusal');
  },
);

t.test('the envelope answers a public address without rows without running lookup_ip', async (t) => {
  const { release } = openDemoQueries(t);
  await lookupIpHeadReady(release);
  const lookupIpOp = OPERATIONS.find((op) => op.id === 'lookup_ip')!;
  let runs = 0;
  const counted: Operation = {
    ...lookupIpOp,
    run: (args, context) => {
      runs++;
      return lookupIpOp.run!(args, context);
    },
  };
  const context = { release, pageSize: (n: number) => n };
  const addresses = randomPublicIpv4(1_000);
  for (const ip of addresses) {
    const answer = answerOf(counted, { ip }, context);
    t.equal(answer.billable, true);
    if (jsonText(answer.json) !== JSON.stringify(lookupIp(release, { ip }))) t.fail(`${ip}: another answer`);
  }
  const withRows = addresses.filter((ip) => lookupIpHead(release, { ip }) === null).length;
  t.equal(runs, withRows, `lookup_ip ran only for the ${withRows} addresses with rows of their own`);
  t.equal(runs, 0, 'no run for 1000 random public addresses (none has a row in the demo release)');
  // A bogon and an IPv6 address run it.
  answerOf(counted, { ip: '10.0.0.1' }, context);
  answerOf(counted, { ip: '2600:1f18::1' }, context);
  t.equal(runs, withRows + 2);
});
