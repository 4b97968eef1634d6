/**
 * The console's e-mail limits are one budget for the whole server, not one per process: with
 * `server serve --workers 2` (the console in each worker, the counts in the primary), ten sign-in
 * requests for one invited address, each from a new client connection, send exactly five links.
 */
import net from 'node:net';
import path from 'node:path';
import t from 'tap';
import { copyDemoRelease } from '../helpers/demo-release.js';
import { FormClient, startMailSink } from '../helpers/console.js';
import { serverCli, spawnServer } from '../helpers/limits.js';

/** A TCP port nobody listens on now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

t.test('two workers: five sign-in links per address in all', async (t) => {
  const dir = t.testdir({});
  const { releasesDir } = copyDemoRelease(path.join(dir, 'releases'));
  const sink = await startMailSink(t);
  const port = await freePort();
  const env = {
    RELEASES_DIR: releasesDir,
    ACCOUNTS_DB: path.join(dir, 'accounts.sqlite'),
    CONSOLE_URL: `http://localhost:${port}`,
    CONSOLE_PORT: String(port),
    SMTP_URL: sink.url,
    WORKERS: '2',
    LOG_LEVEL: 'info',
  };
  await serverCli(['invite', 'owner@example.test'], env);
  const server = await spawnServer(t, env);
  const answered: number[] = [];
  for (let i = 0; i < 10; i++) {
    // A new client each time: its own connection, so the requests reach both workers.
    const client = new FormClient(`http://localhost:${port}`);
    const csrf = await client.csrf('/sign-in');
    answered.push((await client.post('/sign-in', { _csrf: csrf, email: 'owner@example.test' })).status);
  }
  t.same(answered, Array(10).fill(200), 'the same answer every time (it reveals nothing)');
  // The links go out after the answer: give the last ones time to arrive.
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  t.equal(sink.mails.filter((m) => m.to === 'owner@example.test').length, 5, 'five links, not ten');
  // Both workers took sign-in requests (their request log lines carry their pid).
  const lines = server
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map(
      (line) => JSON.parse(line) as { pid?: number; msg?: string; req?: { method?: string; url?: string } },
    );
  const pids = new Set(
    lines.filter((l) => l.msg === 'incoming request' && l.req?.url === '/sign-in').map((l) => l.pid),
  );
  t.equal(pids.size, 2, `both workers answered sign-in requests (pids ${[...pids].join(', ')})`);
  t.ok(lines.filter((l) => l.msg?.includes('sign-in link not sent')).length === 5, 'five refusals logged');
});
