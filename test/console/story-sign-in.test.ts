/**
 * Sign-in in headless Chromium: two-factor sign-in asks for the authenticator code (or a recovery
 * code) after the e-mailed link, and the session it waits with opens no page and creates no key;
 * the authenticator set-up survives a wrong code (same secret, the code asked for again beside its
 * field); the recovery codes can be copied and downloaded and are shown once; a used or unknown link
 * says so before any button; `?next=` survives the link and the code; the console answers its
 * forms on every loopback name (localhost, 127.0.0.1, [::1]) when CONSOLE_URL is a loopback one.
 */
import fs from 'node:fs';
import t from 'tap';
import { generate } from 'otplib';
import type { Test } from 'tap';
import { linkIn } from '../helpers/console.js';
import { startStory, type Story } from '../helpers/console-story.js';
import { recoveryHash } from '../../console/second-factor.js';

const OWNER = 'owner@example.test';

t.setTimeout(600_000);

/** An invited owner of a workspace with one project, in a story of its own. */
async function ownerStory(t: Test) {
  const story = await startStory(t);
  const { server, context } = story;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: server.console });
  await server.store.inviteUser(OWNER);
  const user = (await server.store.findUserByEmail(OWNER))!;
  const ws = await server.store.createWorkspace({ name: 'Acme' });
  await server.store.addMember(ws.id, OWNER, 'owner');
  const prj = await server.store.createProject({ workspaceId: ws.id, name: 'Website' });
  return { story, user, ws, projectPath: `/w/${ws.id}/p/${prj.id}` };
}

/** Turns two-factor sign-in on in the store (as the set-up does): the secret and ten recovery codes. */
async function enrol(story: Story, userId: string, secret: string, codes: string[]) {
  await story.server.store.setTotp(userId, secret, new Date());
  await story.server.store.replaceRecoveryCodes(
    userId,
    codes.map((c) => recoveryHash(userId, c)),
  );
}

t.test('two-factor sign-in asks for the authenticator code after the link', async (t) => {
  const { story, user, ws, projectPath } = await ownerStory(t);
  const { server, page, check } = story;
  const secret = 'JBSWY3DPEHPK3PXPJBSWY3DPEHPK3PXP';
  const codes = Array.from({ length: 10 }, (_, i) => `abcde-fgh${String(i).padStart(2, '2')}`);
  await enrol(story, user.id, secret, codes);

  await page.goto(server.console + projectPath);
  await story.signIn(OWNER, projectPath);
  t.match(page.url(), /\/sign-in\/code\?next=/, 'the link asks for the authenticator code');
  await page.getByRole('heading', { name: 'Enter your authenticator code' }).waitFor();
  await check('sign-in-code');
  await page.goto(`${server.console}/account`);
  await page.getByRole('heading', { name: 'Enter your authenticator code' }).waitFor();
  t.match(page.url(), /\/sign-in\/code\?next=%2Faccount/, 'no page opens before the code');
  const keysBefore = (await server.store.listKeys({ workspaceId: ws.id })).length;
  const forged = await page.evaluate(
    async ([url, csrf]) =>
      (
        await fetch(url!, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: new URLSearchParams({ _csrf: csrf!, label: 'sneaky' }).toString(),
          redirect: 'manual',
        })
      ).status,
    [`${projectPath}/keys`, (await page.locator('input[name="_csrf"]').first().getAttribute('value'))!],
  );
  t.equal(forged, 403, 'nor does a key creation');
  t.equal((await server.store.listKeys({ workspaceId: ws.id })).length, keysBefore, 'no key was created');
  await page.getByLabel('Authenticator code').fill('123456');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.locator('#e-code').waitFor();
  t.match(
    await page.textContent('#e-code'),
    /That code is not right.*4 tries left/,
    'a wrong code, in place',
  );
  await page.getByLabel('Authenticator code').fill(await generate({ secret }));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Account' }).waitFor();
  t.pass('the authenticator code completes the sign-in, to the page asked for');
  // The sign-in is fresh: a key needs no further code for ten minutes (the step-up rule as before).
  await page.goto(`${server.console}${projectPath}/keys/new`);
  await page.getByRole('heading', { name: 'Create an API key' }).waitFor();
  t.pass('a fresh two-factor sign-in creates keys without a step-up');

  // A recovery code stands in for the authenticator at sign-in, once.
  await page.getByRole('button', { name: /Sign out/ }).click();
  await page.getByRole('heading', { name: 'Signed out' }).waitFor();
  await story.signIn(OWNER);
  await page.getByLabel('Authenticator code').fill(codes[3]!);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
  t.pass('a recovery code signs in');
  t.equal(await server.store.countRecoveryCodes(user.id), 9, 'and is used up');

  // A sign-in waiting for its code can be cancelled: the waiting session ends.
  await page.getByRole('button', { name: /Sign out/ }).click();
  await page.getByRole('heading', { name: 'Signed out' }).waitFor();
  await story.signIn(OWNER);
  await page.getByRole('button', { name: 'Cancel this sign-in' }).click();
  await page.getByRole('heading', { name: 'Signed out' }).waitFor();
  await page.goto(`${server.console}/sign-in/code`);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.pass('a cancelled sign-in no longer waits for a code');
  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
});

t.test('the authenticator set-up survives a wrong code; recovery codes: copy, download, once', async (t) => {
  const { story } = await ownerStory(t);
  const { server, page, check } = story;
  await story.signIn(OWNER);
  await page.goto(`${server.console}/account`);
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  await page.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
  const secret = (await page.textContent('#totp-secret'))!.trim();
  await page.getByLabel('Code from the app').fill('000000');
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
  t.equal(
    (await page.textContent('#totp-secret'))!.trim(),
    secret,
    'a wrong code keeps the set-up and its secret',
  );
  t.match(await page.textContent('#e-code'), /That code is not right/, 'the problem is beside the field');
  t.equal(await page.getByLabel('Code from the app').getAttribute('aria-invalid'), 'true');
  await page.goto(`${server.console}/account`);
  await page.getByRole('button', { name: 'Set up an authenticator app' }).click();
  await page.getByRole('heading', { name: 'Set up an authenticator app' }).waitFor();
  t.equal(
    (await page.textContent('#totp-secret'))!.trim(),
    secret,
    'starting again keeps the secret the app has',
  );
  await page.getByLabel('Code from the app').fill(await generate({ secret }));
  await page.getByRole('button', { name: 'Turn on' }).click();
  await page.getByRole('heading', { name: 'Two-factor sign-in is on' }).waitFor();

  const codes = (await page.locator('#recovery-codes li').allTextContents()).map((c) => c.trim());
  t.equal(codes.length, 10, 'ten recovery codes');
  await page.getByRole('button', { name: 'Copy the codes' }).click();
  await page.getByRole('button', { name: 'Copied' }).waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), codes.join('\n'), 'copied, one a line');
  const [download] = await Promise.all([
    page.waitForEvent('download'),
    page.getByRole('link', { name: 'Download as a text file' }).click(),
  ]);
  t.equal(download.suggestedFilename(), 'ipscope-recovery-codes.txt');
  const file = fs.readFileSync((await download.path())!, 'utf8');
  t.same(file.trim().split('\n').slice(-10), codes, 'the download holds the ten codes');
  await check('totp-recovery-codes', { dark: true });
  await page.reload();
  await page.getByRole('heading', { name: 'Recovery codes are shown once' }).waitFor();
  t.notOk((await page.content()).includes(codes[0]!), 'a reload does not show them again');
  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
});

t.test('links that no longer work say so at once; ?next= survives the sign-in', async (t) => {
  const { story, projectPath } = await ownerStory(t);
  const { server, page } = story;
  await page.goto(server.console + projectPath);
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.match(page.url(), `/sign-in?next=${encodeURIComponent(projectPath)}`);
  const firstLink = await story.signIn(OWNER, projectPath);
  await page.getByRole('heading', { name: 'Website' }).waitFor();
  t.equal(new URL(page.url()).pathname, projectPath, 'after sign-in: the page asked for (?next= kept)');

  await page.goto(firstLink);
  await page.getByRole('heading', { name: 'This link no longer works' }).waitFor();
  t.equal(
    await page.getByRole('button', { name: 'Sign in' }).count(),
    0,
    'a used link shows no Sign in button',
  );
  await page.goto(`${server.console}/sign-in/link?token=${'x'.repeat(43)}`);
  await page.getByRole('heading', { name: 'This link no longer works' }).waitFor();
  t.equal(await page.getByRole('button', { name: 'Sign in' }).count(), 0, 'nor does an unknown one');
});

t.test('a loopback CONSOLE_URL answers its forms on every loopback name', async (t) => {
  const { story } = await ownerStory(t);
  const { server, page } = story;
  const port = new URL(server.console).port;
  for (const host of ['127.0.0.1', '[::1]']) {
    const origin = `http://${host}:${port}`;
    await page.goto(`${origin}/sign-in`);
    const before = server.sink.mails.length;
    await page.getByLabel('E-mail address').fill(OWNER);
    await page.getByRole('button', { name: 'E-mail me a sign-in link' }).click();
    await page.getByRole('heading', { name: 'Check your e-mail' }).waitFor();
    const link = linkIn(await server.sink.next(OWNER, before));
    await page.goto(link.replace(server.console, origin));
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
    await page.getByLabel('Name').fill(`On ${host}`);
    await page.getByRole('button', { name: 'Create workspace' }).click();
    await page.getByRole('heading', { name: `On ${host}` }).waitFor();
    t.pass(`the console at ${origin} accepts its own forms`);
  }
  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
});
