/**
 * The release swap end to end: a new release is served within 2 s of CURRENT changing while a loop
 * of requests sees no failure; cursors of the old release expire (410); a corrupt release is
 * refused, the old one stays and /health says why.
 */
import t from 'tap';
import fs from 'node:fs';
import path from 'node:path';
import { startTestServer } from '../helpers/test-server.js';
import { copyReleaseAs, pointCurrentAt } from '../helpers/release-files.js';

const NEW_ID = '20300101T000000Z';

t.test('a new release is served within 2 s, no request fails during the swap', async (t) => {
  const s = await startTestServer(t, { pollMs: 200 });
  const oldFile = `${s.releaseId}.sqlite`;
  const newFile = copyReleaseAs(s.releasesDir, oldFile, NEW_ID);

  const firstPage = (await s.get('/v1/ip/23.228.249.10/domains?limit=1')).json() as { next_cursor: string };
  t.type(firstPage.next_cursor, 'string', 'a cursor under the old release');

  let stop = false;
  const seen = new Set<string>();
  const failures: string[] = [];
  let requests = 0;
  const loop = async () => {
    while (!stop) {
      const r = await s.get('/v1/ip/23.228.249.10');
      requests += 1;
      if (r.status !== 200) failures.push(`${r.status} ${r.text}`);
      else seen.add((r.json() as { release: { id: string } }).release.id);
    }
  };
  const loops = [loop(), loop(), loop(), loop()];

  await new Promise((resolve) => setTimeout(resolve, 100));
  const swappedAt = Date.now();
  pointCurrentAt(s.releasesDir, newFile);
  let servedAfter = -1;
  while (Date.now() - swappedAt < 5_000) {
    const r = await s.get('/v1/ping');
    t.equal(r.status, 200);
    const h = (await s.get('/health', { key: null })).json() as { release: { id: string } };
    if (h.release.id === NEW_ID) {
      const lookup = (await s.get('/v1/domain/example.com/hosting')).json() as { release: { id: string } };
      if (lookup.release.id === NEW_ID) {
        servedAfter = Date.now() - swappedAt;
        break;
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  await new Promise((resolve) => setTimeout(resolve, 200));
  stop = true;
  await Promise.all(loops);

  t.ok(servedAfter >= 0 && servedAfter < 2_000, `new release served after ${servedAfter} ms`);
  t.same(failures, [], `no failed request among ${requests}`);
  t.ok(seen.has(s.releaseId!) && seen.has(NEW_ID), 'the loop saw both releases');

  const expired = await s.get(`/v1/ip/23.228.249.10/domains?limit=1&cursor=${firstPage.next_cursor}`);
  t.equal(expired.status, 410);
  t.equal((expired.json() as { error: string }).error, 'cursor_expired');

  const health = (await s.get('/health', { key: null })).json() as {
    checks: { release: string };
    release: Record<string, unknown>;
  };
  t.equal(health.checks.release, 'ok');
  t.equal(health.release.status, 'ok');
  t.equal(health.release.id, NEW_ID);
  t.type(health.release.built_at, 'string');
  t.type(health.release.age_seconds, 'number');
  t.notOk('error' in health.release);
});

t.test('a corrupt release is refused: the old one stays, /health says why', async (t) => {
  const s = await startTestServer(t, { pollMs: 60_000 });
  const broken = `${NEW_ID}.sqlite`;
  fs.writeFileSync(path.join(s.releasesDir, broken), Buffer.alloc(8192, 'not a database'));
  pointCurrentAt(s.releasesDir, broken);
  s.releases.check();

  const lookup = await s.get('/v1/domain/example.com/history');
  t.equal(lookup.status, 200, 'lookups still answer');
  t.equal((lookup.json() as { release: { id: string } }).release.id, s.releaseId, 'from the old release');

  const r = await s.get('/health', { key: null });
  t.equal(r.status, 200);
  const health = r.json() as {
    status: string;
    checks: { release: string };
    release: { status: string; id: string; error: string };
  };
  t.equal(health.status, 'healthy');
  t.equal(health.checks.release, 'error', 'the refusal shows in the checks');
  t.equal(health.release.status, 'ok');
  t.equal(health.release.id, s.releaseId);
  t.match(health.release.error, `release ${broken} refused`);
  t.match(health.release.error, /not a database/);

  // Fixing the pointer (back to the release in service) clears the error.
  pointCurrentAt(s.releasesDir, `${s.releaseId}.sqlite`);
  s.releases.check();
  const fixed = (await s.get('/health', { key: null })).json() as {
    checks: { release: string };
    release: object;
  };
  t.equal(fixed.checks.release, 'ok');
  t.notOk('error' in fixed.release);
});
