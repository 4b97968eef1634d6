/**
 * Fetching a feed: the first fetch, revalidation with the stored validators, gzip bodies and
 * redirects (builder/fetch.ts).
 */
import fs from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import t from 'tap';
import { fetchSource, readSnapshot, readSnapshotText, snapshotFilePaths } from '../../builder/fetch.js';
import { sha256Hex } from '../../builder/snapshot-store.js';
import {
  FIXTURE,
  FIXTURE_SHA256,
  T1,
  ETAG,
  LAST_MODIFIED,
  cidrSource,
  startServer,
  serveFile,
  tempStateDir,
  diskState,
  options,
  RAW_NAME,
  firstManifest,
  seed,
} from '../helpers/fetch-feed.js';

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
