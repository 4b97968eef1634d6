import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import {
  fetchSource,
  fetchSources,
  readSnapshot,
  readSnapshotText,
  snapshotFilePaths,
} from '../../builder/fetch.js';
import type { FetchOptions } from '../../builder/fetch.js';
import { commitSnapshot, sha256Hex } from '../../builder/snapshot-store.js';
import type { ParseResult, ProviderRangeRecord, SourceDefinition } from '../../builder/sources/types.js';
import { formatCidr, parseCidr } from '../../shared/ip.js';

// Cloudflare's real ips-v4 list (15 CIDRs, no trailing newline), committed as a fixture.
const FIXTURE = fs.readFileSync(fileURLToPath(new URL('../fixtures/fetch/ips-v4.txt', import.meta.url)));
const FIXTURE_SHA256 = 'f02c6d83bc01ab0ae8577160e036d700c7455359bce054df884e5d7d9e4e9e7b';
const FIXTURE_LINES = FIXTURE.toString('utf8').split('\n');
const T0 = new Date('2026-11-20T10:00:00.000Z');
const T1 = new Date('2026-11-21T11:30:00.000Z');
const ETAG = '"cf-ips-v4-1"';
const LAST_MODIFIED = 'Fri, 20 Nov 2026 09:00:00 GMT';

/** A CIDR-per-line parser, like the real plain-list feeds; an HTML page makes it throw. */
function parseCidrList(text: string, file: string): ParseResult<ProviderRangeRecord> {
  if (text.trimStart().startsWith('<')) throw new Error(`${file}: line 1: expected a CIDR list, got HTML`);
  const result: ParseResult<ProviderRangeRecord> = { records: [], rejected: [], read: 0 };
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) return;
    result.read++;
    const cidr = parseCidr(line);
    if (!cidr) {
      result.rejected.push({ line: index + 1, reason: `expected a CIDR, got "${line}"` });
      return;
    }
    result.records.push({ prefix: formatCidr(cidr), provider: 'Cloudflare', category: 'cdn', metadata: {} });
  });
  return result;
}

function cidrSource(name: string, files = 1): SourceDefinition<'provider_ranges'> {
  return {
    name,
    kind: 'provider_ranges',
    description: 'test list, one CIDR per line',
    urls: Array.from({ length: files }, (_, i) => `https://www.cloudflare.com/ips-v${i === 0 ? 4 : 6}`),
    attribution: { source: name, by: 'Cloudflare', license: 'none stated' },
    parse: parseCidrList,
  };
}

/** The part of a tap subtest the helpers use. */
interface TestContext {
  teardown(fn: () => unknown): void;
}

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, count: number) => void;

interface TestServer {
  url(pathname: string): string;
  /** Requests seen, per path: their headers. */
  requests(pathname: string): http.IncomingHttpHeaders[];
  route(pathname: string, handler: Handler): void;
}

async function startServer(t: TestContext): Promise<TestServer> {
  const routes = new Map<string, Handler>();
  const seen = new Map<string, http.IncomingHttpHeaders[]>();
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url ?? '/', 'http://x').pathname;
    const list = seen.get(pathname) ?? [];
    list.push(req.headers);
    seen.set(pathname, list);
    const handler = routes.get(pathname);
    if (!handler) {
      res.writeHead(404).end('not found');
      return;
    }
    handler(req, res, list.length);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: (pathname) => `http://127.0.0.1:${port}${pathname}`,
    requests: (pathname) => seen.get(pathname) ?? [],
    route: (pathname, handler) => routes.set(pathname, handler),
  };
}

/** Serves `body` with validators; answers 304 to a matching If-None-Match. */
function serveFile(body: Buffer | string, etag = ETAG): Handler {
  return (req, res) => {
    if (req.headers['if-none-match'] === etag) {
      res.writeHead(304, { etag }).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain', etag, 'last-modified': LAST_MODIFIED }).end(body);
  };
}

function tempStateDir(t: TestContext): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ipscope-fetch-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Every file of a source's snapshot directory with its sha256: the on-disk state to compare. */
function diskState(stateDir: string, source: string): Record<string, string> {
  const dir = path.join(stateDir, 'snapshots', source);
  const out: Record<string, string> = {};
  for (const name of fs.readdirSync(dir).sort()) out[name] = sha256Hex(fs.readFileSync(path.join(dir, name)));
  return out;
}

function options(stateDir: string, urls: string[], extra: Partial<FetchOptions> = {}): FetchOptions {
  return { stateDir, urls, now: () => T0, retryBaseDelayMs: 5, timeoutMs: 2000, ...extra };
}

const RAW_NAME = `${FIXTURE_SHA256.slice(0, 16)}-ips-v4`;

/** The manifest of the first fetch of the fixture from `url`. */
function firstManifest(source: string, url: string) {
  return {
    formatVersion: 1,
    source,
    fetchedAt: '2026-11-20T10:00:00Z',
    checkedAt: '2026-11-20T10:00:00Z',
    records: 15,
    rejected: 0,
    files: [
      {
        url,
        file: RAW_NAME,
        sha256: FIXTURE_SHA256,
        bytes: 230,
        fetchedAt: '2026-11-20T10:00:00Z',
        records: 15,
        rejected: 0,
        etag: ETAG,
        lastModified: LAST_MODIFIED,
      },
    ],
  };
}

/** Stores a first good snapshot of the fixture; returns its URL. */
async function seed(server: TestServer, stateDir: string, source: string): Promise<string> {
  server.route('/ips-v4', serveFile(FIXTURE));
  const url = server.url('/ips-v4');
  const result = await fetchSource(cidrSource(source), options(stateDir, [url]));
  if (result.status !== 'updated') throw new Error(`seed fetch failed: ${result.reason}`);
  return url;
}

t.test('first fetch stores the raw file and a manifest', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  server.route('/ips-v4', serveFile(FIXTURE));
  const url = server.url('/ips-v4');
  const logs: string[] = [];

  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url], { log: (l) => logs.push(l) }));

  t.strictSame(result, {
    source: 'cf',
    status: 'updated',
    snapshot: firstManifest('cf', url),
    records: 15,
    rejected: 0,
  });
  t.strictSame(readSnapshot(stateDir, 'cf'), firstManifest('cf', url));
  t.strictSame(Object.keys(diskState(stateDir, 'cf')), ['current.json', RAW_NAME]);
  const [stored] = snapshotFilePaths(stateDir, result.snapshot!);
  t.equal(stored!.path, path.join(stateDir, 'snapshots', 'cf', RAW_NAME));
  t.ok(fs.readFileSync(stored!.path).equals(FIXTURE), 'raw file is the bytes as served');
  t.equal(readSnapshotText(stateDir, result.snapshot!, result.snapshot!.files[0]!), FIXTURE.toString('utf8'));
  t.equal(server.requests('/ips-v4')[0]!['if-none-match'], undefined, 'no validators on a first fetch');
  t.equal(server.requests('/ips-v4')[0]!['accept-encoding'], 'identity');
  t.strictSame(logs, [`cf: ${url}: 15 records, 0 rejected`, 'cf: updated, 15 records']);
  t.equal(readSnapshot(stateDir, 'other'), null, 'a source never fetched has no snapshot');
});

t.test('second fetch sends ETag and Last-Modified; 304 → not_modified', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  const before = diskState(stateDir, 'cf');

  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url], { now: () => T1 }));

  const headers = server.requests('/ips-v4')[1]!;
  t.equal(headers['if-none-match'], ETAG);
  t.equal(headers['if-modified-since'], LAST_MODIFIED);
  const expected = { ...firstManifest('cf', url), checkedAt: '2026-11-21T11:30:00Z' };
  t.strictSame(result, {
    source: 'cf',
    status: 'not_modified',
    snapshot: expected,
    records: 15,
    rejected: 0,
  });
  t.strictSame(readSnapshot(stateDir, 'cf'), expected);
  const after = diskState(stateDir, 'cf');
  t.equal(after[RAW_NAME], before[RAW_NAME], 'raw file untouched');
  t.strictSame(Object.keys(after), ['current.json', RAW_NAME]);
});

t.test('200 with the same bytes is not_modified too', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  server.route('/ips-v4', serveFile(FIXTURE, '"cf-ips-v4-2"'));

  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url], { now: () => T1 }));

  t.equal(result.status, 'not_modified');
  t.equal(result.snapshot!.fetchedAt, '2026-11-20T10:00:00Z');
  t.equal(result.snapshot!.checkedAt, '2026-11-21T11:30:00Z');
  t.equal(result.snapshot!.files[0]!.etag, '"cf-ips-v4-2"', 'the new validator is remembered');
});

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

  server.route('/ips-v4', serveFile('', '"empty"'));
  const empty = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.equal(empty.reason, `cf: kept previous snapshot (2026-11-20T10:00:00Z): ${url} has no records`);

  t.strictSame(diskState(stateDir, 'cf'), before);
});

t.test('shrink over maxShrink → kept_previous; allowed with maxShrink 1', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  const before = diskState(stateDir, 'cf');
  const seven = FIXTURE_LINES.slice(0, 7).join('\n');
  server.route('/ips-v4', serveFile(seven, '"seven"'));

  const refused = await fetchSource(cidrSource('cf'), options(stateDir, [url], { now: () => T1 }));
  t.strictSame(refused, {
    source: 'cf',
    status: 'kept_previous',
    reason:
      'cf: kept previous snapshot (2026-11-20T10:00:00Z): the new snapshot has 7 records, 53% fewer than the previous 15 ' +
      '(more than the allowed 50%); raise maxShrink to accept it',
    snapshot: firstManifest('cf', url),
  });
  t.strictSame(diskState(stateDir, 'cf'), before);

  const accepted = await fetchSource(
    cidrSource('cf'),
    options(stateDir, [url], { now: () => T1, maxShrink: 1 }),
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
  });
  t.strictSame(
    Object.keys(diskState(stateDir, 'cf')),
    [`${sha.slice(0, 16)}-ips-v4`, 'current.json'],
    'old raw file removed',
  );
});

t.test('a shrink to exactly half is allowed by default', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  server.route('/ips-v4', serveFile(FIXTURE_LINES.slice(0, 8).join('\n'), '"eight"'));
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.equal(result.status, 'updated', '8 of 15 is not below 7.5');
  t.equal(result.records, 8);
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

t.test('gzip bodies are gunzipped for parsing and stored as downloaded', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const gz = gzipSync(FIXTURE);
  const gzSha = sha256Hex(gz);
  server.route('/ips-v4.txt.gz', serveFile(gz));
  server.route('/ips-v4', serveFile(gz));

  const byName = await fetchSource(cidrSource('gz-name'), options(stateDir, [server.url('/ips-v4.txt.gz')]));
  t.equal(byName.status, 'updated');
  t.equal(byName.records, 15);
  t.equal(byName.snapshot!.files[0]!.sha256, gzSha);
  t.equal(byName.snapshot!.files[0]!.bytes, gz.length);
  t.equal(byName.snapshot!.files[0]!.file, `${gzSha.slice(0, 16)}-ips-v4.txt.gz`);
  const [stored] = snapshotFilePaths(stateDir, byName.snapshot!);
  t.ok(fs.readFileSync(stored!.path).equals(gz), 'stored bytes are the gzip bytes');
  t.equal(readSnapshotText(stateDir, byName.snapshot!, byName.snapshot!.files[0]!), FIXTURE.toString('utf8'));

  const byMagic = await fetchSource(cidrSource('gz-magic'), options(stateDir, [server.url('/ips-v4')]));
  t.equal(byMagic.status, 'updated');
  t.equal(byMagic.records, 15);
  t.equal(byMagic.snapshot!.files[0]!.file, `${gzSha.slice(0, 16)}-ips-v4`);

  server.route('/broken.gz', serveFile('plain text, not gzip'));
  const broken = await fetchSource(cidrSource('gz-broken'), options(stateDir, [server.url('/broken.gz')]));
  t.equal(
    broken.reason,
    `gz-broken: no previous snapshot to keep: ${server.url('/broken.gz')} could not be gunzipped (incorrect header check)`,
  );
});

t.test('redirects are followed; the manifest keeps the requested URL', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  server.route('/old', (_req, res) => res.writeHead(301, { location: '/ips-v4' }).end());
  server.route('/ips-v4', serveFile(FIXTURE));
  const url = server.url('/old');
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.equal(result.status, 'updated');
  t.equal(result.snapshot!.files[0]!.url, url);
  t.equal(result.snapshot!.files[0]!.file, `${FIXTURE_SHA256.slice(0, 16)}-old`);
});

t.test('a multi-file source is all or nothing', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const six = '2400:cb00::/32\n2606:4700::/32';
  server.route('/v4', serveFile(FIXTURE));
  server.route('/v6', serveFile(six, '"v6"'));
  const urls = [server.url('/v4'), server.url('/v6')];
  const first = await fetchSource(cidrSource('cf2', 2), options(stateDir, urls));
  t.equal(first.status, 'updated');
  t.equal(first.records, 17);
  t.equal(first.snapshot!.files.length, 2);
  const before = diskState(stateDir, 'cf2');

  // v4 changes, v6 fails: the changed v4 must not be stored.
  server.route('/v4', serveFile(FIXTURE_LINES.slice(0, 14).join('\n'), '"v4-b"'));
  server.route('/v6', (_req, res) => res.writeHead(502).end());
  const second = await fetchSource(cidrSource('cf2', 2), options(stateDir, urls, { retries: 0 }));
  t.equal(
    second.reason,
    `cf2: kept previous snapshot (2026-11-20T10:00:00Z): ${urls[1]} answered HTTP 502 after 1 attempt`,
  );
  t.strictSame(diskState(stateDir, 'cf2'), before);

  // v4 changed, v6 answers 304: a new snapshot reusing the stored v6 file.
  server.route('/v6', serveFile(six, '"v6"'));
  const third = await fetchSource(cidrSource('cf2', 2), options(stateDir, urls, { now: () => T1 }));
  t.equal(third.status, 'updated');
  t.equal(third.records, 16);
  t.equal(server.requests('/v6').at(-1)!['if-none-match'], '"v6"');
  t.strictSame(third.snapshot!.files[1], first.snapshot!.files[1], 'v6 entry unchanged');
  t.equal(Object.keys(diskState(stateDir, 'cf2')).length, 3, 'manifest + new v4 + kept v6');
});

t.test('a damaged stored file is downloaded in full instead of revalidated', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  fs.writeFileSync(path.join(stateDir, 'snapshots', 'cf', RAW_NAME), 'damaged');
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.equal(server.requests('/ips-v4')[1]!['if-none-match'], undefined);
  t.equal(result.status, 'updated');
  t.ok(fs.readFileSync(path.join(stateDir, 'snapshots', 'cf', RAW_NAME)).equals(FIXTURE), 'repaired');
});

t.test('a crash before the manifest swap leaves the old snapshot; the next commit cleans up', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  const url = await seed(server, stateDir, 'cf');
  const before = diskState(stateDir, 'cf');
  const old = readSnapshot(stateDir, 'cf')!;
  const bytes = Buffer.from('1.0.0.0/24\n');
  const sha = sha256Hex(bytes);
  const file = `${sha.slice(0, 16)}-ips-v4`;
  const next = {
    ...old,
    records: 1,
    files: [{ ...old.files[0]!, file, sha256: sha, bytes: bytes.length, records: 1 }],
  };

  for (const step of ['raw_files_written', 'manifest_written'] as const) {
    t.throws(
      () =>
        commitSnapshot(stateDir, next, new Map([[file, bytes]]), {
          onStep: (s) => {
            if (s === step) throw new Error(`crash at ${s}`);
          },
        }),
      { message: `crash at ${step}` },
    );
    t.strictSame(readSnapshot(stateDir, 'cf'), old, `old manifest after a crash at ${step}`);
    t.equal(diskState(stateDir, 'cf')['current.json'], before['current.json']);
  }

  // The crash left the new raw file (and a temp manifest); a later fetch removes both.
  t.ok(fs.existsSync(path.join(stateDir, 'snapshots', 'cf', file)));
  server.route('/ips-v4', serveFile(FIXTURE, '"again"'));
  const result = await fetchSource(cidrSource('cf'), options(stateDir, [url]));
  t.equal(result.status, 'not_modified');
  t.strictSame(Object.keys(diskState(stateDir, 'cf')), ['current.json', RAW_NAME]);
});

t.test('a manifest that is not ours is reported, not overwritten', async (t) => {
  const stateDir = tempStateDir(t);
  const dir = path.join(stateDir, 'snapshots', 'cf');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'current.json'), '{"formatVersion": 99}');
  const result = await fetchSource(cidrSource('cf'), options(stateDir, ['http://127.0.0.1:9/x']));
  t.equal(result.status, 'kept_previous');
  t.match(
    result.reason,
    /^cf: no previous snapshot to keep: .*current\.json is not a snapshot manifest of format 1 \(formatVersion: /,
  );
  t.equal(fs.readFileSync(path.join(dir, 'current.json'), 'utf8'), '{"formatVersion": 99}');
});

t.test('fetchSources returns every result and never throws for one feed', async (t) => {
  const server = await startServer(t);
  const stateDir = tempStateDir(t);
  server.route('/good', serveFile(FIXTURE));
  server.route('/bad', (_req, res) => res.writeHead(500).end());
  const results = await fetchSources([cidrSource('good'), cidrSource('bad'), cidrSource('wrong-urls')], {
    stateDir,
    now: () => T0,
    retries: 0,
    urls: { good: [server.url('/good')], bad: [server.url('/bad')], 'wrong-urls': ['a', 'b'] },
  });
  t.strictSame(
    results.map((r) => [r.source, r.status, r.reason]),
    [
      ['good', 'updated', undefined],
      [
        'bad',
        'kept_previous',
        `bad: no previous snapshot to keep: ${server.url('/bad')} answered HTTP 500 after 1 attempt`,
      ],
      [
        'wrong-urls',
        'kept_previous',
        'wrong-urls: no previous snapshot to keep: wrong-urls: expected 1 URL(s) in the override, got 2',
      ],
    ],
  );
});
