/**
 * The DNSDB API v2 form (docs/api.md#dnsdb-api), asked by Debian's `dnsdbq` (a client this project
 * did not write) pointed at the server with its DNSDB_SERVER and DNSDB_API_KEY settings: its rrset
 * and rdata lookups with time fencing list exactly the intervals the REST API lists for the same
 * window, on the demo release.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import t from 'tap';
import { openAccountsStore } from '../../accounts/index.js';
import { createTestKey } from '../helpers/accounts.js';
import { startMeteredServer } from '../helpers/limits.js';
import { startTestServer, type TestServer } from '../helpers/test-server.js';

const run = promisify(execFile);

interface Interval {
  value: string;
  first_observed: string;
  last_confirmed: string;
}
interface Record {
  rrname: string;
  rrtype: string;
  rdata: string | string[];
  time_first: number;
  time_last: number;
  count?: number;
}

const epoch = (iso: string) => Date.parse(iso) / 1000;

/** dnsdbq's JSON lines, with a home of its own so that no configuration file of this machine counts. */
async function dnsdbq(s: TestServer, args: string[], key = s.key): Promise<Record[]> {
  const home = fs.mkdtempSync(path.join(os.tmpdir(), 'dnsdbq-'));
  const { stdout } = await run('dnsdbq', ['-u', 'dnsdb2', '-j', ...args], {
    env: { PATH: process.env.PATH, HOME: home, DNSDB_SERVER: s.url, DNSDB_API_KEY: key, TZ: 'UTC' },
  });
  fs.rmSync(home, { recursive: true });
  return stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record);
}

t.test('rrset by name with time fencing: the intervals of the REST history', async (t) => {
  const s = await startTestServer(t);
  const rest = async (query: string) => {
    const r = await s.get(`/v1/domain/news.example/history?${query}`);
    t.equal(r.status, 200);
    return (r.json() as { intervals: Interval[] }).intervals
      .map((i) => `A ${i.value} ${epoch(i.first_observed)} ${epoch(i.last_confirmed)}`)
      .map((line) => (line.split(' ')[1]!.includes(':') ? line.replace(/^A /, 'AAAA ') : line))
      .sort();
  };
  const asked = async (args: string[]) =>
    (await dnsdbq(s, args)).map((r) => {
      t.equal(r.rrname, 'news.example.');
      t.equal(r.count, undefined, 'no count: queries are not counted');
      return `${r.rrtype} ${[r.rdata].flat().join()} ${r.time_first} ${r.time_last}`;
    });

  const window = ['-A', '2026-10-05', '-B', '2026-10-20'];
  const overlapping = await asked(['-r', 'news.example', ...window]);
  t.same(overlapping.sort(), await rest('from=2026-10-05&to=2026-10-20'));
  t.equal(overlapping.length, 5, 'two from 10-08 (ended 10-15), three from 10-15 (current)');

  const strict = await asked(['-r', 'news.example', '-c', ...window]);
  t.same(strict.sort(), await rest('from=2026-10-05&to=2026-10-20&strict=true'));
  t.same(
    strict.sort(),
    [
      `A 120.52.22.100 ${epoch('2026-10-08T00:01:20Z')} ${epoch('2026-10-08T00:01:20Z')}`,
      `AAAA 2600:9000:3002:5c00:1f:e2b0:8dc0:93a1 ${epoch('2026-10-08T00:01:25Z')} ${epoch('2026-10-08T00:01:25Z')}`,
    ].sort(),
    'strict: wholly inside the window',
  );

  const everything = await asked(['-r', 'news.example/A']);
  t.same(
    everything.sort(),
    (await rest('')).filter((line) => line.startsWith('A ')),
  );
});

t.test('rdata by address and by prefix with time fencing: the names of the REST list', async (t) => {
  const s = await startTestServer(t);
  const rest = async (ip: string, query: string) => {
    const r = await s.get(`/v1/ip/${ip}/domains?${query}`);
    t.equal(r.status, 200);
    const body = r.json() as { items: { domain: string; first_observed: string; last_confirmed: string }[] };
    return body.items
      .map((d) => `${d.domain}. ${ip} ${epoch(d.first_observed)} ${epoch(d.last_confirmed)}`)
      .sort();
  };
  const asked = async (args: string[]) =>
    (await dnsdbq(s, args))
      .map((r) => `${r.rrname} ${[r.rdata].flat().join()} ${r.time_first} ${r.time_last}`)
      .sort();

  const window = ['-A', '2026-10-05', '-B', '2026-10-20'];
  const single = await asked(['-i', '151.101.1.195', ...window]);
  t.same(single, await rest('151.101.1.195', 'from=2026-10-05&to=2026-10-20'));
  t.equal(single.length, 4, 'news and www.news from 10-15, garden and www.garden since 10-01');
  const strict = await asked(['-i', '151.101.1.195', '-c', '-A', '2026-10-10', '-B', '2026-10-30']);
  t.same(strict, await rest('151.101.1.195', 'from=2026-10-10&to=2026-10-30&strict=true'));
  t.equal(strict.length, 2, 'only the news names came back inside the window');

  const prefix = await asked(['-i', '151.101.0.0/16', ...window]);
  t.ok(prefix.length > single.length);
  for (const line of single) t.ok(prefix.includes(line), `the prefix holds ${line}`);
  for (const line of prefix) t.match(line, / 151\.101\.\d+\.\d+ /, 'every rdata inside 151.101.0.0/16');
});

t.test('keys, limits and framing: the API rules, in the DNSDB form', async (t) => {
  const file = path.join(t.testdir({}), 'accounts.sqlite');
  const store = openAccountsStore(file);
  const key = (await createTestKey(store)).key;
  const revoked = await createTestKey(store);
  await store.revokeKey(revoked.keyId);
  await store.close();
  const s = await startMeteredServer(t, { ACCOUNTS_DB: file, FREE_MONTHLY_QUOTA: 1000 });
  const asKey = (k: string) => ({ key: null, headers: { 'x-api-key': k } });

  const ping = await s.get('/dnsdb/v2/ping', { key: null });
  t.equal(ping.status, 200);
  t.same(JSON.parse(ping.text), { ping: 'ok' });
  t.notOk('x-quota-used' in ping.headers, 'ping is not counted');

  const lookup = '/dnsdb/v2/lookup/rrset/name/news.example/A?limit=2';
  const framed = await s.get(lookup, asKey(key));
  t.equal(framed.status, 200);
  t.equal(framed.headers['content-type'], 'application/x-ndjson');
  const lines = framed.text
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { cond?: string; obj?: Record });
  t.same(lines[0], { cond: 'begin' });
  t.same(
    lines.slice(1, -1).map((line) => [line.obj!.rrtype, line.obj!.rdata]),
    [
      ['A', ['151.101.1.195']],
      ['A', ['151.101.65.195']],
    ],
    'the first two A intervals, oldest first',
  );
  t.same(lines.at(-1), { cond: 'limited', msg: 'Result limit reached' }, 'more than two were there');
  t.equal(framed.headers['x-quota-used'], '1', 'counted as one request, like the API');

  const none = await s.get('/dnsdb/v2/lookup/rrset/name/unseen.example', asKey(key));
  t.equal(none.text, '{"cond":"begin"}\n{"cond":"succeeded"}\n', 'nothing observed: an empty stream');
  t.equal(none.headers['x-quota-used'], '2');

  t.equal((await s.get(lookup, { key: null })).status, 401, 'no key');
  t.equal((await s.get(lookup, asKey(revoked.key))).status, 401, 'revoked');
  const inUrl = await s.get(`${lookup}&api_key=${key}`, asKey(key));
  t.equal(inUrl.status, 401, 'a key in the URL is refused, as everywhere');
  const wide = await s.get('/dnsdb/v2/lookup/rdata/ip/10.0.0.0,4', asKey(key));
  t.equal(wide.status, 422);
  t.match(wide.text, /IPv4 prefixes from \/8 to \/32/);
  const badType = await s.get('/dnsdb/v2/lookup/rrset/name/news.example/MX', asKey(key));
  t.equal(badType.status, 422, 'a type the data does not hold');

  const rate = await s.get('/dnsdb/v2/rate_limit', asKey(key));
  t.equal(rate.status, 200);
  t.same((JSON.parse(rate.text) as { rate: object }).rate, {
    reset: Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth() + 1, 1) / 1000,
    limit: 1000,
    remaining: 997,
  });
});
