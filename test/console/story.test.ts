/**
 * The console's main story in headless Chromium against the real server and a real SMTP server:
 * invite, sign in by the e-mailed link, create a workspace, project and key (shown once with a
 * copy button; story-forms.test.ts reloads it and goes Back), call the API with the
 * key (200), revoke it after a confirmation (401), step up by e-mailed code (not in the subject)
 * and by TOTP, set a project cap (402 past it, a warning at 100%), see usage, the chart and the
 * keys table (active first, revoked folded away with their dates, who created each key), invite a
 * member, sign out. Every page is checked by `check` (test/helpers/console-story.ts): axe-core at
 * 1280 and 390 px in light and dark, no sideways scrolling, no CSP violation, screenshots.
 */
import t from 'tap';
import { generate } from 'otplib';
import { linkIn } from '../helpers/console.js';
import { startStory } from '../helpers/console-story.js';

const OWNER = 'owner@example.test';

t.setTimeout(600_000);

t.test('invite, sign in, workspace, project, keys, step-up, cap, usage, members', async (t) => {
  const story = await startStory(t);
  const { server, page, check } = story;

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
  t.match(await page.textContent('main'), /No projects yet\. A project holds API keys/, 'an empty state');
  await page.getByLabel('Name').fill('Website');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.getByRole('heading', { name: 'Website' }).waitFor();
  const projectUrl = page.url();
  t.match(await page.textContent('main'), /No active keys in this project\. Create one to call the API\./);
  t.match(
    await page.textContent('main'),
    /Project Website: no requests counted yet in \d{4}-\d{2}/,
    'an empty chart says so',
  );
  t.equal(await page.locator('svg.chart').count(), 0, 'and draws no axis of 0 to 1');

  // A key, shown once (after a redirect: story-forms.test.ts reloads it) with a copy button.
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
  t.equal((await story.api(key, '/v1/ip/104.16.132.229')).status, 200, 'the new key works');
  // The project page lists it by its first and last characters only, with who created it.
  await page.goto(projectUrl);
  const listed = await page.textContent('main');
  t.notOk(listed!.includes(key), 'the key is not shown again');
  t.ok(listed!.includes(`${key.slice(0, 7)}…${key.slice(-4)}`), 'its first and last characters are');
  t.match(await page.textContent('#active-keys'), `by ${OWNER}`, 'created by');
  t.match(await page.textContent('#key-count'), /1 of 25\s+active keys/);

  // Revoke with a confirmation: the API answers 401.
  await page.getByRole('link', { name: /^Revoke CI/ }).click();
  await page.getByRole('heading', { name: 'Revoke this key?' }).waitFor();
  await check('key-revoke');
  await page.getByRole('button', { name: 'Revoke key' }).click();
  await page.getByText('The key is revoked').waitFor();
  t.equal((await story.api(key, '/v1/ip/104.16.132.229')).status, 401, 'the revoked key is refused');

  // Step-up by an e-mailed code once the sign-in is older than ten minutes.
  await story.ageSession();
  await page.getByRole('link', { name: 'Create a key' }).click();
  await page.getByRole('heading', { name: 'Confirm it is you' }).waitFor();
  const beforeCode = server.sink.mails.length;
  await page.getByRole('button', { name: `E-mail a code to ${OWNER}` }).click();
  const codeMail = await server.sink.next(OWNER, beforeCode);
  const code = /\b(\d{8})\b/.exec(codeMail.text)![1]!;
  t.notMatch(codeMail.subject, /\d{4}/, 'the e-mailed code is not in the subject line');
  await page.getByLabel('Code from the e-mail').waitFor();
  await check('step-up-email');
  await page.getByLabel('Code from the e-mail').fill(code);
  await page.getByRole('button', { name: 'Confirm' }).click();
  await page.getByRole('heading', { name: 'Create an API key' }).waitFor();
  await page.getByLabel('Label').fill('backend');
  await page.getByRole('button', { name: 'Create key' }).click();
  const key2 = (await page.textContent('#new-key'))!.trim();
  t.equal((await story.api(key2, '/v1/ping')).status, 200, 'the key created after the e-mailed code works');

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
  await story.ageSession();
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
  t.equal((await story.api(key3, '/v1/ping')).status, 200, 'the key created after the TOTP step-up works');

  // A project cap: the sixth counted request of the month is the last; 100% warns.
  await page.goto(projectUrl);
  // Counted so far: 1 (first key) + 1 (key2 ping) + 1 (key3 ping) = 3.
  await page.getByLabel("Requests per month for this project's keys").fill('5');
  await page.getByRole('button', { name: 'Save cap' }).click();
  await page.getByText('The monthly cap is saved.').waitFor();
  t.equal((await story.api(key2, '/v1/ping')).status, 200);
  t.equal((await story.api(key3, '/v1/ping')).status, 200);
  const capped = await story.api(key3, '/v1/ping');
  t.equal(capped.status, 402);
  t.equal(capped.body.error, 'project_cap_exceeded');

  // Usage: the counts reach the page (the usage flush writes them every 50 ms here).
  await new Promise((r) => setTimeout(r, 300));
  await page.goto(projectUrl);
  const usageText = await page.textContent('main');
  t.match(usageText, /Project cap: 5 of 5 requests \(100%\) Used up: further requests are refused/);
  t.equal(
    await page.locator('.meter-row.full .meter-bar.warn').count(),
    1,
    'the cap at 100% is drawn in the warning colour',
  );
  t.match(usageText, /Workspace quota: 5 of 10,000 requests \(0%\)(?! Nearly| Used)/);
  t.match(await page.textContent('svg.chart title'), /5 requests in \d{4}-\d{2}/, 'the chart counts them');

  // The keys table: active first, revoked folded away with the time they ended.
  const active = await page.locator('#active-keys tbody tr td:first-child').allTextContents();
  t.same(active, ['worker', 'backend'], 'active keys, newest first');
  t.match(await page.textContent('#key-count'), /2 of 25\s+active keys/);
  t.equal(await page.locator('details.ended').getAttribute('open'), null, 'revoked keys are folded away');
  t.match(await page.textContent('details.ended summary'), '1 revoked or expired key');
  await page.locator('details.ended summary').click();
  const ended = await page.textContent('#ended-keys tbody tr');
  t.match(
    ended,
    /^CI.*by owner@example\.test.*revoked \d{4}-\d{2}-\d{2} \d{2}:\d{2} UTC/,
    'with its revoked time',
  );
  await check('project');
  await page.setViewportSize({ width: 390, height: 780 });
  const revoke = await page.getByRole('link', { name: /^Revoke worker/ }).boundingBox();
  t.ok(revoke !== null && revoke.x >= 0 && revoke.x + revoke.width <= 390, 'Revoke is on screen at 390 px');
  await page.setViewportSize({ width: 1280, height: 800 });
  const heights = [];
  for (const date of await page.locator('#active-keys .date').all())
    heights.push((await date.boundingBox())!.height);
  t.equal(heights.length, 6, 'three dates of two keys');
  t.ok(Math.max(...heights) < 30, `no date wraps at 1280 px (heights ${heights.join(', ')})`);
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

  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
  t.equal(story.checked.length, 17, 'every page was checked');
});
