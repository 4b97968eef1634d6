/**
 * A feed that fails or looks wrong: retries (503, 429 and Retry-After), errors that keep the
 * previous snapshot (500, 404, refused connections, bodies that do not parse, drops over the
 * quality gate's limits, timeouts).
 */
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import t from 'tap';
import { fetchSource } from '../../builder/fetch.js';
import { sha256Hex } from '../../builder/snapshot-store.js';
import {
  FIXTURE,
  FIXTURE_LINES,
  T1,
  LAST_MODIFIED,
  cidrSource,
  startServer,
  serveFile,
  tempStateDir,
  diskState,
  options,
  firstManifest,
  seed,
} from '../helpers/fetch-feed.js';

t.test('503 twice then 200 → updated after retries', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  server.route('/ips-v4', (req, res, count) => {
    if (count <= 2) res.writeHead(503).end('busy');
    else serveFile(FIXTURE)(req, res, count);
  });
  const url = server.url('/ips-v4');
  const logs: string[] = [];

  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url], { log: (l) => logs.push(l) }));

  t.equal(result.status, 'updated');
  t.equal(result.records, 15);
  t.strictSame(result.snapshot, firstManifest('cf', url));
  t.equal(server.requests('/ips-v4').length, 3);
  t.match(logs[0], new RegExp(`^cf: ${url} answered HTTP 503; retry 1 of 3 in \\d+ ms$`));
  t.match(logs[1], new RegExp(`^cf: ${url} answered HTTP 503; retry 2 of 3 in \\d+ ms$`));
});

t.test('429 with a small Retry-After is honoured', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  server.route('/ips-v4', (req, res, count) => {
    if (count === 1) res.writeHead(429, { 'retry-after': '1' }).end();
    else serveFile(FIXTURE)(req, res, count);
  });
  const started = Date.now();
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [server.url('/ips-v4')]));
  t.equal(result.status, 'updated');
  t.ok(Date.now() - started >= 990, 'waited for Retry-After: 1');
});

t.test('429 with a long Retry-After stops retrying', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  server.route('/ips-v4', (_req, res) => res.writeHead(429, { 'retry-after': '3600' }).end());
  const url = server.url('/ips-v4');
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.strictSame(result, {
    source: 'cf',
    status: 'kept_previous',
    reason: `cf: no previous snapshot to keep: ${url} answered HTTP 429 with Retry-After 3600 s (longer than the 60 s maxRetryAfterMs) after 1 attempt`,
    snapshot: null,
  });
  t.equal(server.requests('/ips-v4').length, 1);
  t.notOk(fs.existsSync(path.join(stateDir, 'snapshots', 'cf')), 'nothing written');
});

t.test('persistent 500 → kept_previous, old snapshot untouched', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  const before = diskState(stateDir, 'cf');
  server.route('/ips-v4', (_req, res) => res.writeHead(500).end('oops'));

  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url], { now: () => T1 }));

  t.strictSame(result, {
    source: 'cf',
    status: 'kept_previous',
    reason: `cf: kept previous snapshot (2026-11-20T10:00:00Z): ${url} answered HTTP 500 after 4 attempts`,
    snapshot: firstManifest('cf', url),
  });
  t.equal(server.requests('/ips-v4').length, 5, '1 seed request + 4 attempts');
  t.strictSame(diskState(stateDir, 'cf'), before, 'same files, same sha256, same manifest bytes');
});

t.test('404 is not retried', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = server.url('/missing');
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.equal(
    result.reason,
    `cf: no previous snapshot to keep: ${url} answered HTTP 404 (not retried; check the URL)`,
  );
  t.equal(server.requests('/missing').length, 1);
});

t.test('connection refused → kept_previous after retries', async (t) => {
  const stateDir = tempStateDir(t);
  const closed = http.createServer();
  await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
  const { port } = closed.address() as AddressInfo;
  await new Promise<void>((resolve) => closed.close(() => resolve()));
  const url = `http://127.0.0.1:${port}/ips-v4`;
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url], { retries: 1 }));
  t.equal(result.status, 'kept_previous');
  t.match(result.reason, `cf: no previous snapshot to keep: ${url} failed (`);
  t.match(result.reason, /ECONNREFUSED.*after 2 attempts$/);
});

t.test('a body that does not parse → kept_previous', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  const before = diskState(stateDir, 'cf');

  server.route('/ips-v4', serveFile('<html><body>Attention Required!</body></html>', '"html"'));
  const thrown = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.strictSame(thrown, {
    source: 'cf',
    status: 'kept_previous',
    reason: `cf: kept previous snapshot (2026-11-20T10:00:00Z): ${url} could not be parsed (ips-v4: line 1: expected a CIDR list, got HTML)`,
    snapshot: firstManifest('cf', url),
  });

  server.route('/ips-v4', serveFile('10.0.0.300/8\nnot a cidr\n', '"junk"'));
  const allRejected = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.equal(
    allRejected.reason,
    `cf: kept previous snapshot (2026-11-20T10:00:00Z): ${url} had all 2 rows rejected (line 1: expected a CIDR, got "10.0.0.300/8")`,
  );

  // An empty file is weighed by the quality gate when there is a previous snapshot (and can be
  // accepted); without one it is refused (fetch.test.ts).
  server.route('/ips-v4', serveFile('', '"empty"'));
  const empty = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.equal(
    empty.reason,
    'cf: kept previous snapshot (2026-11-20T10:00:00Z): the new snapshot drops too much: ' +
      'rows fall from 15 to 0 (-100%, more than the 20% FEED_MAX_ROW_DROP allows); ' +
      'IPv4 addresses fall from 1,524,736 to 0 (-100%, more than the 1% FEED_MAX_ADDRESS_DROP allows). ' +
      'If the publisher really shrank the feed, take this snapshot with --accept-drop cf',
  );

  t.strictSame(diskState(stateDir, 'cf'), before);
});

t.test('an empty file without a previous snapshot → refused', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  server.route('/ips-v4', serveFile('', '"empty"'));
  const url = server.url('/ips-v4');
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.strictSame(result, {
    source: 'cf',
    status: 'kept_previous',
    reason: `cf: no previous snapshot to keep: ${url} has no records`,
    snapshot: null,
  });
});

t.test('a snapshot that drops too much → kept_previous; taken with acceptDrop', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  const before = diskState(stateDir, 'cf');
  const seven = FIXTURE_LINES.slice(0, 7).join('\n');
  server.route('/ips-v4', serveFile(seven, '"seven"'));
  const drops = [
    { measure: 'rows', before: 15, after: 7, share: 8 / 15, limit: 0.2 },
    {
      measure: 'ipv4',
      before: 1_524_736,
      after: 44_032,
      share: (1_524_736 - 44_032) / 1_524_736,
      limit: 0.01,
    },
  ];

  const refused = await fetchSource(cidrSource('cf'), options(stateDir, [url], { now: () => T1 }));
  t.strictSame(refused, {
    source: 'cf',
    status: 'kept_previous',
    reason:
      'cf: kept previous snapshot (2026-11-20T10:00:00Z): the new snapshot drops too much: ' +
      'rows fall from 15 to 7 (-53.3%, more than the 20% FEED_MAX_ROW_DROP allows); ' +
      'IPv4 addresses fall from 1,524,736 to 44,032 (-97.1%, more than the 1% FEED_MAX_ADDRESS_DROP allows). ' +
      'If the publisher really shrank the feed, take this snapshot with --accept-drop cf',
    snapshot: firstManifest('cf', url),
    drop: { drops, accepted: false },
  });
  t.strictSame(diskState(stateDir, 'cf'), before);

  const logs: string[] = [];
  const accepted = await fetchSource(
    cidrSource('cf'),
    options(stateDir, [url], { now: () => T1, acceptDrop: true, log: (l) => logs.push(l) }),
  );
  const sha = sha256Hex(Buffer.from(seven));
  t.strictSame(accepted, {
    source: 'cf',
    status: 'updated',
    snapshot: {
      formatVersion: 1,
      source: 'cf',
      fetchedAt: '2026-11-21T11:30:00Z',
      checkedAt: '2026-11-21T11:30:00Z',
      records: 7,
      rejected: 0,
      coverage: { ipv4: 44_032, ipv6: '0' },
      files: [
        {
          url,
          file: `${sha.slice(0, 16)}-ips-v4`,
          sha256: sha,
          bytes: Buffer.byteLength(seven),
          fetchedAt: '2026-11-21T11:30:00Z',
          records: 7,
          rejected: 0,
          etag: '"seven"',
          lastModified: LAST_MODIFIED,
        },
      ],
    },
    records: 7,
    rejected: 0,
    drop: { drops, accepted: true },
  });
  t.ok(
    logs.includes(
      'cf: taking the new snapshot all the same (--accept-drop): rows fall from 15 to 7 ' +
        '(-53.3%, more than the 20% FEED_MAX_ROW_DROP allows); IPv4 addresses fall from 1,524,736 ' +
        'to 44,032 (-97.1%, more than the 1% FEED_MAX_ADDRESS_DROP allows)',
    ),
    logs.join('\n'),
  );
  t.strictSame(
    Object.keys(diskState(stateDir, 'cf')),
    [`${sha.slice(0, 16)}-ips-v4`, 'current.json'],
    'old raw file removed',
  );
});

t.test('a drop of exactly the limit is taken; one row more is refused', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  const maxDrop = { rows: 0.2, addresses: 1 };
  server.route('/ips-v4', serveFile(FIXTURE_LINES.slice(0, 11).join('\n'), '"eleven"'));
  const eleven = await fetchSource(cidrSource('cf'), options(stateDir, [url], { maxDrop }));
  t.equal(eleven.status, 'kept_previous', '4 of 15 rows (26.7%) is more than 20%');
  server.route('/ips-v4', serveFile(FIXTURE_LINES.slice(0, 12).join('\n'), '"twelve"'));
  const twelve = await fetchSource(cidrSource('cf'), options(stateDir, [url], { maxDrop }));
  t.equal(twelve.status, 'updated', '3 of 15 rows is 20%, not more');
  t.equal(twelve.records, 12);
  t.notOk('drop' in twelve);
});

t.test('a server that never answers → kept_previous within the timeout', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  const before = diskState(stateDir, 'cf');
  server.route('/ips-v4', () => {
    // never answers
  });

  const started = Date.now();
  const result = await fetchSource(
    cidrSource('cf'),
    options(stateDir, [url], { timeoutMs: 300, retries: 1 }),
  );
  const elapsed = Date.now() - started;

  t.strictSame(result, {
    source: 'cf',
    status: 'kept_previous',
    reason: `cf: kept previous snapshot (2026-11-20T10:00:00Z): ${url} timed out (no response headers within 300 ms) after 2 attempts`,
    snapshot: firstManifest('cf', url),
  });
  t.ok(elapsed >= 600 && elapsed < 1200, `2 attempts of 300 ms took ${elapsed} ms`);
  t.strictSame(diskState(stateDir, 'cf'), before);
});

t.test('a body that stalls → kept_previous within the timeout', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  server.route('/ips-v4', (_req, res) => {
    res.writeHead(200, { 'content-length': String(FIXTURE.length) });
    res.write(FIXTURE.subarray(0, 100)); // then nothing more
  });
  const url = server.url('/ips-v4');
  const started = Date.now();
  const result = await fetchSource(
    cidrSource('cf'),
    options(stateDir, [url], { timeoutMs: 300, retries: 0 }),
  );
  const elapsed = Date.now() - started;
  t.equal(
    result.reason,
    `cf: no previous snapshot to keep: ${url} timed out (body stalled for 300 ms) after 1 attempt`,
  );
  t.ok(elapsed >= 300 && elapsed < 900, `took ${elapsed} ms`);
  t.notOk(fs.existsSync(path.join(stateDir, 'snapshots', 'cf')), 'nothing written');
});
