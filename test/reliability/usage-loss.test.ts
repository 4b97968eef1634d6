/**
 * Counted usage lost when a metered server (embedded accounts store, in-process counters) is
 * killed with SIGKILL under load: counts are written to the store every USAGE_FLUSH_MS, so what
 * a kill can lose is at most the requests answered since the last write, i.e. those answered in
 * the last USAGE_FLUSH_MS before the kill (plus however late the flush timer runs on a busy
 * machine: the test allows one more interval). Nothing is counted twice: the store never holds
 * more than the answers the server sent. PROFILE.serverKills kills (test/reliability/profile.ts).
 */
import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { openAccountsStore } from '../../accounts/index.js';
import { monthOf } from '../../server/limits/counters.js';
import { createTestKey } from '../helpers/accounts.js';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { startLoad } from '../helpers/keepalive-load.js';
import { spawnServer } from '../helpers/limits.js';
import { PROFILE } from './profile.js';

const FLUSH_MS = 200;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test(`usage lost on SIGKILL is bounded by USAGE_FLUSH_MS (${PROFILE.serverKills} kills)`, async (t) => {
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'usage-loss-'));
  t.teardown(() => fs.rmSync(work, { recursive: true, force: true }));
  const releasesDir = path.join(work, 'releases');
  copyDemoRelease(releasesDir);
  const accounts = path.join(work, 'accounts.sqlite');
  const { key, workspaceId } = await createTestKey(accounts, {});
  const stored = async () => {
    const store = openAccountsStore(accounts);
    try {
      const rows = await store.listUsage(monthOf(Date.now()), { workspaceId });
      return rows.find((row) => row.scope === 'workspace' && row.id === workspaceId)?.used ?? 0;
    } finally {
      await store.close();
    }
  };

  const figures: string[] = [];
  let before = 0;
  for (let kill = 1; kill <= PROFILE.serverKills; kill++) {
    const server = await spawnServer(t, {
      ACCOUNTS_DB: accounts,
      RELEASES_DIR: releasesDir,
      USAGE_FLUSH_MS: String(FLUSH_MS),
      FREE_REQUESTS_PER_MINUTE: '1000000',
      FREE_MONTHLY_QUOTA: '100000000',
    });
    const answeredAt: number[] = [];
    const load = startLoad({
      servers: [server.url],
      paths: ['/v1/ping', '/v1/ip/104.16.132.229'],
      key,
      connections: 8,
      onAnswer: () => answeredAt.push(Date.now()),
    });
    await sleep(1000 + Math.random() * 1500);
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    const killedAt = Date.now();
    server.child.kill('SIGKILL');
    await exited;
    await load.stop();
    const after = await stored();
    const counted = after - before;
    before = after;
    const answered = answeredAt.length;
    const lost = answered - counted;
    // Answers in the last two flush intervals before the kill: an upper bound of what was unwritten.
    const window = answeredAt.filter((at) => at >= killedAt - 2 * FLUSH_MS).length;
    const lastInterval = answeredAt.filter((at) => at >= killedAt - FLUSH_MS).length;
    figures.push(`${lost} of ${answered} (${lastInterval} answered in the last ${FLUSH_MS} ms)`);
    // The server may have sent an answer the client had not read when it died: one per connection.
    t.ok(counted <= answered + 8, `kill ${kill}: ${counted} counted, ${answered} answers read`);
    t.ok(lost <= window, `kill ${kill}: ${lost} lost <= ${window} answered in the last ${2 * FLUSH_MS} ms`);
  }
  t.comment(`figures: lost of answered per kill, USAGE_FLUSH_MS=${FLUSH_MS}: ${figures.join('; ')}`);
});
