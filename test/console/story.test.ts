/**
 * The console's whole story in headless Chromium against the real server and a real SMTP server:
 * invite, sign in by the e-mailed link, create a workspace, project and key, call the API with the
 * key (200), revoke it (401), step up by e-mailed code and by TOTP, run the playground, set a
 * project cap (402 past it), see usage and the chart, invite a member, sign out. On every page axe-
 * core finds no serious or critical violation, no Content-Security-Policy violation is reported,
 * and a screenshot is saved at desktop and phone widths (var/screenshots/, or docs/screenshots/
 * with UPDATE_SCREENSHOTS=1).
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import t from 'tap';
import { generate } from 'otplib';
import type { Page } from 'playwright-core';
import { ROOT } from '../helpers/demo-release.js';
import { linkIn, startBrowser, startConsoleServer } from '../helpers/console.js';
import { sha256 } from '../../console/security.js';

/**
 * Where the screenshots go: var/screenshots/ on every run, docs/screenshots/ (those of docs/operations.md) with
 * UPDATE_SCREENSHOTS=1, so that `make test` leaves the checkout as it found it.
 */
const SHOTS = process.env.UPDATE_SCREENSHOTS
  ? path.join(ROOT, 'docs', 'screenshots')
  : path.join(ROOT, 'var', 'screenshots');
const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');
const OWNER = 'owner@example.test';

t.setTimeout(600_000);

t.test('invite, sign in, workspace, project, keys, step-up, playground, cap, usage', async (t) => {
  const server = await startConsoleServer(t);
  const context = await startBrowser(t);
  const page = await context.newPage();
  page.setDefaultTimeout(30_000);
  const cspViolations: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) cspViolations.push(message.text());
  });
  fs.mkdirSync(SHOTS, { recursive: true });
  const visited: string[] = [];

  /** axe-core on the page (no serious or critical violation) and screenshots at two widths. */
  async function check(name: string, p: Page = page) {
    await p.evaluate(AXE);
    const violations = (await p.evaluate(
      'axe.run(document, { resultTypes: ["violations"] }).then(r => r.violations.map(v => ({ id: v.id, impact: v.impact, nodes: v.nodes.map(n => n.target.join(" ")) })))',
    )) as { id: string; impact: string; nodes: string[] }[];
    const bad = violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
    t.same(bad, [], `${name}: no serious or critical axe violation`);
    await p.screenshot({ path: path.join(SHOTS, `${name}-desktop.png`), fullPage: true });
    await p.setViewportSize({ width: 390, height: 780 });
    await p.screenshot({ path: path.join(SHOTS, `${name}-phone.png`), fullPage: true });
    await p.setViewportSize({ width: 1280, height: 800 });
    visited.push(name);
  }

  const api = async (key: string, urlPath: string) => {
    const response = await fetch(server.api + urlPath, { headers: { authorization: `Bearer ${key}` } });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };

  /** Makes the session's sign-in older than ten minutes (as if time had passed). */
  async function ageSession() {
    const cookie = (await context.cookies(server.console)).find((c) => c.name === '__Host-ipscope-session');
    t.ok(cookie, 'the session cookie is set');
    t.equal(cookie!.httpOnly, true, 'HttpOnly');
    t.equal(cookie!.secure, true, 'Secure');
    t.equal(cookie!.sameSite, 'Lax', 'SameSite=Lax');
    const id = sha256(cookie!.value);
    t.ok(await server.store.rotateSession(id, id, new Date(Date.now() - 11 * 60_000)));
  }

  // Invite (the admin CLI's operation) and sign in by the e-mailed link.
  await server.store.inviteUser(OWNER);
  await page.goto(`${server.console}/sign-in`);
  await check('sign-in');
  const before = server.sink.mails.length;
  await page.getByLabel('E-mail address').fill(OWNER);
  await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
  await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
  await check('check-email');
  const link = linkIn(await server.sink.next(OWNER, before));
  t.match(
    link,
    new RegExp(`^${server.console}/sign-in/link\\?token=[\\w-]{43}$`),
    'the link has 256 random bits',
  );
  await page.goto(link);
  await check('confirm-sign-in');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
  await check('workspaces-empty');

  // A workspace (Free plan) and a project.
  await page.getByLabel('Name').fill('Acme');
  await page.getByRole('button', { name: 'Create workspace' }).click();
  await page.getByRole('heading', { name: 'Acme' }).waitFor();
  t.match(await page.textContent('main'), /Plan: Free/);
  await page.getByLabel('Name').fill('Website');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('heading', { name: 'Website' }).waitFor();
  const projectUrl = page.url();

  // A key, shown once with a copy button; the API answers 200 with it.
  await page.getByRole('link', { name: 'Create a key' }).click();
  await page.getByRole('heading', { name: 'Create an API key' }).waitFor();
  await check('key-new');
  await page.getByLabel('Label').fill('CI');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('heading', { name: 'Your new API key' }).waitFor();
  const key = (await page.textContent('#new-key'))!.trim();
  t.match(key, /^sk_[0-9A-Za-z]{32}$/);
  t.ok(await page.getByRole('button', { name: 'Copy' }).isVisible(), 'copy button');
  await check('key-created');
  const ok = await api(key, '/v1/ip/104.16.132.229');
  t.equal(ok.status, 200, 'the new key works');

  // The project page lists it by its first and last characters only.
  await page.goto(projectUrl);
  const listed = await page.textContent('main');
  t.notOk(listed!.includes(key), 'the key is not shown again');
  t.ok(listed!.includes(`${key.slice(0, 7)}…${key.slice(-4)}`), 'its first and last characters are');

  // Revoke with a confirmation: the API answers 401.
  await page.getByRole('link', { name: /^Revoke CI/ }).click();
  await page.getByRole('heading', { name: 'Revoke this key?' }).waitFor();
  await check('key-revoke');
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByText('The key is revoked').waitFor();
  t.equal((await api(key, '/v1/ip/104.16.132.229')).status, 401, 'the revoked key is refused');

  // Step-up by an e-mailed code once the sign-in is older than ten minutes.
  await ageSession();
  await page.getByRole('link', { name: 'Create a key' }).click();
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
  const beforeCode = server.sink.mails.length;
  await page.getByRole('button', { name: `E-mail a code to ${OWNER}` }).click();
  const codeMail = await server.sink.next(OWNER, beforeCode);
  const code = /\b(\d{8})\b/.exec(codeMail.text)![1]!;
  await page.getByLabel('Code from the e-mail').waitFor();
  await check('step-up-email');
  await page.getByLabel('Code from the e-mail').fill(code);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('heading', { name: 'Create an API key' }).waitFor();
  await page.getByLabel('Label').fill('backend');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key2 = (await page.textContent('#new-key'))!.trim();
  t.equal((await api(key2, '/v1/ping')).status, 200, 'the key created after the e-mailed code works');

  // Two-factor sign-in with an authenticator (TOTP), then step-up with its code.
  await page.goto(`${server.console}/account`);
  await check('account');
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  await page.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
  await check('totp-setup');
  const secret = (await page.textContent('#totp-secret'))!.trim();
  const enrolCode = await generate({ secret });
  await page.getByLabel('Code from the app').fill(enrolCode);
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByRole('heading', { name: 'Two-factor sign-in is on' }).waitFor();
  t.equal(await page.locator('#recovery-codes li').count(), 10, 'ten recovery codes');
  await check('totp-recovery-codes');
  await ageSession();
  await page.goto(projectUrl);
  await page.getByRole('link', { name: 'Create a key' }).click();
  await page.getByLabel('Authenticator code').waitFor();
  await check('step-up-totp');
  await page.getByLabel('Authenticator code').fill(enrolCode);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByText('That code is not right').waitFor();
  t.pass('an authenticator code works once (the enrolment code is refused now)');
  // The next period's code (accepted within the ±30 s tolerance).
  const nextCode = await generate({ secret, epoch: Math.floor(Date.now() / 1000) + 30 });
  await page.getByLabel('Authenticator code').fill(nextCode);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('heading', { name: 'Create an API key' }).waitFor();
  await page.getByLabel('Label').fill('worker');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key3 = (await page.textContent('#new-key'))!.trim();
  t.equal((await api(key3, '/v1/ping')).status, 200, 'the key created after the TOTP step-up works');

  // The playground: a form from the operation table, run through the call envelope.
  await page.goto(projectUrl);
  await page.getByRole('link', { name: 'Playground' }).click();
  await page.getByRole('heading', { name: 'Playground' }).waitFor();
  await page.locator('input[name="ip"]').fill('104.16.132.229');
  await page.getByRole('button', { name: 'Run' }).click();
  await page.getByRole('heading', { name: /Response: 200/ }).waitFor();
  const body = JSON.parse((await page.textContent('pre code'))!) as { ip: string };
  t.equal(body.ip, '104.16.132.229', 'the playground shows the pretty-printed answer');
  t.match(await page.textContent('main'), /x-quota-limit\s*10000/, 'and the limit headers');
  await check('playground');
  const keys = await server.store.listKeys({ workspaceId: (await server.store.listWorkspaces())[0]!.id });
  const playgroundKeys = keys.filter((k) => k.label === 'Playground');
  t.equal(playgroundKeys.length, 1, 'the playground made one key labelled Playground');
  const days =
    (playgroundKeys[0]!.expiresAt!.getTime() - playgroundKeys[0]!.createdAt.getTime()) / 86_400_000;
  t.equal(days, 90, 'expiring after 90 days');
  t.notOk((await page.content()).includes('sk_'), 'no key reaches the browser');

  // A project cap: the fourth counted request of the month is refused with 402.
  await page.goto(projectUrl);
  // Counted so far: 1 (first key) + 1 (key2 ping) + 1 (key3 ping) + 1 (playground) = 4.
  await page.getByLabel("Requests per month for this project's keys").fill('6');
  await page.getByRole('button', { name: 'Save cap' }).click();
  await page.getByText('The monthly cap is saved.').waitFor();
  t.equal((await api(key2, '/v1/ping')).status, 200);
  t.equal((await api(key3, '/v1/ping')).status, 200);
  const capped = await api(key3, '/v1/ping');
  t.equal(capped.status, 402);
  t.equal(capped.body.error, 'project_cap_exceeded');

  // Usage: the counts reach the page (the usage flush writes them every 50 ms here).
  await new Promise((r) => setTimeout(r, 300));
  await page.goto(projectUrl);
  const usageText = await page.textContent('main');
  t.match(usageText, /Project cap: 6 of 6 requests \(100%\)/);
  t.match(usageText, /Workspace quota: 6 of 10,000 requests/);
  t.match(await page.textContent('svg.chart title'), /6 requests in \d{4}-\d{2}/, 'the chart counts them');
  t.not(
    await page.locator('svg.chart rect.bar[height="0"]').count(),
    await page.locator('svg.chart rect.bar').count(),
  );
  await check('project');
  await page.goto(`${server.console}${new URL(projectUrl).pathname.replace(/\/p\/.*$/, '')}`);
  await check('workspace');

  // Members: invite one (they get a mail and may sign in).
  await page.getByRole('link', { name: 'Members' }).click();
  const beforeInvite = server.sink.mails.length;
  await page.getByLabel('E-mail address').fill('colleague@example.test');
  await page.getByRole('button', { name: 'Invite' }).click();
  await page.getByText('Invitation sent').waitFor();
  t.match((await server.sink.next('colleague@example.test', beforeInvite)).subject, /invited to Acme/);
  await check('members');

  await page.goto(`${server.console}/w/ws_0000000000000000`);
  await check('not-found');

  await page.getByRole('button', { name: /Sign out/ }).click();
  await page.getByRole('heading', { name: 'Signed out' }).waitFor();
  await check('signed-out');
  await page.goto(projectUrl);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.pass('after sign-out the session no longer opens pages');

  t.same(cspViolations, [], 'no Content-Security-Policy violation on any page');
  t.equal(visited.length, 18, 'every page was checked');
});
