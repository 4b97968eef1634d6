/**
 * The playground in headless Chromium: switching the operation shows its form without a page load
 * (console.js, a file under the CSP); a run is a POST that redirects to the page with the run in
 * its address, so a reload shows the same answer without running (and counting) again; copy JSON
 * and copy as curl put the answer and a working curl command on the clipboard; the Playground key
 * never reaches the browser.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import t from 'tap';
import { startStory } from '../helpers/console-story.js';

const OWNER = 'owner@example.test';

t.setTimeout(600_000);

t.test('playground: switch without reload, run once, copy JSON and curl', async (t) => {
  const story = await startStory(t);
  const { server, page, context, check } = story;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.console });
  await server.store.inviteUser(OWNER);
  const ws = await server.store.createWorkspace({ name: 'Acme' });
  await server.store.addMember(ws.id, OWNER, 'owner');
  const prj = await server.store.createProject({ workspaceId: ws.id, name: 'Website' });
  await story.signIn(OWNER);
  await page.goto(`${server.console}/w/${ws.id}/p/${prj.id}`);
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('heading', { name: 'Playground' }).waitFor();
  t.equal(
    await page.getByRole('button', { name: 'Choose' }).isVisible(),
    false,
    'no Choose button with scripts',
  );

  // Switching the operation: no page load (a mark set on the page survives), the address follows.
  await page.evaluate(() => ((window as unknown as { mark: number }).mark = 42));
  await page.getByLabel('Operation').selectOption('ip_domains');
  await page.locator('[data-op="ip_domains"] input[name="ip"]').waitFor({ state: 'visible' });
  t.equal(await page.evaluate(() => (window as unknown as { mark?: number }).mark), 42, 'no page load');
  t.match(page.url(), /\?op=ip_domains$/);
  t.equal(await page.locator('[data-op="lookup_ip"]').isVisible(), false, 'the other forms are hidden');
  await page.getByLabel('Operation').selectOption('lookup_ip');

  // A run: POST, then the page with the run; the answer, the limit headers, copy buttons.
  const counted = async () =>
    (await server.store.listDailyUsage(ws.id, '2000-01-01', '2100-01-01')).reduce((n, d) => n + d.count, 0);
  await page.locator('[data-op="lookup_ip"] input[name="ip"]').fill('104.16.132.229');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByRole('heading', { name: /Response: 200/ }).waitFor();
  t.match(
    page.url(),
    /\/playground\?op=lookup_ip&ip=104\.16\.132\.229&run=[\w-]{12}$/,
    'the run is in the address',
  );
  const body = JSON.parse((await page.textContent('#result-json'))!) as { ip: string };
  t.equal(body.ip, '104.16.132.229', 'the playground shows the pretty-printed answer');
  t.match(await page.textContent('main'), /x-quota-limit\s*10000/, 'and the limit headers');
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await counted(), 1, 'the run counted once');
  await check('playground', { dark: true });

  await page.reload();
  await page.getByRole('heading', { name: /Response: 200/ }).waitFor();
  await new Promise((r) => setTimeout(r, 300));
  t.equal(await counted(), 1, 'a reload shows the answer again without running again');

  await page.getByRole('button', { name: 'Copy JSON' }).click();
  await page.locator('button[data-copy="result-json"]', { hasText: 'Copied' }).waitFor();
  const copied = await page.evaluate(() => navigator.clipboard.readText());
  t.same(JSON.parse(copied), body, 'Copy JSON copies the answer');
  await page.getByRole('button', { name: 'Copy as curl' }).click();
  await page.locator('button[data-copy="curl"]', { hasText: 'Copied' }).waitFor();
  const curl = await page.evaluate(() => navigator.clipboard.readText());
  t.equal(
    curl,
    `curl -H "Authorization: Bearer $IPSCOPE_KEY" '${server.api}/v1/ip/104.16.132.229'`,
    'Copy as curl copies the request',
  );
  // The copied command works as it is, with a key of the project in IPSCOPE_KEY.
  const { key } = await server.store.createKey({ projectId: prj.id, label: 'curl' });
  // Not execFileSync: the server answering it runs in this process.
  const { stdout: out } = await promisify(execFile)('bash', ['-c', `${curl} -s -m 20 -w '\\n%{http_code}'`], {
    env: { ...process.env, IPSCOPE_KEY: key },
  });
  t.match(out, /"ip":\s*"104\.16\.132\.229"[\s\S]*\n200$/, 'and answers 200 with the same address');

  const keys = await server.store.listKeys({ workspaceId: ws.id });
  const playgroundKeys = keys.filter((k) => k.label === 'Playground');
  t.equal(playgroundKeys.length, 1, 'the playground made one key labelled Playground');
  const days =
    (playgroundKeys[0]!.expiresAt!.getTime() - playgroundKeys[0]!.createdAt.getTime()) / 86_400_000;
  t.equal(days, 90, 'expiring after 90 days');
  t.notOk((await page.content()).includes('sk_'), 'no key reaches the browser');

  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
});
