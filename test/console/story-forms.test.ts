/**
 * Forms in headless Chromium: creating a key follows post/redirect/get (the key shown once: a
 * reload neither creates nor shows it again, Back leads to the form); a form that does not pass is
 * shown again in place, its values kept and its problem beside its field (a bad name, a bad label,
 * a past expiry, a bad cap, a duplicate invite), never a "Check the form" page of its own; the
 * 25-key limit shows before the form is filled (a warning from 23, no form at 25) and, reached
 * between opening the form and sending it, is said on the key page; destructive actions ask first
 * (removing a member, signing out everywhere); a cap at 90% and more warns in colour and words.
 */
import t, { type Test } from 'tap';
import { problemOf, startStory } from '../helpers/console-story.js';

const OWNER = 'owner@example.test';

t.setTimeout(600_000);

/** A signed-in owner of the workspace Acme with the project Website, in a story of its own. */
async function ownerStory(t: Test) {
  const story = await startStory(t);
  const { server, page } = story;
  await server.store.inviteUser(OWNER);
  const ws = await server.store.createWorkspace({ name: 'Acme' });
  await server.store.addMember(ws.id, OWNER, 'owner');
  const prj = await server.store.createProject({ workspaceId: ws.id, name: 'Website' });
  await story.signIn(OWNER);
  await page.getByRole('heading', { name: 'Workspaces' }).waitFor();
  return {
    story,
    ws: ws.id,
    prj: prj.id,
    workspacePath: `/w/${ws.id}`,
    projectPath: `/w/${ws.id}/p/${prj.id}`,
  };
}

t.test('post/redirect/get: a new key is shown once, a reload creates nothing', async (t) => {
  const { story, ws, projectPath } = await ownerStory(t);
  const { server, page } = story;
  const keyCount = async () => (await server.store.listKeys({ workspaceId: ws })).length;
  await page.goto(`${server.console}${projectPath}/keys/new`);
  const newKeyUrl = page.url();
  await page.getByLabel('Label').fill('CI');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('heading', { name: 'Your new API key' }).waitFor();
  const key = (await page.textContent('#new-key'))!.trim();
  t.match(page.url(), /\/keys\/key_[0-9a-z]{16}\/created$/, 'the key is shown after a redirect (PRG)');
  t.equal(await keyCount(), 1);
  await page.reload();
  await page.getByRole('heading', { name: 'This key was shown once' }).waitFor();
  t.equal(await keyCount(), 1, 'a reload creates no second key');
  t.notOk((await page.content()).includes(key), 'and does not show the key again');
  await page.goBack();
  await page.getByRole('heading', { name: 'Create an API key' }).waitFor();
  t.equal(page.url(), newKeyUrl, 'Back leads to the form, not to a cache-miss page');
  t.equal(await keyCount(), 1, 'and creates nothing');
  t.equal((await story.api(key, '/v1/ping')).status, 200, 'the key works');
  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
});

t.test('problems in place, beside their fields, values kept', async (t) => {
  const { story, workspacePath, projectPath } = await ownerStory(t);
  const { server, page, check } = story;

  // A bad workspace name: the same page, the problem beside the field, the value kept.
  await page.getByLabel('Name').fill('   ');
  await page.getByRole('button', { name: 'Create workspace' }).click();
  await page.locator('#e-name').waitFor();
  t.equal(await page.textContent('h1'), 'Workspaces', 'the form is shown again in place');
  t.equal(await problemOf(t, page, 'name'), 'A workspace name has 1 to 100 characters.');
  t.match(await page.textContent('.notice.error'), 'Check the form: one problem, marked below.');
  t.notMatch(await page.textContent('main'), /Back to your workspaces/, 'no dead-end page');

  // A duplicate project name.
  await page.goto(server.console + workspacePath);
  await page.getByLabel('Name').fill('Website');
  await page.getByRole('button', { name: 'Create project' }).click();
  await page.locator('#e-name').waitFor();
  t.equal(await problemOf(t, page, 'name'), 'There is a project named "Website" already.');
  t.equal(await page.getByLabel('Name').inputValue(), 'Website', 'the value is kept');

  // The key form: a missing label and a past expiry, both beside their fields, values kept.
  await page.goto(`${server.console}${projectPath}/keys/new`);
  await page.getByLabel('Expires on (optional)').fill('2020-01-31');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#e-expires').waitFor();
  t.equal(await page.textContent('h1'), 'Create an API key', 'the key form is shown again in place');
  t.equal(await problemOf(t, page, 'label'), 'A label has 1 to 100 characters.');
  t.equal(
    await problemOf(t, page, 'expires'),
    'The expiry is a future date like 2027-01-31, or empty for never.',
  );
  t.equal(await page.getByLabel('Expires on (optional)').inputValue(), '2020-01-31', 'the expiry is kept');
  t.match(await page.textContent('.notice.error'), 'Check the form: 2 problems, marked below.');
  await check('key-new-problems');
  await page.getByLabel('Label').fill('Playground');
  await page.getByLabel('Expires on (optional)').fill('');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.locator('#e-label').waitFor();
  t.match(await problemOf(t, page, 'label'), /kept for the playground's key/);
  t.equal(await page.getByLabel('Label').inputValue(), 'Playground');

  // A bad cap.
  await page.goto(server.console + projectPath);
  await page.getByLabel("Requests per month for this project's keys").fill('lots');
  await page.getByRole('button', { name: 'Save cap' }).click();
  await page.locator('#e-cap').waitFor();
  t.equal(
    await problemOf(t, page, 'cap'),
    'A cap is a whole number of requests, e.g. 5000, or empty for none.',
  );
  t.equal(await page.getByLabel("Requests per month for this project's keys").inputValue(), 'lots');

  // A duplicate invite.
  await page.goto(`${server.console}${workspacePath}/members`);
  await page.getByLabel('E-mail address').fill(OWNER.toUpperCase());
  await page.getByRole('button', { name: 'Invite' }).click();
  await page.locator('#e-email').waitFor();
  t.equal(
    await problemOf(t, page, 'email'),
    `${OWNER} is already a member: change their role above instead.`,
  );
  t.equal(await page.getByLabel('E-mail address').inputValue(), OWNER.toUpperCase());
  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
});

t.test('the 25-key limit shows before the form is filled', async (t) => {
  const { story, prj, projectPath } = await ownerStory(t);
  const { server, page } = story;
  await page.goto(`${server.console}${projectPath}/keys/new`);
  t.match(await page.textContent('#key-count'), /0 of 25\s+active keys in this workspace/);
  t.match(await page.textContent('#plan-limits'), /Free\): 60 requests a minute and 10,000 a month/);
  for (let i = 0; i < 23; i++) await server.store.createKey({ projectId: prj, label: `bulk ${i}` });
  await page.goto(server.console + projectPath);
  // Many keys: a filter (where scripts run) narrows the table.
  await page.getByLabel('Filter the keys').fill('bulk 1');
  const shown = await page.locator('#active-keys tbody tr:visible td:first-child').allTextContents();
  t.same(
    shown.map((s) => s.trim()).sort(),
    ['bulk 1', ...Array.from({ length: 10 }, (_, i) => `bulk 1${i}`)],
    'the filter keeps the keys whose row has the text',
  );
  t.match(
    await page.textContent('#key-count'),
    /23 of 25\s+active keys in this workspace: 2 more can be created\./,
  );
  t.equal(await page.locator('#key-count.warn').count(), 1, 'in the warning colour');
  await page.goto(`${server.console}${projectPath}/keys/new`);
  t.match(await page.textContent('#key-count'), /23 of 25/, 'the form says so before it is filled');
  await page.getByLabel('Label').fill('twenty-four');
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByRole('heading', { name: 'Your new API key' }).waitFor();
  // The form is opened at 24; another key (another owner, another tab) is created before it is sent.
  await page.goto(`${server.console}${projectPath}/keys/new`);
  await page.getByLabel('Label').fill('one too many');
  await server.store.createKey({ projectId: prj, label: 'elsewhere' });
  await page.getByRole('button', { name: 'Create key' }).click();
  await page.getByText('The workspace has 25 active keys, the most allowed: revoke one first.').waitFor();
  t.equal(await page.textContent('h1'), 'Create an API key', 'the limit is said in place, on the key page');
  t.match(await page.textContent('#key-count'), /25 of 25/);
  await page.goto(server.console + projectPath);
  t.match(await page.textContent('#key-count'), /25 of 25\s+active keys in this workspace: the most allowed/);
  t.equal(await page.getByRole('link', { name: 'Create a key' }).count(), 0, 'no Create a key at the limit');
  await page.goto(`${server.console}${projectPath}/keys/new`);
  t.equal(await page.getByRole('button', { name: 'Create key' }).count(), 0, 'and no key form');
  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
});

t.test('confirmations for destructive actions; a cap near its end warns', async (t) => {
  const { story, ws, prj, workspacePath, projectPath } = await ownerStory(t);
  const { server, page, check } = story;

  await page.goto(server.console + projectPath);
  await page.getByLabel("Requests per month for this project's keys").fill('10');
  await page.getByRole('button', { name: 'Save cap' }).click();
  await page.getByText('The monthly cap is saved.').waitFor();
  const metered = await server.store.createKey({ projectId: prj, label: 'metered' });
  for (let i = 0; i < 9; i++) t.equal((await story.api(metered.key, '/v1/ping')).status, 200);
  await new Promise((r) => setTimeout(r, 300));
  await page.goto(server.console + projectPath);
  t.match(
    await page.textContent('main'),
    /Project cap: 9 of 10 requests \(90%\) Nearly used up: 1 requests left this month\./,
    'a cap at 90% says it is nearly used up',
  );
  t.equal(await page.locator('.meter-row.near .meter-bar.warn').count(), 1, 'in the warning colour');
  await check('project-near-cap', { dark: true });

  // Removing a member asks first; Cancel changes nothing.
  await server.store.addMember(ws, 'colleague@example.test', 'member');
  await page.goto(`${server.console}${workspacePath}/members`);
  await page.getByRole('link', { name: 'Remove colleague@example.test' }).click();
  await page.getByRole('heading', { name: 'Remove this member?' }).waitFor();
  await check('member-remove');
  await page.getByRole('link', { name: 'Cancel' }).click();
  await page.getByRole('heading', { name: 'Members' }).waitFor();
  t.equal((await server.store.listMembers(ws)).length, 2, 'Cancel removes nobody');
  await page.getByRole('link', { name: 'Remove colleague@example.test' }).click();
  await page.getByRole('button', { name: 'Remove colleague@example.test' }).click();
  await page.getByText('Member removed.').waitFor();
  t.equal((await server.store.listMembers(ws)).length, 1, 'the confirmed removal removes them');

  // Signing out everywhere asks first.
  await page.goto(`${server.console}/account`);
  await page.getByRole('link', { name: 'Sign out on every device…' }).click();
  await page.getByRole('heading', { name: 'Sign out on every device?' }).waitFor();
  await check('sign-out-everywhere');
  await page.getByRole('link', { name: 'Cancel' }).click();
  await page.getByRole('heading', { name: 'Account' }).waitFor();
  t.pass('Cancel keeps the sessions');
  await page.getByRole('link', { name: 'Sign out on every device…' }).click();
  await page.getByRole('button', { name: 'Sign out everywhere' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  t.pass('the confirmed sign-out ends the sessions');
  t.same(story.cspViolations, [], 'no Content-Security-Policy violation on any page');
});
