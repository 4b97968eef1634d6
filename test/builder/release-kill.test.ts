/**
 * Kills `builder release` with SIGKILL at random points, 20 times (200 in `make soak`:
 * test/reliability/profile.ts), and checks after each kill
 * that CURRENT still names a complete release that opens and passes PRAGMA quick_check; then a
 * normal run cleans the leftovers and publishes. Also: a second builder refuses while one runs.
 */
import t from 'tap';
import Database from 'better-sqlite3';
import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROFILE } from '../reliability/profile.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const builder = path.join(root, 'bin/builder.js');
const work = fs.mkdtempSync(path.join(os.tmpdir(), 'kill-'));
const stateDir = path.join(work, 'state');
const releasesDir = path.join(work, 'releases');
t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));

function run(...args: string[]) {
  const r = spawnSync(
    process.execPath,
    [builder, '--state-dir', stateDir, '--releases-dir', releasesDir, ...args],
    {
      encoding: 'utf8',
    },
  );
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

function checkCurrent(): string {
  const name = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim();
  const db = new Database(path.join(releasesDir, name), { readonly: true, fileMustExist: true });
  try {
    const check = db.pragma('quick_check', { simple: true });
    const id = db.prepare(`SELECT value FROM meta WHERE key = 'release_id'`).pluck().get();
    return `${name}:${String(check)}:${String(id)}`;
  } finally {
    db.close();
  }
}

// State: the real iptoasn excerpt and a few thousand generated observations.
const fixtures = path.join(root, 'test/fixtures/feeds/iptoasn');
t.equal(
  run('import', 'iptoasn', path.join(fixtures, 'ip2asn-v4.tsv'), path.join(fixtures, 'ip2asn-v6.tsv')).status,
  0,
);
const lines: string[] = [];
for (let i = 0; i < 3000; i++) {
  lines.push(
    JSON.stringify({
      name: `name${i}.example`,
      type: 'A',
      time: '2026-10-01T00:00:00Z',
      outcome: 'positive',
      values: [`104.16.${i % 256}.${(i * 7) % 256}`],
      cnames: [],
    }),
  );
}
fs.writeFileSync(path.join(work, 'round-1.ndjson'), `${lines.join('\n')}\n`);
t.equal(run('import', 'observations', path.join(work, 'round-1.ndjson')).status, 0);

const first = run('release');
t.equal(first.status, 0, first.out);
const good = checkCurrent();
t.match(good, /^\d{8}T\d{6}Z\.sqlite:ok:\d{8}T\d{6}Z$/);

const KILLS = PROFILE.builderKills;

t.test(
  `SIGKILL at ${KILLS} random points of builder release`,
  { timeout: 240_000 + KILLS * 15_000 },
  async (t) => {
    const started = Date.now();
    t.equal(run('release').status, 0);
    // The length of a full run, updated by every run that finished: a loaded machine speeds up and
    // slows down, and the kill moments follow it.
    let fullRun = Date.now() - started;
    let killedMidway = 0;
    for (let i = 0; i < KILLS; i++) {
      const child = spawn(
        process.execPath,
        [builder, '--state-dir', stateDir, '--releases-dir', releasesDir, 'release'],
        {
          stdio: 'ignore',
        },
      );
      const spawnedAt = Date.now();
      const delay = Math.floor(Math.random() * fullRun * 1.1);
      const exit = await new Promise<NodeJS.Signals | null>((resolve) => {
        const timer = setTimeout(() => child.kill('SIGKILL'), delay);
        child.on('exit', (_code, signal) => {
          clearTimeout(timer);
          resolve(signal);
        });
      });
      if (exit === 'SIGKILL') killedMidway++;
      else fullRun = Date.now() - spawnedAt;
      t.match(
        checkCurrent(),
        /^(\d{8}T\d{6}Z)\.sqlite:ok:\1$/,
        `after kill ${i + 1} at ${delay} ms, CURRENT opens and passes quick_check`,
      );
    }
    t.ok(killedMidway >= KILLS / 2, `most runs were killed before finishing (${killedMidway} of ${KILLS})`);
    // The next normal run removes leftovers and publishes.
    const after = run('release');
    t.equal(after.status, 0, after.out);
    t.notOk(
      fs.readdirSync(releasesDir).some((n) => n.startsWith('.tmp-') || n.startsWith('CURRENT.tmp')),
      'no leftovers',
    );
    t.notOk(fs.existsSync(path.join(releasesDir, '.lock')), 'lock released');
    t.comment(
      `figures: ${KILLS} kills (${killedMidway} before the run finished, a full run ${fullRun} ms), ` +
        `CURRENT passed quick_check after every one, the next run left no leftovers`,
    );
  },
);

t.test('a second builder refuses while one holds the lock', async (t) => {
  // A live process other than the builder holds the lock: this test's own process.
  fs.writeFileSync(path.join(releasesDir, '.lock'), `${process.pid}\n`);
  const second = run('release');
  fs.rmSync(path.join(releasesDir, '.lock'));
  t.equal(second.status, 2);
  t.match(second.out, `builder: another builder (pid ${process.pid}) is working in ${releasesDir}`);
  // A lock left by a killed builder (dead pid) is taken over.
  fs.writeFileSync(path.join(releasesDir, '.lock'), '999999\n');
  t.equal(run('release').status, 0);
});

t.test('list and prune keep the current release', async (t) => {
  const listed = run('list');
  const current = fs.readFileSync(path.join(releasesDir, 'CURRENT'), 'utf8').trim();
  t.match(listed.out, `* ${current.replace('.sqlite', '')}`);
  t.equal(run('prune', '--keep', '1').status, 0);
  t.same(
    fs.readdirSync(releasesDir).filter((n) => n.endsWith('.sqlite')),
    [current],
  );
});
