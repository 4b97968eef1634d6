/**
 * `builder fetch` end to end: a local HTTP server plays the publishers (FEED_MIRROR maps
 * https://host/path to <mirror>/host/path) and serves the committed real excerpts.
 */
import t from 'tap';
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const fixtures = path.join(root, 'test/fixtures/feeds');
const routes: Record<string, string> = {
  '/ip-ranges.amazonaws.com/ip-ranges.json': 'aws/ip-ranges.json',
  '/api.fastly.com/public-ip-list': 'fastly/public-ip-list.json',
  '/www.cloudflare.com/ips-v4': 'cloudflare/ips-v4.txt',
  '/www.cloudflare.com/ips-v6': 'cloudflare/ips-v6.txt',
};
const failing = new Set<string>();
const requests: Array<{ url: string; ifNoneMatch?: string }> = [];
const server = http.createServer((req, res) => {
  requests.push({ url: req.url!, ifNoneMatch: req.headers['if-none-match'] });
  const file = routes[req.url!];
  if (!file) return void res.writeHead(404).end();
  if (failing.has(req.url!)) return void res.writeHead(503).end('down for maintenance');
  const body = fs.readFileSync(path.join(fixtures, file));
  const etag = `"${createHash('sha256').update(body).digest('hex').slice(0, 16)}"`;
  if (req.headers['if-none-match'] === etag) return void res.writeHead(304, { etag }).end();
  res.writeHead(200, { etag, 'content-type': 'application/octet-stream' }).end(body);
});
await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
const mirror = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'fetchcmd-'));
t.teardown(() => {
  server.close();
  fs.rmSync(work, { recursive: true, force: true });
});

function fetchFeeds(...sources: string[]): Promise<{ status: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      [
        path.join(root, 'bin/builder.js'),
        '--state-dir',
        path.join(work, 'state'),
        'fetch',
        '--retries',
        '1',
        ...sources,
      ],
      {
        env: { ...process.env, FEED_MIRROR: mirror, FETCH_TIMEOUT_MS: '5000' },
      },
    );
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (out += d));
    child.on('exit', (status) => resolve({ status, out }));
  });
}

t.test('first fetch downloads, stores and imports every feed', async (t) => {
  const r = await fetchFeeds('aws', 'fastly', 'cloudflare');
  t.equal(r.status, 0, r.out);
  t.match(r.out, /aws: read 15, rejected 0, written 12/); // three AMAZON repeats are read, not kept
  t.match(r.out, /fastly: read 21, rejected 0, written 21/);
  t.match(r.out, /cloudflare: read 22, rejected 0, written 22/);
  const db = new Database(path.join(work, 'state/state.sqlite'), { readonly: true });
  t.teardown(() => db.close());
  const snap = db.prepare(`SELECT origin, files FROM source_snapshot WHERE source = 'cloudflare'`).get() as {
    origin: string;
    files: string;
  };
  t.equal(snap.origin, 'fetch');
  const v4 = fs.readFileSync(path.join(fixtures, 'cloudflare/ips-v4.txt'));
  t.match(JSON.parse(snap.files), [
    {
      url: `${mirror}/www.cloudflare.com/ips-v4`,
      sha256: createHash('sha256').update(v4).digest('hex'),
      bytes: v4.length,
    },
    { url: `${mirror}/www.cloudflare.com/ips-v6` },
  ]);
  const manifest = JSON.parse(
    fs.readFileSync(path.join(work, 'state/snapshots/cloudflare/current.json'), 'utf8'),
  );
  t.equal(manifest.records, 22);
});

t.test('a second fetch is conditional and imports nothing', async (t) => {
  requests.length = 0;
  const r = await fetchFeeds('aws', 'cloudflare');
  t.equal(r.status, 0, r.out);
  t.match(r.out, 'aws: not modified');
  t.match(r.out, 'cloudflare: not modified');
  t.ok(
    requests.every((q) => q.ifNoneMatch !== undefined),
    'every request carried If-None-Match',
  );
});

t.test('a feed that fails keeps its previous snapshot and the command says so', async (t) => {
  failing.add('/api.fastly.com/public-ip-list');
  const before = fs.readFileSync(path.join(work, 'state/snapshots/fastly/current.json'), 'utf8');
  const r = await fetchFeeds('fastly', 'aws');
  failing.clear();
  t.equal(r.status, 1);
  t.match(r.out, /fastly: KEPT PREVIOUS SNAPSHOT: .*https?:\/\/[^ ]*public-ip-list.*503/);
  t.match(r.out, 'aws: not modified');
  t.equal(
    fs.readFileSync(path.join(work, 'state/snapshots/fastly/current.json'), 'utf8'),
    before,
    'snapshot untouched',
  );
});

t.test('an unknown source is refused with the list of known ones', async (t) => {
  const r = await fetchFeeds('nosuchfeed');
  t.equal(r.status, 2);
  t.match(r.out, 'builder: unknown source "nosuchfeed"; known: ');
});
