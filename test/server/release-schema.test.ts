/**
 * A server meeting a release file of a schema it does not read (a newer builder published it, or
 * an older one): a running server keeps serving its release, and `/health` and the log say which
 * file was refused and why; a server started on such a file serves no lookups and says why; either
 * picks up the next release it can read. Real release files (the demo release, its schema version
 * rewritten), a real server (`serve()`, as `server serve` runs it).
 */
import t, { type Test } from 'tap';
import Database from 'better-sqlite3';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadSettings } from '../../shared/config.js';
import { META_KEYS, RELEASE_SCHEMA_VERSION } from '../../shared/release-schema.js';
import { serve, type RunningServer } from '../../server/serve.js';
import { createTestKey } from '../helpers/accounts.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { get } from '../helpers/limits.js';
import { copyReleaseAs, pointCurrentAt } from '../helpers/release-files.js';

const NEWER = '20300101T000000Z';
const OLDER = '20300102T000000Z';
const GOOD = '20300103T000000Z';

/** A copy of `<dir>/<from>` as release `id` whose meta says schema `version`. */
function releaseOfSchema(dir: string, from: string, id: string, version: number): string {
  const name = copyReleaseAs(dir, from, id);
  const db = new Database(path.join(dir, name));
  db.prepare(`UPDATE meta SET value = ? WHERE key = ?`).run(String(version), META_KEYS.schemaVersion);
  db.close();
  return name;
}

interface Started {
  server: RunningServer;
  dir: string;
  key: string;
  logs: Array<{ level: number; component?: string; msg: string }>;
  get(urlPath: string, key?: string | null): Promise<{ status: number; json: () => unknown }>;
}

async function start(t: Test, prepare: (dir: string, demoFile: string) => void): Promise<Started> {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'release-schema-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const dir = path.join(work, 'releases');
  const { file } = copyDemoRelease(dir);
  prepare(dir, file);
  const accountsDb = path.join(work, 'accounts.sqlite');
  const { key } = await createTestKey(accountsDb);
  const logs: Started['logs'] = [];
  const settings = loadSettings(
    {},
    { RELEASES_DIR: dir, ACCOUNTS_DB: accountsDb, PORT: 0, HOST: '127.0.0.1', RELEASE_POLL_MS: 60_000 },
  );
  const server = await serve(settings, () => {}, {
    write: (chunk: string) =>
      void logs.push(
        ...chunk
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Started['logs'][0]),
      ),
  });
  t.teardown(() => server.stop());
  return {
    server,
    dir,
    key,
    logs,
    get: async (urlPath, k = key) => {
      const answer = await get(server.url + urlPath, { key: k });
      return { status: answer.status, json: () => JSON.parse(answer.text) as unknown };
    },
  };
}

const releaseLog = (s: Started) =>
  s.logs.filter((l) => l.component === 'releases').map((l) => [l.level, l.msg]);

t.test('a running server keeps its release and says why it refused the new one', async (t) => {
  let demo = '';
  const s = await start(t, (_dir, file) => (demo = file));
  const served = demo.replace(/\.sqlite$/, '');
  t.equal(((await s.get('/v1/ip/23.228.249.10')).json() as { release: { id: string } }).release.id, served);

  for (const [id, version] of [
    [NEWER, RELEASE_SCHEMA_VERSION + 1],
    [OLDER, RELEASE_SCHEMA_VERSION - 1],
  ] as const) {
    const name = releaseOfSchema(s.dir, demo, id, version);
    pointCurrentAt(s.dir, name);
    s.server.releases.check();
    const why =
      `release ${name} refused: release ${path.join(s.dir, name)} has schema version ${version}; ` +
      `this server reads version ${RELEASE_SCHEMA_VERSION} only: build a new release with the builder ` +
      `of this version (npx builder release), or serve with the version that built this file`;

    const lookup = await s.get('/v1/ip/23.228.249.10');
    t.equal(lookup.status, 200, `schema ${version}: lookups still answer`);
    t.equal((lookup.json() as { release: { id: string } }).release.id, served, 'from the previous release');
    const health = await s.get('/health', null);
    t.equal(health.status, 200);
    t.match(health.json(), {
      status: 'healthy',
      checks: { release: 'error' },
      release: { status: 'ok', id: served, error: why },
    });
    t.same(releaseLog(s).at(-1), [50, `${why}; still serving ${served}`], 'the log says it at error level');
  }
  const refusals = releaseLog(s).filter(([, msg]) => (msg as string).includes('refused')).length;
  s.server.releases.check();
  t.equal(
    releaseLog(s).filter(([, msg]) => (msg as string).includes('refused')).length,
    refusals,
    'once per file',
  );

  pointCurrentAt(s.dir, copyReleaseAs(s.dir, demo, GOOD));
  s.server.releases.check();
  t.equal(((await s.get('/v1/ip/23.228.249.10')).json() as { release: { id: string } }).release.id, GOOD);
  const health = (await s.get('/health', null)).json() as { checks: { release: string }; release: object };
  t.equal(health.checks.release, 'ok', 'a release it reads clears the error');
  t.notOk('error' in health.release);
});

t.test('a server started on a release of another schema answers 503 and says why', async (t) => {
  let demo = '';
  const s = await start(t, (dir, file) => {
    demo = file;
    pointCurrentAt(dir, releaseOfSchema(dir, file, NEWER, RELEASE_SCHEMA_VERSION + 1));
  });
  const lookup = await s.get('/v1/ip/23.228.249.10');
  t.equal(lookup.status, 503);
  t.match(lookup.json(), { error: 'release_unavailable' });
  const health = (await s.get('/health', null)).json() as {
    status: string;
    release: { status: string; error: string };
  };
  t.equal(health.status, 'healthy');
  t.equal(health.release.status, 'unavailable');
  t.match(
    health.release.error,
    `has schema version ${RELEASE_SCHEMA_VERSION + 1}; this server reads version`,
  );
  t.match(releaseLog(s), [[50, /refused: .* has schema version .*; no release is served$/]]);

  pointCurrentAt(s.dir, copyReleaseAs(s.dir, demo, GOOD));
  s.server.releases.check();
  t.equal((await s.get('/v1/ip/23.228.249.10')).status, 200, 'the next readable release is served');
});
