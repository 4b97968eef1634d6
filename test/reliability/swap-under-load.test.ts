/**
 * Release swaps under keep-alive load against a real `bin/server.js serve` process: CURRENT moves
 * to a new release every PROFILE.swapMs while PROFILE.swapConnections clients ask without pause.
 * No request fails, no client ever sees a release id older than one it saw before, the server
 * serves the last release at the end, and once the replaced releases' grace time is over it holds only the last release file open
 * (no leaked handles). Sizes: test/reliability/profile.ts (`make soak` runs the long version).
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestKey } from '../helpers/accounts.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { startLoad } from '../helpers/keepalive-load.js';
import { get, spawnServer } from '../helpers/limits.js';
import { copyReleaseAs, pointCurrentAt } from '../helpers/release-files.js';
import { PROFILE } from './profile.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Release ids after the demo's, in order: 2030-01-01T00:00:00Z plus n seconds. */
function releaseId(n: number): string {
  return new Date(Date.UTC(2030, 0, 1) + n * 1000).toISOString().replace(/[-:]|\.\d+/g, '');
}

/** Release files the process holds open (its file descriptors that point into dir). */
function openReleaseFiles(pid: number, dir: string): string[] {
  const fdDir = `/proc/${pid}/fd`;
  return fs
    .readdirSync(fdDir)
    .map((fd) => {
      try {
        return fs.readlinkSync(path.join(fdDir, fd));
      } catch {
        return '';
      }
    })
    .filter((target) => target.startsWith(dir) && target.endsWith('.sqlite'));
}

t.test(
  `release swaps under load (${PROFILE.name})`,
  { timeout: (PROFILE.swapSeconds + 240) * 1000 },
  async (t) => {
    const work = fs.mkdtempSync(path.join(os.tmpdir(), 'swap-load-'));
    t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
    const releasesDir = path.join(work, 'releases');
    const { file: demoFile } = copyDemoRelease(releasesDir);
    const accounts = path.join(work, 'accounts.sqlite');
    const { key } = await createTestKey(accounts, {});
    const server = await spawnServer(t, {
      ACCOUNTS_DB: accounts,
      RELEASES_DIR: releasesDir,
      METERING: 'off',
      RELEASE_POLL_MS: '100',
    });
    const template = path.join(work, 'template.sqlite');
    fs.copyFileSync(path.join(releasesDir, demoFile), template);

    // Per connection, the last release id seen: it may only move forward.
    const lastSeen = new Map<number, string>();
    const backwards: string[] = [];
    const load = startLoad({
      servers: [server.url],
      paths: ['/v1/ip/104.16.132.229', '/v1/domain/news.example/history', '/v1/asn/AS13335?limit=2'],
      key,
      connections: PROFILE.swapConnections,
      onAnswer: (body, _server, worker) => {
        const id = (JSON.parse(body) as { release: { id: string } }).release.id;
        const previous = lastSeen.get(worker);
        if (previous !== undefined && id < previous) backwards.push(`${id} after ${previous}`);
        lastSeen.set(worker, id);
      },
    });

    const started = Date.now();
    let swaps = 0;
    const published: string[] = [];
    while (Date.now() - started < PROFILE.swapSeconds * 1000) {
      await sleep(PROFILE.swapMs);
      swaps += 1;
      const id = releaseId(swaps);
      fs.copyFileSync(template, path.join(releasesDir, `${id}.tmp-source.sqlite`));
      const name = copyReleaseAs(releasesDir, `${id}.tmp-source.sqlite`, id);
      fs.rmSync(path.join(releasesDir, `${id}.tmp-source.sqlite`));
      pointCurrentAt(releasesDir, name);
      published.push(name);
      // Like `builder prune --keep 3`: old files go (a server still reading one keeps it open).
      while (published.length > 3) fs.rmSync(path.join(releasesDir, published.shift()!));
    }
    const last = releaseId(swaps);
    // The last swap is served within a few polls.
    let served = '';
    for (let i = 0; i < 100 && served !== last; i++) {
      await sleep(100);
      served = (JSON.parse((await get(`${server.url}/health`)).text) as { release: { id: string } }).release
        .id;
    }
    const result = await load.stop();
    // Replaced releases are closed DEFAULT_GRACE_MS (5 s) after the swap; then only the last is open.
    // The last may hold two descriptors: the watch service's own handle of it (server/watch/
    // service.ts) is closed, but SQLite keeps that descriptor while the served handle holds its
    // POSIX lock on the same file (closing it would drop that lock) and closes both with the served
    // handle; a later handle of the same file reuses it, so there are never more than two.
    const distinct = () => [...new Set(openReleaseFiles(server.child.pid!, releasesDir))];
    let open = distinct();
    for (let i = 0; i < 150 && open.length !== 1; i++) {
      await sleep(100);
      open = distinct();
    }
    const descriptors = openReleaseFiles(server.child.pid!, releasesDir).length;
    t.comment(
      `figures: ${PROFILE.swapSeconds} s, ${PROFILE.swapConnections} connections, ${swaps} swaps, ` +
        `${result.ok} requests answered (${Math.round(result.ok / PROFILE.swapSeconds)}/s), ` +
        `${result.failures.length} failed, ${backwards.length} release ids going backwards, ${open.length} release files open ` +
        `(${descriptors} descriptors)`,
    );
    t.same(result.failures.slice(0, 10), [], `no failed request among ${result.ok}`);
    t.same(backwards.slice(0, 10), [], 'no release id going backwards');
    t.equal(served, last, 'the last release is served');
    t.ok(swaps >= 5, `${swaps} swaps`);
    t.same(open, [path.join(releasesDir, `${last}.sqlite`)], 'only the last release file stays open');
    t.ok(descriptors <= 2, `${descriptors} descriptors of it (at most 2)`);
  },
);
