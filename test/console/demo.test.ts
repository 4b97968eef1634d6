/**
 * `make demo`'s console part: scripts/demo.sh (on the demo release, with free ports) prints the
 * console URL, the invited demo address and a sign-in link; the link signs in (confirm button
 * included) to the demo workspace; a link asked for on the sign-in page lands in the outbox folder
 * and in the log, as the script says.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { ROOT, copyDemoRelease } from '../helpers/demo-release.js';
import { FormClient, decodeQuotedPrintable } from '../helpers/console.js';

t.setTimeout(300_000);

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, '127.0.0.1', () => {
      const port = (server.address() as net.AddressInfo).port;
      server.close(() => resolve(port));
    });
  });

t.test('make demo prints a console sign-in link that works offline', async (t) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'demo-console-'));
  copyDemoRelease(path.join(dir, 'releases'));
  const [port, consolePort] = [await freePort(), await freePort()];
  const child = spawn('scripts/demo.sh', [], {
    cwd: ROOT,
    env: { ...process.env, DEMO_DIR: dir, PORT: String(port), CONSOLE_PORT: String(consolePort) },
    detached: true,
  });
  t.teardown(() => {
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      // already gone
    }
    fs.rmSync(dir, { recursive: true, force: true });
  });
  let out = '';
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (out += chunk.toString()));
  const deadline = Date.now() + 120_000;
  while (!/Later links:/.test(out)) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`demo.sh did not start:\n${out}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  const consoleUrl = `http://localhost:${consolePort}`;
  t.match(out, `Console: ${consoleUrl}`);
  t.match(out, 'Sign in as demo@example.com');
  t.match(out, `lands in ${dir}/outbox/`);
  const link = new RegExp(`${consoleUrl}/sign-in/link\\?token=[\\w-]{43}`).exec(out)?.[0];
  t.ok(link, 'a sign-in link is printed');

  const browser = new FormClient(consoleUrl);
  const token = new URL(link!).searchParams.get('token')!;
  const confirm = await browser.get(`/sign-in/link?token=${token}`);
  t.match(confirm.text, 'Confirm sign-in', 'opening the link shows a confirm button');
  const csrf = /name="_csrf" value="([\w-]+)"/.exec(confirm.text)![1]!;
  t.equal(
    (await browser.post('/sign-in/link', { _csrf: csrf, token })).status,
    303,
    'the printed link signs in',
  );
  const home = await browser.get('/');
  t.equal(home.status, 200);
  t.match(home.text, />demo<\/a> <span class="muted">\(owner\)/, 'into the demo workspace, as its owner');

  // The API is printed on 127.0.0.1: the console answers its forms there too, and on [::1].
  for (const host of ['127.0.0.1', '[::1]']) {
    const there = new FormClient(`http://${host}:${consolePort}`);
    const sent = await there.post('/sign-in', {
      _csrf: await there.csrf('/sign-in'),
      email: 'demo@example.com',
    });
    t.equal(sent.status, 200, `the sign-in form is accepted on ${host}`);
  }

  const asker = new FormClient(consoleUrl);
  await asker.post('/sign-in', { _csrf: await asker.csrf('/sign-in'), email: 'demo@example.com' });
  const outbox = path.join(dir, 'outbox');
  const until = Date.now() + 20_000;
  while (!(fs.existsSync(outbox) && fs.readdirSync(outbox).some((f) => f.endsWith('.eml')))) {
    if (Date.now() > until) throw new Error('no mail in the outbox');
    await new Promise((r) => setTimeout(r, 100));
  }
  const mail = decodeQuotedPrintable(
    fs.readFileSync(
      path.join(
        outbox,
        fs.readdirSync(outbox).find((f) => f.endsWith('.eml'))!,
      ),
      'utf8',
    ),
  );
  t.match(mail, /To: demo@example.com/);
  t.match(mail, new RegExp(`${consoleUrl}/sign-in/link\\?token=[\\w-]{43}`), 'the outbox mail has the link');
  // The server writes the mail, then logs it: the line may reach server.out a moment after the file.
  const logged = /sign-in\/link\?token=[\w-]{43}/;
  const serverOut = () => fs.readFileSync(path.join(dir, 'server.out'), 'utf8');
  const logDeadline = Date.now() + 10_000;
  while (!logged.test(serverOut()) && Date.now() < logDeadline) {
    await new Promise((r) => setTimeout(r, 100));
  }
  t.match(serverOut(), logged, 'the link is in the log');
});
