/**
 * The stored snapshots of fetched feeds: multi-file sources all or nothing, damaged files, a crash
 * before the manifest swap, a manifest not ours, and fetchSources over several feeds.
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { fetchSource, fetchSources, readSnapshot } from '../../builder/fetch.js';
import { commitSnapshot, sha256Hex } from '../../builder/snapshot-store.js';
import {
  FIXTURE,
  FIXTURE_LINES,
  T0,
  T1,
  cidrSource,
  startServer,
  serveFile,
  tempStateDir,
  diskState,
  options,
  RAW_NAME,
  seed,
} from '../helpers/fetch-feed.js';

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
