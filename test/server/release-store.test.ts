/** ReleaseStore on its own: loading, refusing, not retrying a broken target, closing after grace. */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { ReleaseStore } from '../../server/releases/store.js';
import { openRelease } from '../../shared/queries/index.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { copyReleaseAs, pointCurrentAt } from '../helpers/release-files.js';

t.test('no CURRENT: nothing served, health says how to fix it; a later CURRENT is picked up', async (t) => {
  const dir = t.testdir({});
  const store = new ReleaseStore({ dir, pollMs: 60_000 }).start();
  t.teardown(() => store.close());
  t.equal(store.current(), null);
  const health = store.health();
  t.equal(health.status, 'unavailable');
  t.equal(health.id, null);
  t.match(health.error, /CURRENT does not exist: publish a release with "npx builder release"/);

  const { file, id } = copyDemoRelease(path.join(dir, 'copy'));
  fs.copyFileSync(path.join(dir, 'copy', file), path.join(dir, file));
  pointCurrentAt(dir, file);
  store.check();
  t.equal(store.current()?.id, id);
  t.equal(store.health().status, 'ok');
  t.equal(store.health().error, undefined);
});

t.test('CURRENT may only name a release file in the directory', async (t) => {
  const dir = t.testdir({ CURRENT: '../elsewhere/x.sqlite\n' });
  const store = new ReleaseStore({ dir, pollMs: 60_000 }).start();
  t.teardown(() => store.close());
  t.equal(store.current(), null);
  t.match(store.health().error, /not a release file name/);
});

t.test('a broken target is tried once, again only when CURRENT or the file changes', async (t) => {
  const dir = t.testdir({});
  const { file, id } = copyDemoRelease(dir);
  let opens = 0;
  const store = new ReleaseStore({
    dir,
    pollMs: 60_000,
    open: (f) => {
      opens += 1;
      return openRelease(f);
    },
  }).start();
  t.teardown(() => store.close());
  t.equal(opens, 1);
  t.equal(store.current()?.id, id);

  fs.writeFileSync(path.join(dir, 'broken.sqlite'), 'garbage');
  pointCurrentAt(dir, 'broken.sqlite');
  store.check();
  store.check();
  store.check();
  t.equal(opens, 2, 'the broken file is opened once');
  t.equal(store.current()?.id, id, 'the old release stays');
  t.match(store.health().error, /release broken\.sqlite refused/);

  fs.writeFileSync(path.join(dir, 'broken.sqlite'), 'still garbage, but longer');
  store.check();
  t.equal(opens, 3, 'a changed file is tried again');

  const good = copyReleaseAs(dir, file, '20300101T000000Z');
  pointCurrentAt(dir, good);
  store.check();
  t.equal(opens, 4);
  t.equal(store.current()?.id, '20300101T000000Z');
  t.equal(store.health().error, undefined);
});

t.test('the replaced release is closed after the grace period, not before', async (t) => {
  const dir = t.testdir({});
  const { file } = copyDemoRelease(dir);
  const store = new ReleaseStore({ dir, pollMs: 60_000, graceMs: 300 }).start();
  t.teardown(() => store.close());
  const old = store.current()!;
  pointCurrentAt(dir, copyReleaseAs(dir, file, '20300101T000000Z'));
  store.check();
  t.not(store.current(), old);
  t.ok(old.db.open, 'still open right after the swap');
  await new Promise((resolve) => setTimeout(resolve, 500));
  t.notOk(old.db.open, 'closed after the grace period');
  await store.close();
  t.equal(store.current(), null);
});
